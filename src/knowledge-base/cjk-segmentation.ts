/**
 * The unicode61 tokenizer keeps a run of Chinese, Japanese or Korean characters without spaces
 * as one token, so a word inside a sentence could never match. The index therefore stores CJK
 * text with a space between characters (one token each), queries are spaced the same way and
 * searched as phrases (consecutive characters), and snippets are joined back for display.
 */
const CJK_CHARACTER = String.raw`\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}`;
const BETWEEN_CJK_CHARACTERS = new RegExp(`(?<=[${CJK_CHARACTER}])(?=[${CJK_CHARACTER}])`, 'gu');
/** A space the indexer put between two CJK characters, highlight markers allowed on either side. */
const SPACE_BETWEEN_CJK_CHARACTERS = new RegExp(
  `(?<=[${CJK_CHARACTER}](?:\\*\\*)?) (?=(?:\\*\\*)?[${CJK_CHARACTER}])`,
  'gu',
);

/** `比亚迪销量` → `比 亚 迪 销 量`; other text is unchanged. */
export function spaceOutCjkCharacters(text: string): string {
  return text.replace(BETWEEN_CJK_CHARACTERS, ' ');
}

/** Undoes {@link spaceOutCjkCharacters} (also across `**` highlight markers). */
export function joinCjkCharacters(text: string): string {
  return text.replace(SPACE_BETWEEN_CJK_CHARACTERS, '');
}
