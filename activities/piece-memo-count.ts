/**
 * tiktoken's count of a text, made faster by remembering pieces (issue 21). o200k_base splits a
 * text with a regular expression (its `pat_str`) and encodes each piece on its own, so a text's
 * count is the sum of its pieces' counts; a piece standing alone splits into itself. This splits
 * with the same pattern (the `(?i:…)` contractions spelt out, which JavaScript lacks) and
 * remembers each short piece's count, so words seen before are looked up, not encoded: several
 * times faster on prose, exact where the split matches tiktoken's (test/unit/piece-memo-count.test.ts
 * compares them over varied text).
 *
 * A long piece — a run of letters, digits' neighbours or punctuation without a space, as a hostile
 * or broken model can send megabytes of — is counted slice by slice (issue 28): tiktoken's merging
 * is quadratic in a piece's length (100,000 letters: 10 s; 400,000: 5 minutes) and it crashes
 * on longer ones (`RuntimeError: unreachable` on 3,000,000 letters, spaces, punctuation or CJK). Slices of
 * {@link PieceMemoOptions.maxEncodedCharacters} keep the cost linear (about 0.3 µs a character for
 * letters, 2 µs for CJK) and the count within a few per cent of what tiktoken would give; pieces
 * up to that length, all of ordinary text, are counted exactly.
 */

const CONTRACTION = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?";

/** o200k_base's pre-tokenisation pattern (tiktoken_ext/openai_public.py), for JavaScript. */
export const O200K_PIECE_PATTERN = new RegExp(
  [
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${CONTRACTION}`,
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${CONTRACTION}`,
    `\\p{N}{1,3}`,
    ` ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*`,
    `\\s*[\\r\\n]+`,
    `\\s+(?!\\S)`,
    `\\s+`,
  ].join('|'),
  'gu',
);

/** Limits of a piece memo. */
export interface PieceMemoOptions {
  /** Pieces remembered before the memo is emptied and starts again. Default: 100,000. */
  maxPieces?: number;
  /** Longest piece remembered, in characters; longer ones are encoded each time. Default: 64. */
  maxPieceCharacters?: number;
  /** Longest text encoded in one go, in characters; a longer piece is counted as the sum of slices this long. Default: {@link MAX_ENCODED_CHARACTERS}. */
  maxEncodedCharacters?: number;
}

/** {@link PieceMemoOptions.maxEncodedCharacters} when not given: 256 characters (exact below it). */
export const MAX_ENCODED_CHARACTERS = 256;

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

/** `encode`'s count of `text`, summed over slices of at most `slice` characters (never cutting a surrogate pair). */
export function slicedCount(encode: (text: string) => number, text: string, slice: number): number {
  if (text.length <= slice) return encode(text);
  let total = 0;
  for (let start = 0; start < text.length;) {
    let end = Math.min(start + slice, text.length);
    if (end < text.length && end - start > 1 && isHighSurrogate(text.charCodeAt(end - 1))) end -= 1;
    total += encode(text.slice(start, end));
    start = end;
  }
  return total;
}

/**
 * A count function over `encode` (the number of tokens tiktoken gives a text) that counts piece
 * by piece, remembering pieces. Each call returns what `encode` gives the whole text.
 */
export function pieceMemoCount(
  encode: (text: string) => number,
  options: PieceMemoOptions = {},
): (text: string) => number {
  const maxPieces = options.maxPieces ?? 100_000;
  const maxPieceCharacters = options.maxPieceCharacters ?? 64;
  const maxEncodedCharacters = Math.max(2, options.maxEncodedCharacters ?? MAX_ENCODED_CHARACTERS);
  let memo = new Map<string, number>();
  return (text) => {
    let total = 0;
    let covered = 0;
    for (const match of text.matchAll(O200K_PIECE_PATTERN)) {
      const piece = match[0];
      covered += piece.length;
      if (piece.length > maxPieceCharacters || maxPieces === 0) {
        total += slicedCount(encode, piece, maxEncodedCharacters);
        continue;
      }
      let count = memo.get(piece);
      if (count === undefined) {
        count = encode(piece);
        if (memo.size >= maxPieces) memo = new Map();
        memo.set(piece, count);
      }
      total += count;
    }
    // Characters no alternative matched (none expected): the whole text, slice by slice.
    return covered === text.length ? total : slicedCount(encode, text, maxEncodedCharacters);
  };
}
