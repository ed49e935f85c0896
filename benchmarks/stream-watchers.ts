/**
 * The watchers of `benchmark:stream` (benchmarks/stream.ts), in a process of their own, as
 * `follow` processes or a watching service would be: apart from the scripted model server and the
 * client that starts the runs, so their work does not hold up the model server's chunks.
 *
 * Reads commands from stdin, one JSON object a line: `{"workflowId": "...", "direct": true}` starts
 * watching that run through `watchRunText` (src/client/live-text.ts, the reader `follow` uses);
 * with `"historyOnly": true`, only long-polling its history as that reader does.
 * Writes one JSON line per run when its text ends: the chunk-to-screen latencies (now − the stamp the
 * server put in each chunk), describe requests and history long polls it made, bytes read, seconds.
 * Prints `ready` once connected. `TEMPORAL_ADDRESS` is the server; `STREAM_HISTORY_PAUSE_MS`, if set,
 * the iterator's `historyPollPauseMs` (its default otherwise).
 */
import { Client, Connection } from '@temporalio/client';
import { createInterface } from 'node:readline';
import { watchRunText, type RunDescriber } from '../src/client/live-text';
import { runHistory } from '../src/client/run-history';
import { encodeLiveTextLine } from '../src/domain/live-text';

/** What one watcher saw of one run. */
export interface Watched {
  workflowId: string;
  latencies: number[];
  describes: number;
  /** History long polls (each outstanding until events come). */
  historyPolls: number;
  bytes: number;
  seconds: number;
}

/** Watches one run through the client reader, counting its describe requests and history polls. */
async function watch(client: Client, workflowId: string, direct: boolean, historyOnly: boolean): Promise<Watched> {
  let describes = 0;
  let historyPolls = 0;
  const counting: RunDescriber = {
    options: { namespace: client.options.namespace },
    workflowService: new Proxy(client.workflowService, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        if (name !== 'describeWorkflowExecution' && name !== 'getWorkflowExecutionHistory') return value;
        return (...args: unknown[]) => {
          if (name === 'describeWorkflowExecution') describes += 1;
          else historyPolls += 1;
          return (value as (...parameters: unknown[]) => unknown).apply(target, args);
        };
      },
    }),
  };
  const latencies: number[] = [];
  let bytes = 0;
  const started = performance.now();
  const pause = process.env.STREAM_HISTORY_PAUSE_MS;
  if (historyOnly) {
    // Only the history long poll the iterator keeps (same pause): no describes, no live text.
    for await (const event of runHistory(counting, workflowId, undefined, {
      pauseAfterEventsMs: pause ? Number(pause) : 250,
    }))
      void event;
    return { workflowId, latencies, describes, historyPolls, bytes, seconds: (performance.now() - started) / 1000 };
  }
  for await (const chunk of watchRunText(counting, workflowId, {
    direct,
    ...(pause ? { historyPollPauseMs: Number(pause) } : {}),
  })) {
    const now = Date.now();
    bytes += Buffer.byteLength(encodeLiveTextLine({ call: chunk.call, kind: 'content', text: chunk.text }));
    for (const match of chunk.text.matchAll(/⟨(\d{13})⟩/g)) latencies.push(now - Number(match[1]));
  }
  return { workflowId, latencies, describes, historyPolls, bytes, seconds: (performance.now() - started) / 1000 };
}

async function main(): Promise<void> {
  const connection = await Connection.connect({ address: process.env.TEMPORAL_ADDRESS ?? '127.0.0.1:7233' });
  const client = new Client({ connection });
  process.stdout.write('ready\n');
  const watching: Array<Promise<void>> = [];
  for await (const line of createInterface({ input: process.stdin })) {
    const { workflowId, direct, historyOnly } = JSON.parse(line) as {
      workflowId: string;
      direct: boolean;
      historyOnly?: boolean;
    };
    watching.push(
      watch(client, workflowId, direct, historyOnly === true).then(
        (watched) => void process.stdout.write(`${JSON.stringify(watched)}\n`),
        (error: unknown) => void process.stdout.write(`${JSON.stringify({ workflowId, error: String(error) })}\n`),
      ),
    );
  }
  await Promise.all(watching);
  await connection.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
