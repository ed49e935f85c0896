/**
 * Live text (issue 32): how long a model call's text takes from the model server to a watcher,
 * and what watching costs. A dev server, one real worker process (its live text server on
 * loopback, as by default) and the scripted model server, whose reply streams `CHUNKS` chunks
 * `CHUNK_MS` apart, each stamped with the time the server sent it. Each watcher reads the run
 * through `watchRunText` (src/client/live-text.ts, the reader `react-agent follow` uses) and
 * takes, for every stamp it reads, now − stamp: chunk-to-screen latency.
 *
 * Rounds: 1 run with a watcher reading the heartbeat details only (the fallback, the baseline),
 * 1 run with a watcher reading directly, then `RUNS` concurrent runs without watchers and with
 * one watcher each (directly), alternating, `REPEAT` times after a warm-up round: latency p50/p95, the runs' durations with and without watchers,
 * describe requests per second per watcher, and the bytes each watcher read.
 *
 * `npm run benchmark:stream -- [--runs 100] [--chunks 60] [--chunk-ms 50] [--repeat 2]`
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { SEND_TIME_PLACEHOLDER, type Script } from '../test/fakes/scripted-model-server';
import { startBenchmarkStack } from './benchmark-stack';
import type { Watched } from './stream-watchers';
import { cpuBetween, cpuSnapshot } from './process-cpu';
import { argument, describeLoad, percentile, startWorkerProcess, workerEnvironment } from './fleet-helpers';

const RUNS = Number(argument('runs', '100'));
const CHUNKS = Number(argument('chunks', '60'));
const CHUNK_MS = Number(argument('chunk-ms', '50'));
const REPEAT = Number(argument('repeat', '2'));

/** Segments of one length, so the server's even split sends each stamp whole in one chunk. */
const SEGMENT = 40;
const content = [
  '<think>'.padEnd(SEGMENT),
  ...Array.from({ length: CHUNKS - 2 }, (_, index) => ` ⟨${SEND_TIME_PLACEHOLDER}⟩ piece ${index}`.padEnd(SEGMENT)),
  '</think><answer>streamed</answer>'.padEnd(SEGMENT),
].join('');

const script: Script = () => ({ content, chunks: CHUNKS, delayBetweenChunksMs: CHUNK_MS, stampSendTime: true });

const ms = (values: number[]) =>
  values.length === 0
    ? `no chunk reached the watcher before the call completed (${CHUNKS - 2} stamped chunks sent)`
    : `p50 ${percentile(values, 0.5).toFixed(0)} ms, p95 ${percentile(values, 0.95).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms (${values.length} chunks)`;

async function main(): Promise<void> {
  console.log(
    `benchmark:stream — replies of ${CHUNKS} chunks ${CHUNK_MS} ms apart (${((CHUNKS * CHUNK_MS) / 1000).toFixed(1)} s); ${describeLoad()}`,
  );
  const stack = await startBenchmarkStack({ name: 'stream', script });
  try {
    const taskQueue = `benchmark-stream-${process.pid}`;
    const worker = await startWorkerProcess({
      ...(await workerEnvironment({
        temporalAddress: stack.server.address,
        modelBaseUrl: stack.model.baseUrl,
        directory: stack.directory,
        taskQueue,
      })),
      REACT_AGENT_MAX_CONCURRENT_ACTIVITIES: String(Math.max(20, RUNS * 2)),
      REACT_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS: '20',
    });
    // The watchers in a process of their own (benchmarks/stream-watchers.ts), with their own
    // connection, as `follow` processes or a watching service would be: apart from the scripted
    // model server in this process, whose chunks they would otherwise hold up.
    const watchers = spawn(process.execPath, ['--import', 'tsx', join(__dirname, 'stream-watchers.ts')], {
      env: { ...process.env, TEMPORAL_ADDRESS: stack.server.address },
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const results = new Map<string, (watched: Watched) => void>();
    const lines = createInterface({ input: watchers.stdout });
    await new Promise<void>((resolve, reject) => {
      watchers.once('exit', (code) => reject(new Error(`the watcher process exited (${code}) before it was ready`)));
      lines.on('line', (line) => {
        if (line === 'ready') return resolve();
        const watched = JSON.parse(line) as Watched & { error?: string };
        if (watched.error) throw new Error(`watching ${watched.workflowId}: ${watched.error}`);
        results.get(watched.workflowId)?.(watched);
      });
    });
    const watch = (workflowId: string, direct: boolean) =>
      new Promise<Watched>((resolve) => {
        results.set(workflowId, resolve);
        watchers.stdin.write(`${JSON.stringify({ workflowId, direct })}\n`);
      });
    let sequence = 0;
    /** Runs `count` runs at once, each watched (or not); their durations and what the watchers saw. */
    const groups = {
      ...(await stack.server.processGroups()),
      worker: [worker.pid],
      'this process (scripted model server, client)': [process.pid],
      watchers: [watchers.pid as number],
    };
    const round = async (count: number, watching: 'none' | 'direct' | 'heartbeat') => {
      const cpuBefore = cpuSnapshot(groups);
      const runs = await Promise.all(
        Array.from({ length: count }, async () => {
          const workflowId = `stream-benchmark-${watching}-${count}-${(sequence += 1)}-${Date.now()}`;
          const started = performance.now();
          const handle = await stack.client.workflow.start('researchAgent', {
            taskQueue,
            workflowId,
            args: [{ question: 'Stream, please.', limits: { maxModelCalls: 2 } }],
          });
          const watched = watching === 'none' ? undefined : watch(workflowId, watching === 'direct');
          const result = (await handle.result()) as { termination: string };
          const seconds = (performance.now() - started) / 1000;
          if (result.termination !== 'answer') throw new Error(`${workflowId}: ${JSON.stringify(result)}`);
          return { seconds, watched: await watched };
        }),
      );
      const watched = runs.flatMap((run) => (run.watched ? [run.watched] : []));
      const cpu = cpuBetween(cpuBefore, cpuSnapshot(groups));
      return {
        cpu: Object.entries(cpu)
          .map(([name, seconds]) => `${name} ${seconds.toFixed(1)}`)
          .join(', '),
        durations: runs.map((run) => run.seconds),
        latencies: watched.flatMap((one) => one.latencies),
        describesPerSecond: watched.map((one) => one.describes / one.seconds),
        historyPollsPerSecond: watched.map((one) => one.historyPolls / one.seconds),
        bytes: watched.map((one) => one.bytes),
      };
    };
    const mean = (values: number[]) => values.reduce((total, value) => total + value, 0) / values.length;

    await round(2, 'direct'); // warm-up
    const fallback = await round(1, 'heartbeat');
    console.log(`1 run, heartbeat details (the fallback, baseline): ${ms(fallback.latencies)}  (${describeLoad()})`);
    const single = await round(1, 'direct');
    console.log(`1 run, direct from the worker:                     ${ms(single.latencies)}  (${describeLoad()})`);
    console.log(
      `  per watcher: ${mean(single.describesPerSecond).toFixed(2)} describe requests/s and ${mean(single.historyPollsPerSecond).toFixed(2)} history long polls/s over the run, ${single.bytes[0]} bytes of live text for ${content.length} characters`,
    );
    // Rounds without and with watchers alternate (after a warm-up round of as many runs), so the
    // machine's drifting load falls on both alike.
    await round(RUNS, 'none');
    const unwatchedDurations: number[] = [];
    const watchedRounds: Array<Awaited<ReturnType<typeof round>>> = [];
    for (let repeat = 0; repeat < REPEAT; repeat += 1) {
      const unwatched = await round(RUNS, 'none');
      unwatchedDurations.push(...unwatched.durations);
      console.log(
        `${RUNS} runs at once, no watchers:                  run duration mean ${mean(unwatched.durations).toFixed(2)} s, p95 ${percentile(unwatched.durations, 0.95).toFixed(2)} s  (${describeLoad()}); CPU s: ${unwatched.cpu}`,
      );
      const watched = await round(RUNS, 'direct');
      watchedRounds.push(watched);
      console.log(`${RUNS} runs at once, a watcher each, direct:       ${ms(watched.latencies)}  (${describeLoad()})`);
      console.log(
        `  run duration mean ${mean(watched.durations).toFixed(2)} s, p95 ${percentile(watched.durations, 0.95).toFixed(2)} s; CPU s: ${watched.cpu}`,
      );
    }
    const watched = {
      latencies: watchedRounds.flatMap((one) => one.latencies),
      durations: watchedRounds.flatMap((one) => one.durations),
      describesPerSecond: watchedRounds.flatMap((one) => one.describesPerSecond),
      historyPollsPerSecond: watchedRounds.flatMap((one) => one.historyPollsPerSecond),
      bytes: watchedRounds.flatMap((one) => one.bytes),
    };
    console.log(`all ${REPEAT} rounds of ${RUNS} watched runs: ${ms(watched.latencies)}`);
    console.log(
      `  run duration mean ${mean(watched.durations).toFixed(2)} s with watchers, ${mean(unwatchedDurations).toFixed(2)} s without: ${(100 * (mean(watched.durations) / mean(unwatchedDurations) - 1)).toFixed(1)}%`,
    );
    console.log(
      `  per watcher: ${mean(watched.describesPerSecond).toFixed(2)} describe requests/s and ${mean(watched.historyPollsPerSecond).toFixed(2)} history long polls/s (all watchers: ${(mean(watched.describesPerSecond) * RUNS).toFixed(0)} and ${(mean(watched.historyPollsPerSecond) * RUNS).toFixed(0)}/s), ${mean(watched.bytes).toFixed(0)} bytes`,
    );
    await worker.stop();
    watchers.stdin.end();
    await new Promise((resolve) => watchers.once('exit', resolve));
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
