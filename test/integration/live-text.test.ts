import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { temporal } from '@temporalio/proto';
import { STREAM_LINE_PREFIX } from '../../src/cli/streamed-text';
import { watchRunText } from '../../src/client/live-text';
import type { LiveTextChunk } from '../../src/domain/live-text';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import type { WorkerProcess } from './support/worker-process';
import { runId, Scenarios } from './support/scenarios';

// Issue 32: a model call's words on screen within a second — pushed by the worker that runs the
// call (its live text server), read by `react-agent follow` and by the TypeScript client — and,
// when the worker cannot be reached, still shown from the heartbeat details, follow saying which.

const EventType = temporal.api.enums.v1.EventType;
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** A reply that streams for about `seconds`: numbered sentences of reasoning, then a short answer. */
function slowReply(name: string, seconds: number) {
  const thought = Array.from(
    { length: 50 },
    (_, index) => `${name} sentence ${String(index + 1).padStart(2, '0')} streamed slowly.`,
  ).join(' ');
  const content = `<think>${thought}</think>\n<answer>${name} answered.</answer>`;
  const chunks = 50;
  return { content, reply: { content, chunks, delayBetweenChunksMs: Math.round((seconds * 1000) / chunks) } };
}

/** When the run's model call completed (the server's clock), or undefined while it runs. */
async function callCompletedAt(workflowId: string): Promise<number | undefined> {
  const history = await environment.client.workflow.getHandle(workflowId).fetchHistory();
  const scheduled = new Set(
    (history.events ?? [])
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
      .map((event) => String(event.eventId)),
  );
  const completed = (history.events ?? []).find(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED &&
      scheduled.has(String(event.activityTaskCompletedEventAttributes?.scheduledEventId)),
  );
  const time = completed?.eventTime;
  return time ? Number(time.seconds) * 1000 + Math.floor((time.nanos ?? 0) / 1e6) : undefined;
}

const streamedText = (stderr: string) =>
  stderr
    .split('\n')
    .filter((line) => line.startsWith(STREAM_LINE_PREFIX) && !line.startsWith(`${STREAM_LINE_PREFIX}… (`))
    .map((line) => line.slice(STREAM_LINE_PREFIX.length))
    .join('')
    .replace(/\s+/g, '');

describe('live text pushed by the worker', () => {
  let worker: WorkerProcess;
  beforeAll(async () => {
    worker = await environment.startWorker();
  }, 120_000);
  afterAll(async () => {
    await worker?.stop();
  }, 60_000);

  test('follow prints a 5 s call’s text directly from the worker, long before the call completes, all of it once', async () => {
    const { content, reply } = slowReply('Direct', 5);
    const id = scenarios.add(runId('live-text-follow'), [reply]);
    const handle = await environment.startRun({ question: 'Stream slowly.' }, id);
    const follower = CliProcess.start(['follow', id], { environment: environment.environment });
    try {
      await follower.waitForStderr(/live text: direct from worker 127\.0\.0\.1:\d+/, 60_000);
      await follower.waitForStderr(/┆ .*Direct sentence 0[1-9] streamed/, 60_000);
      const shownAt = Date.now();
      assert.equal(await callCompletedAt(id), undefined, 'the text is on screen while the call still streams');
      const exit = await follower.exited;
      assert.equal(exit.code, 0, follower.stderr);
      const completedAt = (await callCompletedAt(id)) as number;
      assert.ok(completedAt - shownAt > 1_500, `shown ${completedAt - shownAt} ms before the call completed`);
      // Pushed from the start of the call: the whole text, in order, nothing twice, no gap.
      assert.equal(streamedText(follower.stderr), content.replace(/\s+/g, ''), follower.stderr);
      assert.doesNotMatch(follower.stderr, /characters before|heartbeat details/);
      assert.match(follower.stdout, /Answer:\nDirect answered\./);
      await handle.result();
    } finally {
      follower.kill('SIGKILL');
    }
  }, 120_000);

  test('the TypeScript client’s iterator gets the call’s pieces, by kind, before the call completes, and ends with the run', async () => {
    const { reply } = slowReply('Client', 5);
    const id = scenarios.add(runId('live-text-client'), [reply]);
    await environment.startRun({ question: 'Stream slowly.' }, id);
    const chunks: LiveTextChunk[] = [];
    const sources: string[] = [];
    let completedWhenFirstSeen: number | undefined | null = null;
    for await (const chunk of watchRunText(environment.client, id, { onSource: (source) => sources.push(source) })) {
      if (!chunks.length) completedWhenFirstSeen = await callCompletedAt(id);
      chunks.push(chunk);
    }
    assert.equal(completedWhenFirstSeen, undefined, 'the first piece came while the call streamed');
    assert.deepEqual(sources, ['direct']);
    assert.ok(chunks.length > 10, `${chunks.length} pieces`);
    assert.ok(chunks.every((chunk) => chunk.call === 1));
    // The scripted server streams the <think> text as content; the client sees it as it came.
    assert.match(chunks.map((chunk) => chunk.text).join(''), /Client sentence 50 streamed slowly/);
    assert.ok(chunks.every((chunk) => chunk.kind === 'content' || chunk.kind === 'reasoning'));
  }, 120_000);

  test('a wrong token is refused at once by the real worker, which keeps serving', async () => {
    const match = /live text at (http:\/\/127\.0\.0\.1:\d+)/.exec(worker.log);
    assert.ok(match, worker.log);
    const started = performance.now();
    const response = await fetch(`${match[1]}/calls/${'f'.repeat(32)}`);
    assert.equal(response.status, 404);
    assert.ok(performance.now() - started < 1_000);
  });
});

describe('when the worker cannot be reached', () => {
  test('follow says it reads the heartbeat details, and still prints the text before the call completes', async () => {
    // The worker advertises an address nobody listens on, as a worker behind a firewall would.
    const worker = await environment.startWorker({ REACT_AGENT_LIVE_TEXT_URL: 'http://127.0.0.1:1' });
    try {
      const { content, reply } = slowReply('Fallback', 12);
      const id = scenarios.add(runId('live-text-fallback'), [reply]);
      await environment.startRun({ question: 'Stream slowly.' }, id);
      const follower = CliProcess.start(['follow', id], { environment: environment.environment });
      try {
        await follower.waitForStderr(
          /live text: heartbeat details, every few seconds; worker 127\.0\.0\.1:1 unreachable/,
          60_000,
        );
        await follower.waitForStderr(/┆ .*Fallback sentence \d\d streamed/, 60_000);
        assert.equal(await callCompletedAt(id), undefined, 'shown while the call streams');
        const exit = await follower.exited;
        assert.equal(exit.code, 0, follower.stderr);
        assert.ok(content.replace(/\s+/g, '').includes(streamedText(follower.stderr)), follower.stderr);
        assert.doesNotMatch(follower.stderr, /direct from worker/);
      } finally {
        follower.kill('SIGKILL');
      }
    } finally {
      await worker.stop();
    }
  }, 120_000);

  test('with the channel off, the worker says so and follow reads the heartbeat details', async () => {
    const worker = await environment.startWorker({ REACT_AGENT_LIVE_TEXT_LISTEN: 'off' });
    try {
      assert.match(worker.log, /live text off/);
      const { reply } = slowReply('Off', 10);
      const id = scenarios.add(runId('live-text-off'), [reply]);
      await environment.startRun({ question: 'Stream slowly.' }, id);
      const follower = CliProcess.start(['follow', id], { environment: environment.environment });
      try {
        await follower.waitForStderr(/live text: heartbeat details, every few seconds; the worker serves none/, 60_000);
        await follower.waitForStderr(/┆ .*Off sentence \d\d streamed/, 60_000);
        assert.equal(await callCompletedAt(id), undefined, 'shown while the call streams');
        assert.equal((await follower.exited).code, 0, follower.stderr);
      } finally {
        follower.kill('SIGKILL');
      }
    } finally {
      await worker.stop();
    }
  }, 120_000);
});
