import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import {
  appendToStreamTail,
  streamIncrement,
  streamTailOfDetails,
  type StreamTail,
} from '../../src/domain/model-stream-text';
import type { HistoryEvent } from '../../src/cli/run-events';
import {
  flushStreamLines,
  modelLimitWaitOfPendingActivity,
  STREAM_LINE_PREFIX as P,
  StreamedTextPrinter,
  streamLines,
  type PendingActivity,
} from '../../src/cli/streamed-text';

const EventType = temporal.api.enums.v1.EventType;

describe('the streamed text in heartbeat details', () => {
  test('keeps the last characters up to the limit and counts them all', () => {
    let tail: StreamTail = { text: '', characters: 0 };
    for (const piece of ['abc', 'def', '', 'ghij']) tail = appendToStreamTail(tail, piece, 5);
    assert.deepEqual(tail, { text: 'fghij', characters: 10 });
  });

  test('never starts inside a surrogate pair', () => {
    const tail = appendToStreamTail({ text: '', characters: 0 }, 'a😀bc', 3);
    assert.deepEqual(tail, { text: 'bc', characters: 5 });
  });

  test('details without readable text give nothing', () => {
    assert.equal(streamTailOfDetails({ chunks: 0, characters: 0, waitingForFirstTokenSeconds: 3 }), undefined);
    assert.equal(streamTailOfDetails('text'), undefined);
    assert.equal(streamTailOfDetails({ streamed: 'abc', streamedCharacters: 2 }), undefined);
    assert.deepEqual(streamTailOfDetails({ chunks: 2, streamed: 'abc', streamedCharacters: 7 }), {
      text: 'abc',
      characters: 7,
    });
  });
});

describe('what to print of a stream tail', () => {
  test('a reader that printed nothing gets all the tail holds, and how much went before', () => {
    assert.deepEqual(streamIncrement(undefined, { text: 'world', characters: 11 }), {
      text: 'world',
      skipped: 6,
      printedCharacters: 11,
    });
    assert.deepEqual(streamIncrement(undefined, { text: 'hello', characters: 5 }), {
      text: 'hello',
      skipped: 0,
      printedCharacters: 5,
    });
  });

  test('then only what is new', () => {
    assert.deepEqual(streamIncrement(5, { text: 'lo world', characters: 11 }), {
      text: ' world',
      skipped: 0,
      printedCharacters: 11,
    });
  });

  test('nothing when the details are not newer than what was printed', () => {
    assert.deepEqual(streamIncrement(11, { text: 'world', characters: 11 }), {
      text: '',
      skipped: 0,
      printedCharacters: 11,
    });
    assert.deepEqual(streamIncrement(11, { text: 'wor', characters: 9 }), {
      text: '',
      skipped: 0,
      printedCharacters: 11,
    });
  });

  test('what the tail lost while nobody looked is counted as skipped', () => {
    assert.deepEqual(streamIncrement(2, { text: 'ghij', characters: 10 }), {
      text: 'ghij',
      skipped: 4,
      printedCharacters: 10,
    });
  });
});

describe('streamed text as lines', () => {
  test('each newline ends a line; the unfinished rest is held', () => {
    assert.deepEqual(streamLines('', 'one\ntwo\nthr', 20), { lines: [`${P}one`, `${P}two`], held: 'thr' });
    assert.deepEqual(streamLines('thr', 'ee\n', 20), { lines: [`${P}three`], held: '' });
    assert.deepEqual(flushStreamLines('rest '), [`${P}rest`]);
    assert.deepEqual(flushStreamLines('  '), []);
  });

  test('a long line is wrapped at a space, or cut without one', () => {
    assert.deepEqual(streamLines('', 'the quick brown fox jumps', 10), {
      lines: [`${P}the quick`, `${P}brown fox`],
      held: 'jumps',
    });
    assert.deepEqual(streamLines('', 'abcdefghijklmnopqrstuvwxy', 10), {
      lines: [`${P}abcdefghij`, `${P}klmnopqrst`],
      held: 'uvwxy',
    });
  });
});

/** History events and pending activities of one run, as the server reports them. */
class Run {
  private eventId = 0;

  event(fields: Record<string, unknown>): HistoryEvent {
    this.eventId += 1;
    return temporal.api.history.v1.HistoryEvent.fromObject({ eventId: this.eventId, ...fields });
  }

  scheduled(activity: string, activityId: string): HistoryEvent {
    return this.event({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      activityTaskScheduledEventAttributes: { activityId, activityType: { name: activity } },
    });
  }

  completed(scheduledEventId: number): HistoryEvent {
    return this.event({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
      activityTaskCompletedEventAttributes: { scheduledEventId },
    });
  }
}

function pending(activityId: string, details: unknown, attempt = 1, activity = 'callModel'): PendingActivity {
  return temporal.api.workflow.v1.PendingActivityInfo.fromObject({
    activityId,
    activityType: { name: activity },
    attempt,
    heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload(details)] },
  });
}

/** What follow says when a call's text comes from its heartbeat details because the worker serves no live text. */
const FROM_HEARTBEATS = '  (live text: heartbeat details, every few seconds; the worker serves none)';

const details = (text: string, characters = text.length) => ({
  chunks: 3,
  characters,
  streamed: text,
  streamedCharacters: characters,
});

describe('the streamed text printer of follow', () => {
  test('prints an open model call’s text once, only what is new, and the held rest when the call ends', () => {
    const run = new Run();
    const printer = new StreamedTextPrinter();
    assert.equal(printer.watching, false);
    const scheduled = run.scheduled('callModel', '3');
    assert.deepEqual(printer.read(scheduled), []);
    assert.equal(printer.watching, true);
    assert.deepEqual(printer.pending([pending('3', { chunks: 0, characters: 0, waitingForFirstTokenSeconds: 2 })]), []);
    assert.deepEqual(printer.pending([pending('3', details('<think>First line\nsecond'))]), [
      FROM_HEARTBEATS,
      `${P}<think>First line`,
    ]);
    assert.deepEqual(
      printer.pending([pending('3', details('<think>First line\nsecond'))]),
      [],
      'the same details again print nothing',
    );
    const full = '<think>First line\nsecond half\nand';
    assert.deepEqual(printer.pending([pending('3', details(full.slice(-20), full.length))]), [`${P}second half`]);
    assert.deepEqual(printer.read(run.completed(Number(scheduled.eventId))), [`${P}and`]);
    assert.equal(printer.watching, false);
    assert.deepEqual(printer.pending([pending('3', details(`${full} more\n`))]), [], 'nothing after the call ended');
  });

  test("a call waiting for its model's shared limit says so once per attempt; malformed waits say nothing", () => {
    const run = new Run();
    const printer = new StreamedTextPrinter();
    printer.read(run.scheduled('callModel', '5'));
    const waiting = (seconds: number, limit = 'tokens') => ({
      chunks: 0,
      characters: 0,
      waitingForModelLimit: { seconds, model: 'gpt-x', limit },
    });
    assert.deepEqual(printer.pending([pending('5', waiting(12))]), [
      "  (waiting 12 s for gpt-x's tokens-per-minute limit)",
    ]);
    assert.deepEqual(printer.pending([pending('5', waiting(11))]), []);
    assert.deepEqual(printer.pending([pending('5', waiting(3, 'pause'), 2)]), [
      '  (attempt 2 of the model call)',
      "  (waiting 3 s for gpt-x's pause after a 429)",
    ]);
    assert.equal(modelLimitWaitOfPendingActivity(pending('5', { waitingForModelLimit: { seconds: 'x' } })), undefined);
    assert.equal(modelLimitWaitOfPendingActivity(pending('5', waiting(4), 1, 'search')), undefined);
  });

  test('a follow that starts late prints what the details hold and says how much came before', () => {
    const run = new Run();
    const printer = new StreamedTextPrinter();
    printer.read(run.scheduled('callModel', '7'));
    assert.deepEqual(printer.pending([pending('7', details('tail end\n', 5_000))]), [
      FROM_HEARTBEATS,
      `${P}… (4,991 characters before)`,
      `${P}tail end`,
    ]);
  });

  test('a new attempt starts over', () => {
    const run = new Run();
    const printer = new StreamedTextPrinter();
    printer.read(run.scheduled('callModel', '7'));
    assert.deepEqual(printer.pending([pending('7', details('first try\nhalf'))]), [FROM_HEARTBEATS, `${P}first try`]);
    assert.deepEqual(printer.pending([pending('7', details('again\n'), 2)]), [
      `${P}half`,
      '  (attempt 2 of the model call)',
      `${P}again`,
    ]);
  });

  test('tools and calls whose scheduling it has not read yet are not shown', () => {
    const run = new Run();
    const printer = new StreamedTextPrinter();
    printer.read(run.scheduled('search', '4'));
    assert.equal(printer.watching, false);
    assert.deepEqual(
      printer.pending([pending('4', details('tool text\n'), 1, 'search'), pending('9', details('later call\n'))]),
      [],
    );
  });

  test('unreadable heartbeat details are skipped', () => {
    const run = new Run();
    const printer = new StreamedTextPrinter();
    printer.read(run.scheduled('callModel', '2'));
    const unreadable = temporal.api.workflow.v1.PendingActivityInfo.fromObject({
      activityId: '2',
      attempt: 1,
      heartbeatDetails: {
        payloads: [{ metadata: { encoding: Buffer.from('binary/encrypted') }, data: Buffer.from('x') }],
      },
    });
    assert.deepEqual(printer.pending([unreadable]), []);
  });
});
