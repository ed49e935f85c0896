import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { runHistory, type HistoryReader } from '../../src/client/run-history';

/** A history reader answering each long poll with the next page, recording when each was asked. */
function pages(sizes: number[]): { reader: HistoryReader; askedAt: number[] } {
  const askedAt: number[] = [];
  let eventId = 0;
  const reader = {
    options: { namespace: 'default' },
    workflowService: {
      getWorkflowExecutionHistory: async () => {
        askedAt.push(performance.now());
        const page = askedAt.length - 1;
        const events = Array.from({ length: sizes[page] ?? 0 }, () => ({ eventId: ++eventId }));
        // The last page has no next page token: the run closed.
        return { history: { events }, nextPageToken: page < sizes.length - 1 ? new Uint8Array([1]) : undefined };
      },
    },
  } as unknown as HistoryReader;
  return { reader, askedAt };
}

async function read(reader: HistoryReader, pauseAfterEventsMs?: number): Promise<number> {
  let events = 0;
  for await (const _event of runHistory(reader, 'run', undefined, { pauseAfterEventsMs })) events += 1;
  return events;
}

describe('runHistory', () => {
  test('after a long poll answered with a few events it waits before asking again; every event is read', async () => {
    const { reader, askedAt } = pages([3, 2, 4]);
    assert.equal(await read(reader, 60), 9);
    assert.equal(askedAt.length, 3);
    for (let index = 1; index < askedAt.length; index += 1)
      assert.ok((askedAt[index] as number) - (askedAt[index - 1] as number) >= 55, `poll ${index} waited`);
  });

  test('a full page of a history being caught up with, or an answer with no events, is followed at once', async () => {
    const started = performance.now();
    const { reader, askedAt } = pages([1000, 0, 1000, 5]);
    // A 30 s pause after either would time the test out.
    assert.equal(await read(reader, 30_000), 2005);
    assert.equal(askedAt.length, 4);
    assert.ok(performance.now() - started < 10_000);
  });

  test('without a pause (follow), it asks again at once', async () => {
    const started = performance.now();
    const { reader } = pages(Array.from({ length: 20 }, () => 3));
    assert.equal(await read(reader), 60);
    // 19 pauses of even 250 ms would take 4.75 s.
    assert.ok(performance.now() - started < 2_000);
  });
});
