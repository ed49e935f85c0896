import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { temporal } from '@temporalio/proto';
import { STREAM_LINE_PREFIX } from '../../src/cli/streamed-text';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { runId, Scenarios } from './support/scenarios';

/** `react-agent follow` shows a model call's text while it streams (issue 19), from its heartbeat details. */
const EventType = temporal.api.enums.v1.EventType;
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** The streamed text a follower printed, whitespace removed (lines are wrapped where it likes). */
function streamedText(stderr: string): string {
  return stderr
    .split('\n')
    .filter((line) => line.startsWith(STREAM_LINE_PREFIX) && !line.startsWith(`${STREAM_LINE_PREFIX}… (`))
    .map((line) => line.slice(STREAM_LINE_PREFIX.length))
    .join('')
    .replace(/\s+/g, '');
}

const occurrences = (text: string, part: string) => text.split(part).length - 1;

describe('follow while a model call streams', () => {
  test('prints the text before the call completes, a late follower continues from where the call is, and nothing is printed twice', async () => {
    const thought = Array.from(
      { length: 40 },
      (_, index) => `Sentence ${String(index + 1).padStart(2, '0')} of a slow thought.`,
    ).join(' ');
    const content = `<think>${thought}</think>\n<answer>Streamed answer.</answer>`;
    // About 15 s of streaming: heartbeats reach the server every 4 s (0.8 × the 5 s heartbeat timeout).
    const id = scenarios.add(runId('cli-follow-stream'), [{ content, chunks: 75, delayBetweenChunksMs: 200 }]);
    const handle = await environment.startRun({ question: 'Think slowly, then answer.' }, id);
    const early = CliProcess.start(['follow', id], { environment: environment.environment });
    let late: CliProcess | undefined;
    try {
      await early.waitForStderr(/┆ .*Sentence \d\d of a slow/, 60_000);
      // The text is on screen: the call that streams it has not completed yet.
      const history = await handle.fetchHistory();
      const callModels = new Set(
        (history.events ?? [])
          .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel')
          .map((event) => String(event.eventId)),
      );
      assert.equal(callModels.size, 1, 'the model call was scheduled');
      const completedCalls = (history.events ?? []).filter(
        (event) =>
          event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED &&
          callModels.has(String(event.activityTaskCompletedEventAttributes?.scheduledEventId)),
      );
      assert.equal(completedCalls.length, 0, 'follow printed the text before the call completed');
      assert.match(early.stderr, /\[call 1\] calling the model/);
      assert.doesNotMatch(early.stderr, /context tokens/, 'the completed call is not shown yet');

      // A follow started now picks the call up where it is.
      late = CliProcess.start(['follow', id], { environment: environment.environment });
      const [earlyExit, lateExit] = await Promise.all([early.exited, late.exited]);
      assert.equal(earlyExit.code, 0, early.stderr);
      assert.equal(lateExit.code, 0, late.stderr);

      const whole = content.replace(/\s+/g, '');
      for (const [name, follower] of [
        ['early', early],
        ['late', late],
      ] as const) {
        const shown = streamedText(follower.stderr);
        assert.ok(whole.includes(shown), `${name}: the streamed text in order, nothing twice:\n${follower.stderr}`);
        assert.equal(
          occurrences(follower.stdout, 'Answer:\nStreamed answer.'),
          1,
          `${name} stdout: ${follower.stdout}`,
        );
        assert.equal(occurrences(follower.stderr, '[call 1] calling the model'), 1, follower.stderr);
        assert.equal((follower.stderr.match(/\[call 1\] [\d,]+ context tokens/g) ?? []).length, 1, follower.stderr);
        assert.equal(occurrences(follower.stderr, '  thought: Sentence 01'), 1, follower.stderr);
        assert.match(follower.stdout, /Ended: answer after 1 model calls/);
        // The streamed lines come before the completed call's lines.
        assert.ok(
          follower.stderr.lastIndexOf(STREAM_LINE_PREFIX) < follower.stderr.indexOf('context tokens'),
          follower.stderr,
        );
      }
      assert.ok(
        streamedText(early.stderr).length >= 200,
        `the early follower saw much of the stream:\n${early.stderr}`,
      );
      assert.ok(streamedText(late.stderr).length > 0, `the late follower saw some of it:\n${late.stderr}`);
      const result = await handle.result();
      assert.equal(result.prediction, 'Streamed answer.');
    } finally {
      early.kill('SIGKILL');
      late?.kill('SIGKILL');
    }
  }, 180_000);

  test('run, which follows the run it starts, prints the streaming text too, and the answer once', async () => {
    const thought = Array.from(
      { length: 24 },
      (_, index) => `Step ${String(index + 1).padStart(2, '0')} of thinking it over.`,
    ).join(' ');
    const content = `<think>${thought}</think>\n<answer>Run streamed.</answer>`;
    const id = scenarios.add(runId('cli-run-stream'), [{ content, chunks: 50, delayBetweenChunksMs: 200 }]);
    const outcome = await CliProcess.complete(['run', 'Think it over, then answer.', '--id', id], {
      environment: environment.environment,
    });
    assert.equal(outcome.code, 0, outcome.stderr);
    const shown = streamedText(outcome.stderr);
    assert.ok(shown.length > 0 && content.replace(/\s+/g, '').includes(shown), outcome.stderr);
    assert.equal(occurrences(outcome.stdout, 'Answer:\nRun streamed.'), 1, outcome.stdout);
    assert.equal((outcome.stderr.match(/\[call 1\] [\d,]+ context tokens/g) ?? []).length, 1, outcome.stderr);
  }, 120_000);
});
