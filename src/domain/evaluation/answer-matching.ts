/**
 * Answer normalisation, exact match and token F1 (pure).
 *
 * Normalisation, in this order:
 * 1. Unicode NFD, then every combining mark (`\p{M}`) removed: `Café` → `Cafe`, `Zürich` → `Zurich`.
 * 2. Lower case.
 * 3. Punctuation and symbols (`\p{P}`, `\p{S}`) removed: `U.S.` → `us`, `1,000` → `1000`, `$5` → `5`.
 * 4. The English articles `a`, `an`, `the` removed as whole words.
 * 5. Whitespace collapsed to single spaces, trimmed.
 *
 * Tokens are the words of the normalised text, except that CJK ideographs, kana and hangul
 * count one token a character (`北京大学` → 4 tokens), so Chinese, Japanese and Korean answers
 * score by character as DeepResearch's own evaluation does.
 */

const COMBINING_MARKS = /\p{M}+/gu;
const PUNCTUATION_AND_SYMBOLS = /[\p{P}\p{S}]+/gu;
const ARTICLES = /(^|\s)(?:a|an|the)(?=\s|$)/g;
/** Han, kana (with the prolonged sound mark ー and the iteration mark 々, which Unicode files under Common) and hangul. */
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}\\u30FC\\u3005';
const CJK_CHARACTER = new RegExp(`[${CJK}]`, 'u');
const CJK_OR_RUN = new RegExp(`[${CJK}]|[^${CJK}]+`, 'gu');

/** The normalised form of an answer (see the file comment). */
export function normaliseAnswer(text: string): string {
  let normalised = text.normalize('NFD').replace(COMBINING_MARKS, '').toLowerCase();
  normalised = normalised.replace(PUNCTUATION_AND_SYMBOLS, '');
  normalised = normalised.replace(/\s+/g, ' ');
  // Twice, so adjacent articles ("a the") both go (each match consumes the space before it).
  normalised = normalised.replace(ARTICLES, '$1').replace(ARTICLES, '$1');
  return normalised.replace(/\s+/g, ' ').trim();
}

/** The tokens of an answer: normalised words, CJK one token a character. */
export function answerTokens(text: string): string[] {
  const tokens: string[] = [];
  for (const word of normaliseAnswer(text).split(' ')) {
    if (word === '') continue;
    if (!CJK_CHARACTER.test(word)) {
      tokens.push(word);
      continue;
    }
    for (const piece of word.match(CJK_OR_RUN) ?? []) tokens.push(piece);
  }
  return tokens;
}

/** 1 when prediction and reference have the same tokens in the same order, else 0. */
export function exactMatch(prediction: string, reference: string): number {
  const left = answerTokens(prediction);
  const right = answerTokens(reference);
  return left.length === right.length && left.every((token, index) => token === right[index]) ? 1 : 0;
}

/**
 * Token F1 (SQuAD): the harmonic mean of precision (shared tokens / prediction tokens) and
 * recall (shared tokens / reference tokens), tokens counted as a multiset. Both empty: 1; one
 * empty: 0.
 */
export function tokenF1(prediction: string, reference: string): number {
  const predicted = answerTokens(prediction);
  const expected = answerTokens(reference);
  if (predicted.length === 0 || expected.length === 0) return predicted.length === expected.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const token of expected) counts.set(token, (counts.get(token) ?? 0) + 1);
  let shared = 0;
  for (const token of predicted) {
    const left = counts.get(token) ?? 0;
    if (left > 0) {
      shared += 1;
      counts.set(token, left - 1);
    }
  }
  if (shared === 0) return 0;
  const precision = shared / predicted.length;
  const recall = shared / expected.length;
  return (2 * precision * recall) / (precision + recall);
}
