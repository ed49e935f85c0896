import assert from 'node:assert/strict';
import { afterAll, afterEach, beforeAll, describe, test } from '@jest/globals';
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { watchRunText, type RunDescriber } from '../../src/client/live-text';
import type { ScriptedReply } from '../fakes/scripted-model-server';
import { STREAM_LINE_PREFIX } from '../../src/cli/streamed-text';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { runId, Scenarios } from './support/scenarios';
import { waitForToolLog } from './support/tool-log';
import type { WorkerProcess } from './support/worker-process';

// Issue 32, bounded cost: once a watcher reads a run stream from a worker, the run's later calls
// there arrive pushed — no describe, no history read but one long poll that wakes at the run's
// close — and a call that lands on another worker (here: after the first one died) is found by
// describing the run, its text still on screen before it completes.

const EventType = temporal.api.enums.v1.EventType;
const CLOSE_EVENT = temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;
const scenarios = new Scenarios();
let environment: AgentEnvironment;
const workers: WorkerProcess[] = [];

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterEach(async () => {
  for (const worker of workers.splice(0)) await worker.stop().catch(() => undefined);
}, 60_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** A reply streamed in `chunks` pieces over about `seconds`. */
const slowly = (content: string, seconds: number, chunks = 30): ScriptedReply => ({
  content,
  chunks,
  delayBetweenChunksMs: Math.round((seconds * 1000) / chunks),
});

const lookup = (name: string) =>
  `<think>${name}: ${'I should look this up first. '.repeat(6)}</think>\n<tool_call>\n${JSON.stringify({ name: 'lookup', arguments: { query: name } })}\n</tool_call>`;

/** A client whose requests to Temporal are counted (method, time, and whether a history read asked only for the close event). */
function countingClient(client: Client) {
  const requests: Array<{ method: string; at: number; closeEventOnly: boolean }> = [];
  const workflowService = new Proxy(client.workflowService, {
    get(target, property, receiver) {
      const value: unknown = Reflect.get(target, property, receiver);
      if (typeof value !== 'function') return value;
      return (request: { historyEventFilterType?: number } | undefined, ...rest: unknown[]) => {
        requests.push({
          method: String(property),
          at: Date.now(),
          closeEventOnly: request?.historyEventFilterType === CLOSE_EVENT,
        });
        return (value as (...args: unknown[]) => unknown).call(target, request, ...rest);
      };
    },
  });
  const counting: RunDescriber = { workflowService, options: client.options };
  return { counting, requests };
}

/** When each model call (1, 2, …) completed, by the server's clock. */
async function modelCallsCompletedAt(workflowId: string): Promise<number[]> {
  const history = await environment.client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Set(
    (history.events ?? [])
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      .map((event) => String(event.eventId)),
  );
  return (history.events ?? [])
    .filter(
      (event) =>
        event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED &&
        scheduled.has(String(event.activityTaskCompletedEventAttributes?.scheduledEventId)),
    )
    .map((event) => Number(event.eventTime?.seconds) * 1000 + Math.floor((event.eventTime?.nanos ?? 0) / 1e6));
}

/** Watches the run to its end: when each call's first piece came, and the text of each. */
async function watch(client: RunDescriber, workflowId: string, options: Parameters<typeof watchRunText>[2] = {}) {
  const firstSeenAt = new Map<number, number>();
  const lastSeenAt = new Map<number, number>();
  const texts = new Map<number, string>();
  const sources: string[] = [];
  for await (const chunk of watchRunText(client, workflowId, {
    ...options,
    onSource: (source, detail) => sources.push(`${source} ${detail}`),
  })) {
    if (!firstSeenAt.has(chunk.call)) firstSeenAt.set(chunk.call, Date.now());
    lastSeenAt.set(chunk.call, Date.now());
    texts.set(chunk.call, (texts.get(chunk.call) ?? '') + chunk.text);
  }
  return { firstSeenAt, lastSeenAt, texts, sources };
}

describe('a run stream from the worker', () => {
  test('pushes each of a run’s calls before it completes, with no describe or history read between the first call and the run’s close', async () => {
    workers.push(await environment.startWorker());
    const id = scenarios.add(runId('run-stream-one-worker'), [
      slowly(lookup('First'), 2),
      slowly(lookup('Second'), 2),
      slowly(`<think>${'Now I can answer. '.repeat(8)}</think>\n<answer>Third answered.</answer>`, 2),
    ]);
    const { counting, requests } = countingClient(environment.client);
    await environment.startRun({ question: 'Three calls, slowly.' }, id);
    // `follow` reads the same run streams (its own describes are not counted here).
    const follower = CliProcess.start(['follow', id], { environment: environment.environment });
    // The defaults describe the run 1 s after a call ends when no next call showed up on the stream
    // (a call elsewhere) and every 10 s during a pushed call; set longer here so that any describe
    // between the calls is a failure of the push, not a gap of this loaded machine.
    const seen = await watch(counting, id, { runStreamQuietMs: 60_000, pushedCheckMs: 60_000 });
    const completedAt = await modelCallsCompletedAt(id);
    assert.equal(completedAt.length, 3);
    for (const call of [1, 2, 3]) {
      const first = seen.firstSeenAt.get(call);
      assert.ok(first !== undefined, `call ${call}'s text came: ${JSON.stringify([...seen.texts])}`);
      assert.ok(
        first < (completedAt[call - 1] as number),
        `call ${call}: first piece ${(completedAt[call - 1] as number) - first} ms before it completed`,
      );
    }
    assert.match(seen.texts.get(2) ?? '', /Second: I should look this up first/);
    assert.match(seen.texts.get(3) ?? '', /Third answered/);
    assert.deepEqual(
      [...new Set(seen.sources)].map((source) => source.split(' ')[0]),
      ['direct'],
      'from the worker, never the fallback',
    );
    // From the first call's first piece on: nothing but the close-event long poll.
    const from = seen.firstSeenAt.get(1) as number;
    const after = requests.filter((request) => request.at >= from);
    assert.deepEqual(
      after.filter((request) => request.method === 'describeWorkflowExecution'),
      [],
      `describes after the run stream opened: ${JSON.stringify(requests)}`,
    );
    const historyReads = after.filter((request) => request.method === 'getWorkflowExecutionHistory');
    assert.equal(historyReads.length, 1, `history reads after the first piece: ${JSON.stringify(requests)}`);
    assert.ok(historyReads[0]?.closeEventOnly, `history reads: ${JSON.stringify(requests)}`);
    // Before it, as without run streams: the history long-polled until the first call opened, and
    // the run described until its heartbeat's URLs came.
    assert.ok(requests.length < 20, `${requests.length} requests in all: ${JSON.stringify(requests)}`);
    try {
      assert.equal((await follower.exited).code, 0, follower.stderr);
      const printed = follower.stderr
        .split('\n')
        .filter((line) => line.startsWith(STREAM_LINE_PREFIX))
        .join('\n');
      for (const text of ['First: I should look', 'Second: I should look', 'Now I can answer'])
        assert.ok(printed.includes(text), `follow printed ${text}:\n${follower.stderr}`);
      assert.doesNotMatch(follower.stderr, /heartbeat details/);
    } finally {
      follower.kill('SIGKILL');
    }
  }, 120_000);

  test('a call that lands on another worker (the first died) is found by describing, its text before it completes', async () => {
    const first = await environment.startWorker();
    workers.push(first);
    const id = scenarios.add(runId('run-stream-two-workers'), [
      slowly(
        `<think>${'Wait first. '.repeat(10)}</think>\n<tool_call>\n${JSON.stringify({ name: 'wait', arguments: { seconds: 2 } })}\n</tool_call>`,
        2,
      ),
      slowly(`<think>${'Elsewhere now. '.repeat(20)}</think>\n<answer>Second worker answered.</answer>`, 4),
    ]);
    const { counting } = countingClient(environment.client);
    await environment.startRun({ question: 'Two calls, two workers.' }, id);
    const watching = watch(counting, id);
    // The first call streamed on the first worker; while the tool waits, that worker dies and another starts.
    await waitForToolLog(environment.toolLog, id, (entries) =>
      entries.some((entry) => entry.tool === 'wait' && entry.event === 'start'),
    );
    await first.crash();
    workers.push(await environment.startWorker());
    const seen = await watching;
    const completedAt = await modelCallsCompletedAt(id);
    assert.equal(completedAt.length, 2);
    const second = seen.firstSeenAt.get(2);
    assert.ok(second !== undefined, `the second call's text came: ${JSON.stringify([...seen.texts])}`);
    assert.ok(
      second < (completedAt[1] as number) - 1_000,
      `second call: first piece ${(completedAt[1] as number) - second} ms before it completed`,
    );
    assert.match(seen.texts.get(2) ?? '', /Second worker answered/);
    // Both workers' addresses were read from directly.
    const directs = new Set(seen.sources.filter((source) => source.startsWith('direct')));
    assert.equal(directs.size, 2, JSON.stringify(seen.sources));
  }, 120_000);
});
