import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { watchRunText, type RunDescriber } from '../../src/client/live-text';
import type { LiveTextChunk } from '../../src/domain/live-text';

// Issue 32: `watchRunText`'s two phases against a scripted Temporal and a scripted worker (no
// network): the history long-polled until the first call's run stream opens, then only the
// close-event poll while the stream pushes the run's next call; at a continue-as-new, the new
// run watched from the first phase again, with its own run stream.

const CLOSE_EVENT = temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT;
const hex = (digit: string, length: number) => digit.repeat(length);

/** A promise and its resolver. */
function later<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

const scheduled = (eventId: number, activityId: string) => ({
  eventId,
  activityTaskScheduledEventAttributes: { activityId, activityType: { name: 'callModel' } },
});

const pending = (activityId: string, url: string, runUrl: string) =>
  temporal.api.workflow.v1.PendingActivityInfo.fromObject({
    activityId,
    activityType: { name: 'callModel' },
    attempt: 1,
    heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload({ modelCall: 1, liveText: { url, runUrl } })] },
  });

describe('watchRunText with run streams', () => {
  test('reads the history until a run stream opens, then only the close event; follows a continue-as-new', async () => {
    const requests: string[] = [];
    // Each run's history: its full reads (answered in turn, the last left waiting) and its close.
    const full = { A: [later<unknown>(), later<unknown>()], B: [later<unknown>(), later<unknown>()] };
    const closed = { A: later<unknown>(), B: later<unknown>() };
    let fullReads = { A: 0, B: 0 };
    let pendingNow: temporal.api.workflow.v1.IPendingActivityInfo[] = [];
    const client: RunDescriber = {
      options: { namespace: 'default' },
      workflowService: {
        getWorkflowExecutionHistory: async (
          request: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryRequest,
        ) => {
          const run = (request.execution?.runId === 'B' ? 'B' : 'A') as 'A' | 'B';
          if (request.historyEventFilterType === CLOSE_EVENT) {
            requests.push(`close ${run}`);
            return closed[run].promise;
          }
          requests.push(`history ${run}`);
          const answer = full[run][fullReads[run]];
          fullReads = { ...fullReads, [run]: fullReads[run] + 1 };
          return answer ? answer.promise : new Promise(() => undefined);
        },
        describeWorkflowExecution: async () => {
          requests.push('describe');
          return { pendingActivities: pendingNow, workflowExecutionInfo: { execution: { runId: 'A' } } };
        },
      } as unknown as RunDescriber['workflowService'],
    };
    // The worker's run streams, written by the test.
    const streams = new Map<string, ReadableStreamDefaultController<Uint8Array>>();
    const opened = new Map<string, { promise: Promise<void>; resolve: () => void }>();
    const fakeFetch = (async (url: string) => {
      requests.push(`GET ${new URL(url).pathname.slice(0, 10)}`);
      const body = new ReadableStream<Uint8Array>({
        start: (controller) => {
          streams.set(url, controller);
          opened.get(url)?.resolve();
        },
      });
      return new Response(body, { status: 200 });
    }) as unknown as typeof fetch;
    const write = (url: string, line: object) =>
      streams.get(url)?.enqueue(new TextEncoder().encode(`${JSON.stringify(line)}\n`));

    const runA = { url: `http://w/calls/${hex('a', 32)}`, runUrl: `http://w/runs/${hex('a', 64)}` };
    const runB = { url: `http://w/calls/${hex('b', 32)}`, runUrl: `http://w/runs/${hex('b', 64)}` };
    for (const { runUrl } of [runA, runB]) {
      const { promise, resolve } = later<void>();
      opened.set(runUrl, { promise, resolve: () => resolve() });
    }
    const chunks: LiveTextChunk[] = [];
    const watching = (async () => {
      for await (const chunk of watchRunText(client, 'research-1', { fetch: fakeFetch })) chunks.push(chunk);
    })();
    const until = async (count: number) => {
      while (chunks.length < count) await new Promise((resolve) => setTimeout(resolve, 5));
    };

    // Run A: the history shows the first call; a describe finds its run stream.
    pendingNow = [pending('1', runA.url, runA.runUrl)];
    full.A[0]!.resolve({ history: { events: [scheduled(5, '1')] }, nextPageToken: Uint8Array.of(1) });
    await opened.get(runA.runUrl)!.promise;
    write(runA.runUrl, { activityId: '1', attempt: 1, call: 1, opened: true });
    write(runA.runUrl, { activityId: '1', attempt: 1, call: 1, kind: 'content', text: 'one' });
    await until(1);
    write(runA.runUrl, { activityId: '1', attempt: 1, end: 'completed' });
    // The outstanding history poll answers at the call's end; then only the close event is asked.
    full.A[1]!.resolve({
      history: { events: [{ eventId: 7, activityTaskCompletedEventAttributes: { scheduledEventId: 5 } }] },
      nextPageToken: Uint8Array.of(2),
    });
    while (!requests.includes('close A')) await new Promise((resolve) => setTimeout(resolve, 5));
    const beforeSecond = requests.length;
    // The run's second call on the same worker: pushed, nothing asked of Temporal.
    pendingNow = [];
    write(runA.runUrl, { activityId: '2', attempt: 1, call: 2, opened: true });
    write(runA.runUrl, { activityId: '2', attempt: 1, call: 2, kind: 'reasoning', text: 'two' });
    await until(2);
    write(runA.runUrl, { activityId: '2', attempt: 1, end: 'completed' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(requests.slice(beforeSecond), [], 'no request for a call the stream pushed');

    // Continue-as-new: run B is watched from its history again, with its own run stream.
    pendingNow = [pending('1', runB.url, runB.runUrl)];
    closed.A.resolve({
      history: { events: [{ eventId: 9, workflowExecutionContinuedAsNewEventAttributes: { newExecutionRunId: 'B' } }] },
    });
    full.B[0]!.resolve({ history: { events: [scheduled(5, '1')] }, nextPageToken: Uint8Array.of(1) });
    await opened.get(runB.runUrl)!.promise;
    write(runB.runUrl, { activityId: '1', attempt: 1, call: 1, opened: true });
    write(runB.runUrl, { activityId: '1', attempt: 1, call: 1, kind: 'content', text: 'three' });
    write(runB.runUrl, { activityId: '1', attempt: 1, end: 'completed' });
    await until(3);
    // Run B closes: its outstanding history poll answers with the close (no next page).
    full.B[1]!.resolve({ history: { events: [{ eventId: 7 }, { eventId: 8 }] } });
    closed.B.resolve({ history: { events: [{ eventId: 8 }] } });
    await watching;

    assert.deepEqual(
      chunks.map((chunk) => [chunk.call, chunk.kind, chunk.text]),
      [
        [1, 'content', 'one'],
        [2, 'reasoning', 'two'],
        [1, 'content', 'three'],
      ],
    );
    // Each run: its history read until its stream opened (once, or twice when the stream opened
    // after the pause that follows an answer), then only its close asked.
    for (const run of ['A', 'B']) {
      const reads = requests.flatMap((request, index) => (request === `history ${run}` ? [index] : []));
      assert.ok(reads.length >= 1 && reads.length <= 2, requests.join(', '));
      assert.ok(Math.max(...reads) < requests.indexOf(`close ${run}`), requests.join(', '));
    }
    assert.ok(requests.indexOf('close A') < requests.indexOf('history B'), requests.join(', '));
    assert.equal(requests.filter((request) => request.startsWith('GET /runs/')).length, 2, requests.join(', '));
  }, 15_000);
});
