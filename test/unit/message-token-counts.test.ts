import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  carriedCounts,
  completeCounts,
  isMessageTokenCounts,
  storableCounts,
  totalOfCounts,
} from '../../src/domain/message-token-counts';

// The pure decisions behind token counts carried forward with a conversation (issue 21).

describe('message token counts', () => {
  test('counts are well-formed only with a counter name and one whole, non-negative count per message', () => {
    assert.equal(isMessageTokenCounts({ counter: 'o200k_base+4/message', counts: [3, 0, 12] }, 3), true);
    assert.equal(
      isMessageTokenCounts({ counter: 'o200k_base+4/message', counts: [3, 12] }, 3),
      false,
      'one count missing',
    );
    assert.equal(isMessageTokenCounts({ counter: 'o200k_base+4/message', counts: [3, -1, 12] }, 3), false, 'negative');
    assert.equal(
      isMessageTokenCounts({ counter: 'o200k_base+4/message', counts: [3, 1.5, 12] }, 3),
      false,
      'fractional',
    );
    assert.equal(
      isMessageTokenCounts({ counter: 'o200k_base+4/message', counts: [3, '1', 12] }, 3),
      false,
      'not a number',
    );
    assert.equal(isMessageTokenCounts({ counts: [3, 1, 12] }, 3), false, 'no counter');
    assert.equal(isMessageTokenCounts(undefined, 0), false);
    assert.equal(isMessageTokenCounts(null, 0), false);
  });

  test('the stored counts are carried when the same counter made them for these messages', () => {
    assert.deepEqual(carriedCounts({ counter: 'a', counts: [5, 7] }, 'a', 2), [5, 7]);
  });

  test('nothing is carried without stored counts (a conversation stored before they were kept), from another counter, or for a counter that does not carry', () => {
    assert.deepEqual(carriedCounts(undefined, 'a', 3), [undefined, undefined, undefined]);
    assert.deepEqual(carriedCounts({ counter: 'b', counts: [5, 7] }, 'a', 2), [undefined, undefined]);
    assert.deepEqual(carriedCounts({ counter: 'a', counts: [5, 7] }, undefined, 2), [undefined, undefined]);
    assert.deepEqual(
      carriedCounts({ counter: 'a', counts: [5, 7] }, 'a', 3),
      [undefined, undefined, undefined],
      'counts that do not fit the messages',
    );
  });

  test('the carried array is a copy: appending to it leaves the stored counts alone', () => {
    const stored = { counter: 'a', counts: [5, 7] };
    carriedCounts(stored, 'a', 2).push(9);
    assert.deepEqual(stored.counts, [5, 7]);
  });

  test('completing counts counts only the missing messages, and says how many', () => {
    const asked: number[] = [];
    const { counts, counted } = completeCounts(
      [5, undefined, 7, undefined],
      (index) => (asked.push(index), index * 100),
    );
    assert.deepEqual(counts, [5, 100, 7, 300]);
    assert.equal(counted, 2);
    assert.deepEqual(asked, [1, 3]);
    assert.deepEqual(
      completeCounts([], () => 1),
      { counts: [], counted: 0 },
    );
  });

  test('counts are stored only for a counter that carries them; the total is their sum', () => {
    assert.deepEqual(storableCounts('a', [1, 2]), { counter: 'a', counts: [1, 2] });
    assert.equal(storableCounts(undefined, [1, 2]), undefined);
    assert.equal(totalOfCounts([1, 2, 39]), 42);
    assert.equal(totalOfCounts([]), 0);
  });
});
