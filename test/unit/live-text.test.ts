import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  encodeLiveTextLine,
  LiveTextLineReader,
  liveTextPieces,
  liveTextPointerOfDetails,
  modelCallOfDetails,
  parseLiveTextLine,
  parseRunTextLine,
  encodeRunTextOpened,
  runTextPrefix,
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

describe('the run stream wire format', () => {
  test('a call line tagged with its attempt reads back as that line and attempt, and so does an opening', () => {
    const tagged = (line: string) => runTextPrefix('7', 2) + line.slice(1);
    const wire = [
      encodeRunTextOpened('7', 2, 4),
      tagged(encodeLiveTextLine({ call: 4, kind: 'content', text: 'Hello "there"\n' })),
      tagged(encodeLiveTextLine({ skipped: 12 })),
      tagged(encodeLiveTextLine({ end: 'failed' })),
    ].join('');
    const reader = new LiveTextLineReader(1_000, parseRunTextLine);
    const read = [];
    for (const byte of bytes(wire)) read.push(...reader.read(Uint8Array.of(byte)));
    assert.deepEqual(read, [
      { activityId: '7', attempt: 2, line: { opened: true, call: 4 } },
      { activityId: '7', attempt: 2, line: { call: 4, kind: 'content', text: 'Hello "there"\n' } },
      { activityId: '7', attempt: 2, line: { skipped: 12 } },
      { activityId: '7', attempt: 2, line: { end: 'failed' } },
    ]);
  });

  test('lines without a readable attempt are refused with a clear error', () => {
    for (const [line, why] of [
      ['{"call":1,"kind":"content","text":"x"}', /bad activity id/],
      ['{"activityId":"","attempt":1,"end":"completed"}', /bad activity id/],
      [`{"activityId":"${'x'.repeat(300)}","attempt":1,"end":"completed"}`, /bad activity id/],
      ['{"activityId":"3","attempt":0,"end":"completed"}', /bad attempt/],
      ['{"activityId":"3","attempt":1,"opened":1,"call":2}', /bad opening/],
      ['{"activityId":"3","attempt":1,"opened":true}', /bad opening/],
      ['{"activityId":"3","attempt":1,"kind":"content","text":"x"}', /bad call number/],
      ['{"activityId":"3","attempt":1}', /unknown line/],
    ] as const)
      assert.throws(() => parseRunTextLine(line), why, line);
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

  test('a run stream URL beside it is taken, and a malformed one dropped (the call URL still read)', () => {
    const url = `http://127.0.0.1:4100/calls/${token}`;
    const runUrl = `http://127.0.0.1:4100/runs/${token}${token}`;
    assert.deepEqual(liveTextPointerOfDetails({ liveText: { url, runUrl } }), { url, runUrl });
    for (const bad of [
      `http://127.0.0.1:4100/runs/${token}`,
      `http://127.0.0.1:4100/calls/${token}${token}`,
      `ftp://x/runs/${token}${token}`,
      7,
    ])
      assert.deepEqual(liveTextPointerOfDetails({ liveText: { url, runUrl: bad } }), { url }, String(bad));
  });

  test('the model call number', () => {
    assert.equal(modelCallOfDetails({ modelCall: 4 }), 4);
    assert.equal(modelCallOfDetails({ modelCall: '4' }), undefined);
    assert.equal(modelCallOfDetails({}), undefined);
  });
});
