import { spaceOutCjkCharacters } from './cjk-segmentation';

/** Words too common to help ranking; dropped unless the query has nothing else. */
const STOP_WORDS = new Set(
  [
    'a about after all also an and any are as at be been before being but by can could did do does for from had has have he her his how i if in into',
    'is it its many me more most much my of on or our she should so some such than that the their them then there these they this those to us',
    'was we were what when where which who whom why will with would you your',
  ]
    .join(' ')
    .split(' '),
);

/** A piece of user text as an FTS5 string token: in double quotes, inner quotes doubled. */
function asStringToken(text: string): string {
  return `"${text.replace(/"/g, '""')}"`;
}

/** True when the text has at least one letter or digit (else the tokenizer yields nothing). */
function hasSearchableCharacters(text: string): boolean {
  return /[\p{L}\p{N}]/u.test(text);
}

/**
 * Turns what a user or a model typed into a safe FTS5 MATCH expression: every word becomes a
 * quoted string token (so `AND`, `NEAR(`, `-`, `*`, `:` and stray quotes are just text), text
 * in balanced double quotes stays a phrase, and the tokens are joined with OR so bm25 ranks the
 * chunks that match the most (and rarest) words first. Returns `undefined` when nothing in the
 * text is searchable.
 */
export function buildFullTextQuery(userText: string): string | undefined {
  const terms = fullTextQueryTerms(userText);
  return terms.length ? terms.join(' OR ') : undefined;
}

/**
 * The terms of {@link buildFullTextQuery}, each a quoted FTS5 string token (lower case, CJK
 * characters spaced, stop words dropped unless nothing else is left, repeats removed).
 */
export function fullTextQueryTerms(userText: string): string[] {
  const phrases: string[] = [];
  const words: string[] = [];
  const quoted = /"([^"]*)"/g;
  const withoutPhrases = userText.replace(quoted, (_match, phrase: string) => {
    if (hasSearchableCharacters(phrase)) phrases.push(phrase.trim());
    return ' ';
  });
  for (const word of withoutPhrases.split(/\s+/)) {
    const cleaned = word.replace(/^[^\p{L}\p{N}]+|[^\p{L}\p{N}]+$/gu, '');
    if (hasSearchableCharacters(cleaned)) words.push(cleaned);
  }
  const meaningfulWords = words.filter((word) => !STOP_WORDS.has(word.toLowerCase()));
  const terms = [...phrases, ...(meaningfulWords.length || phrases.length ? meaningfulWords : words)];
  const unique = [...new Set(terms.map((term) => spaceOutCjkCharacters(term.toLowerCase())))];
  return unique.map(asStringToken);
}
