import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  encodeLiveTextLine,
  LiveTextLineReader,
  liveTextPieces,
  liveTextPointerOfDetails,
  modelCallOfDetails,
  parseLiveTextLine,
} from '../../src/domain/live-text';

const bytes = (text: string) => new TextEncoder().encode(text);

describe('the live text wire format', () => {
  test('a line written is the line read, whatever pieces the bytes come in', () => {
    const lines = [
      { call: 2, kind: 'reasoning' as const, text: 'Thinking “hard” 🤔\nstill' },
      { skipped: 120 },
      { call: 2, kind: 'tool' as const, text: '\nsearch{"q":"x"}' },
      { end: 'completed' as const },
    ];
    const wire = bytes(lines.map(encodeLiveTextLine).join(''));
    const reader = new LiveTextLineReader();
    const read = [];
    // One byte at a time: split inside multi-byte characters and lines.
    for (const byte of wire) read.push(...reader.read(Uint8Array.of(byte)));
    assert.deepEqual(read, lines);
  });

  test('long text is split into pieces, never inside a surrogate pair', () => {
    const text = `${'a'.repeat(9)}🤔${'b'.repeat(5)}`;
    const pieces = liveTextPieces(text, 10);
    assert.equal(pieces.join(''), text);
    assert.ok(pieces.every((piece) => piece.length <= 10));
    assert.equal(pieces[0], 'a'.repeat(9));
  });

  test('lines that are not the format are refused with a clear error', () => {
    for (const [line, why] of [
      ['not json', /not JSON/],
      ['[1]', /not an object/],
      ['{"call":1,"kind":"secret","text":"x"}', /unknown kind/],
      ['{"call":-1,"kind":"content","text":"x"}', /bad call number/],
      ['{"skipped":"many"}', /bad gap/],
      ['{"end":"maybe"}', /unknown line/],
    ] as const)
      assert.throws(() => parseLiveTextLine(line), why, line);
  });

  test('a line longer than the reader accepts throws instead of being held', () => {
    const reader = new LiveTextLineReader(1_000);
    assert.deepEqual(reader.read(bytes('{"end":"completed"}\n')), [{ end: 'completed' }]);
    assert.throws(
      () => reader.read(bytes(`{"call":1,"kind":"content","text":"${'x'.repeat(2_000)}`)),
      /longer than 1000/,
    );
  });
});

describe('the live text pointer in heartbeat details', () => {
  const token = '0123456789abcdef0123456789abcdef';
  test('an http(s) URL of a call stream is taken', () => {
    for (const url of [`http://127.0.0.1:4100/calls/${token}`, `https://worker-3.internal/live/calls/${token}`])
      assert.deepEqual(liveTextPointerOfDetails({ chunks: 0, liveText: { url } }), { url });
  });

  test('anything else is not', () => {
    for (const details of [
      undefined,
      null,
      'text',
      { liveText: 'http://x/calls/1' },
      { liveText: { url: `file:///calls/${token}` } },
      { liveText: { url: `http://x/calls/${token}/more` } },
      { liveText: { url: `http://x/calls/${token.toUpperCase()}` } },
      { liveText: { url: `http://${'x'.repeat(3_000)}/calls/${token}` } },
    ])
      assert.equal(liveTextPointerOfDetails(details), undefined, JSON.stringify(details)?.slice(0, 80));
  });

  test('the model call number', () => {
    assert.equal(modelCallOfDetails({ modelCall: 4 }), 4);
    assert.equal(modelCallOfDetails({ modelCall: '4' }), undefined);
    assert.equal(modelCallOfDetails({}), undefined);
  });
});
