import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { LIVE_TEXT_PIECE_CHARACTERS } from '../../src/domain/live-text';
import { coalesceLiveText, liveTextFlushDelay } from '../../src/domain/live-text-batching';

describe('when the worker writes streamed text to watchers', () => {
  test('the first piece after a quiet interval goes out at once', () => {
    assert.equal(liveTextFlushDelay(undefined, 1_000, 100), 0, 'nothing written yet');
    assert.equal(liveTextFlushDelay(800, 1_000, 100), 0, 'last write 200 ms ago');
    assert.equal(liveTextFlushDelay(900, 1_000, 100), 0, 'exactly one interval ago');
  });

  test('a piece soon after a write waits for the rest of the interval, never longer', () => {
    assert.equal(liveTextFlushDelay(1_000, 1_030, 100), 70);
    assert.equal(liveTextFlushDelay(1_000, 1_000, 100), 100);
    assert.equal(liveTextFlushDelay(1_000, 990, 100), 0, 'a clock that went back does not hold text longer');
  });

  test('text that fills a line goes out at once, so a burst is never held whole', () => {
    assert.equal(liveTextFlushDelay(1_000, 1_030, 100, LIVE_TEXT_PIECE_CHARACTERS - 1), 70);
    assert.equal(liveTextFlushDelay(1_000, 1_030, 100, LIVE_TEXT_PIECE_CHARACTERS), 0);
  });

  test('an interval of 0 writes every piece as it comes', () => {
    assert.equal(liveTextFlushDelay(1_000, 1_000, 0), 0);
  });

  test('adjacent pieces of one kind become one line, in order; a change of kind starts another', () => {
    assert.deepEqual(
      coalesceLiveText([
        { kind: 'reasoning', text: 'Let me ' },
        { kind: 'reasoning', text: 'think.' },
        { kind: 'content', text: '' },
        { kind: 'content', text: 'The answer' },
        { kind: 'content', text: ' is 4.' },
        { kind: 'tool', text: '\nsearch{"q":' },
        { kind: 'tool', text: '"x"}' },
        { kind: 'content', text: 'Done' },
      ]),
      [
        { kind: 'reasoning', text: 'Let me think.' },
        { kind: 'content', text: 'The answer is 4.' },
        { kind: 'tool', text: '\nsearch{"q":"x"}' },
        { kind: 'content', text: 'Done' },
      ],
    );
  });

  test('joined text longer than a line holds is split again, never inside a surrogate pair', () => {
    const lines = coalesceLiveText(
      [
        { kind: 'content', text: 'a'.repeat(6) },
        { kind: 'content', text: '🤔bbbb' },
      ],
      7,
    );
    assert.equal(lines.map((line) => line.text).join(''), `${'a'.repeat(6)}🤔bbbb`);
    assert.ok(lines.every((line) => line.text.length <= 7 && line.kind === 'content'));
    assert.equal(lines[0]?.text, 'a'.repeat(6), 'the pair is not cut');
  });

  test('nothing held, nothing written', () => {
    assert.deepEqual(coalesceLiveText([]), []);
    assert.deepEqual(coalesceLiveText([{ kind: 'content', text: '' }]), []);
  });
});
