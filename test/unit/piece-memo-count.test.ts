import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from '@jest/globals';
import { get_encoding } from 'tiktoken';
import { createTiktokenCounter } from '../../activities/token-counter';
import { pieceMemoCount, slicedCount } from '../../activities/piece-memo-count';

// Counting piece by piece, remembering pieces, gives what tiktoken's o200k_base gives the whole
// text: checked over hand-picked edge cases, the project's own files and seeded random text.

const encoder = get_encoding('o200k_base');
const tiktokenCount = (text: string) => encoder.encode_ordinary(text).length;

const EDGE_CASES = [
  '',
  'The quick brown fox jumps over the lazy dog. '.repeat(100),
  "Hello,   world!\n\n  It's   I'LL we'Re  don't they'VE she'd 12345678 3.14159 -42 x=y+z; /* code */ if(a){b();}\r\n\ttabs",
  '日本語のテキスト、中文文本，한국어 텍스트 🚀🔥 emoji 👍🏽 👨‍👩‍👧 e\u0301 café naïve Ελληνικά русский текст عربى',
  '   leading spaces\n\n\n   trailing   \n',
  ' \u00a0\u3000\u2003 odd spaces\u2028line separator\u0085next line',
  '<tool_response>\n{"name": "lookup", "arguments": {"query": ["2+2"]}}\n</tool_response>',
  'URL https://example.com/path?q=1&b=2#frag and email a.b@c.de, $1,234.56 (USD) — “quotes” ‘single’ … ellipsis',
  'CamelCaseWords HTTPServer iPhone ABCdef aBC123def ___init___ snake_case_name',
  `${'a'.repeat(250)} ${'9'.repeat(50)} ${'-'.repeat(200)} ${' '.repeat(100)}x`,
];

/** Text from a seeded generator, drawn from letters of several scripts, marks, digits, spaces and symbols. */
function randomTexts(seed: number, count: number, length: number): string[] {
  const alphabet = [
    ...'abcXYZ éÉßøŁ ДжЯ αΩ 中文字 かなカナ 한글 ١٢٣ 0123456789 \t\n\r\n  .,;:!?\'"-_/\\()[]{}<>@#$%^&*+=~`|',
  ].concat(['\u0301', '\u0308', '🙂', '👍🏽', '\u00a0', '\u200d', "'s", "'LL", '\n\n']);
  let state = seed;
  const next = () => (state = (state * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  return Array.from({ length: count }, () =>
    Array.from({ length }, () => alphabet[Math.floor(next() * alphabet.length)]).join(''),
  );
}

function projectFiles(): string[] {
  const root = join(__dirname, '..', '..');
  return [
    'README.md',
    'docs/figures.md',
    'activities/model-activity.ts',
    'package.json',
    'src/core/protocols/deep-research-protocol.ts',
  ].map((path) => readFileSync(join(root, path), 'utf8'));
}

describe('pieceMemoCount', () => {
  test("gives tiktoken's count of every text: edge cases, the project's files, seeded random text", () => {
    const count = pieceMemoCount(tiktokenCount);
    for (const text of [...EDGE_CASES, ...projectFiles(), ...randomTexts(21, 200, 120)]) {
      assert.equal(count(text), tiktokenCount(text), JSON.stringify(text.slice(0, 80)));
      assert.equal(count(text), tiktokenCount(text), 'again, from the memo');
    }
  });

  test('stays exact when the memo is emptied or long pieces are not remembered', () => {
    const count = pieceMemoCount(tiktokenCount, { maxPieces: 3, maxPieceCharacters: 4 });
    for (const text of [...EDGE_CASES, ...randomTexts(7, 50, 80)]) assert.equal(count(text), tiktokenCount(text));
  });

  test('remembers pieces: a text seen before is not encoded again, and only pieces are encoded', () => {
    const encoded: string[] = [];
    const count = pieceMemoCount((text) => (encoded.push(text), tiktokenCount(text)));
    count('The cat sat on the mat.');
    const first = encoded.length;
    assert.ok(
      encoded.every((piece) => piece.length < 6),
      'pieces, not the whole text',
    );
    count('The cat sat on the mat.');
    count('The mat sat on the cat.');
    assert.equal(encoded.length, first, 'every piece looked up');
  });

  test('a long run without spaces is counted slice by slice: no tiktoken crash, linear, within 1 % (issue 28)', () => {
    const counter = createTiktokenCounter();
    // Whole, tiktoken takes minutes over runs like these (400,000 letters: 5 minutes) and crashes on longer ones.
    const started = Date.now();
    for (const [text, expected] of [
      ['a'.repeat(1_000_000), 125_000],
      ['!'.repeat(300_000), 300_000 / 16],
      ['中'.repeat(100_000), 100_000],
      [' '.repeat(300_000) + 'x', undefined],
      ['😀'.repeat(100_000), undefined],
    ] as const) {
      const count = counter.count(text);
      assert.ok(count > 0);
      if (expected !== undefined)
        assert.ok(
          Math.abs(count - expected) <= expected / 100,
          `${text.slice(0, 3)}…: ${count} tokens, tiktoken's whole-text rate gives ${expected}`,
        );
    }
    assert.throws(
      () => tiktokenCount('a'.repeat(3_000_000)),
      /unreachable/,
      'tiktoken itself crashes on a whole run this long',
    );
    assert.ok(Date.now() - started < 20_000, `counted in ${Date.now() - started} ms`);
  });

  test('slices never cut a surrogate pair', () => {
    const sliced: string[] = [];
    slicedCount((text) => (sliced.push(text), 1), '😀'.repeat(1_000), 255);
    assert.ok(sliced.every((slice) => !/[\uD800-\uDBFF]$|^[\uDC00-\uDFFF]/.test(slice)));
    assert.equal(sliced.join(''), '😀'.repeat(1_000));
  });

  test('the worker counter (tiktoken o200k_base) counts as tiktoken does', () => {
    const counter = createTiktokenCounter();
    assert.equal(counter.encoding, 'o200k_base');
    for (const text of EDGE_CASES) assert.equal(counter.count(text), tiktokenCount(text));
  });
});
