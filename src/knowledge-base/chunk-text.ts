/** Options of {@link chunkText}. */
export interface ChunkTextOptions {
  /** Chunks are filled with whole paragraphs up to about this many characters. Default 1,200. */
  targetCharacters?: number;
  /** No chunk is longer (overlap included); longer paragraphs are split at sentences, then words. Default 1,500. */
  maxCharacters?: number;
  /** Each chunk after the first starts with about this much of the end of the one before. Default 150. */
  overlapCharacters?: number;
}

export const DEFAULT_CHUNK_TARGET_CHARACTERS = 1_200;
export const DEFAULT_CHUNK_MAX_CHARACTERS = 1_500;
export const DEFAULT_CHUNK_OVERLAP_CHARACTERS = 150;

/** Sentence ends, Latin and CJK, keeping the punctuation with its sentence. */
const SENTENCE_END = /(?<=[.!?。！？；;])\s+|(?<=[。！？])/u;

/** Splits `text` into pieces of at most `maxCharacters`, at whitespace when there is any. */
function splitAtWords(text: string, maxCharacters: number): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > maxCharacters) {
    const window = rest.slice(0, maxCharacters + 1);
    const cut = window.lastIndexOf(' ');
    const at = cut > maxCharacters / 2 ? cut : maxCharacters;
    pieces.push(rest.slice(0, at).trim());
    rest = rest.slice(at).trim();
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/** A paragraph as pieces no longer than `maxCharacters`: itself, else its sentences packed, else word splits. */
function splitParagraph(paragraph: string, targetCharacters: number, maxCharacters: number): string[] {
  if (paragraph.length <= maxCharacters) return [paragraph];
  const sentences = paragraph
    .split(SENTENCE_END)
    .flatMap((sentence) => splitAtWords(sentence.trim(), maxCharacters))
    .filter(Boolean);
  const pieces: string[] = [];
  let current = '';
  for (const sentence of sentences) {
    if (current && current.length + 1 + sentence.length > targetCharacters) {
      pieces.push(current);
      current = sentence;
    } else {
      current = current ? `${current} ${sentence}` : sentence;
    }
  }
  if (current) pieces.push(current);
  return pieces;
}

/** About the last `characters` of `text`, starting at a word. */
function tail(text: string, characters: number): string {
  if (characters <= 0) return '';
  if (text.length <= characters) return text;
  const start = text.length - characters;
  const space = text.indexOf(' ', start);
  return (space >= 0 && space < text.length - 1 ? text.slice(space + 1) : text.slice(start)).trim();
}

/**
 * Splits a document's text into chunks for the search index: whole paragraphs packed up to
 * `targetCharacters` (never over `maxCharacters`), a long paragraph split at sentence ends, a
 * heading kept with the text after it, and a short overlap carried from one chunk to the next so
 * a fact on a boundary is found in both.
 */
export function chunkText(text: string, options: ChunkTextOptions = {}): string[] {
  const maxCharacters = options.maxCharacters ?? DEFAULT_CHUNK_MAX_CHARACTERS;
  const targetCharacters = Math.min(options.targetCharacters ?? DEFAULT_CHUNK_TARGET_CHARACTERS, maxCharacters);
  const overlapCharacters = Math.min(
    options.overlapCharacters ?? DEFAULT_CHUNK_OVERLAP_CHARACTERS,
    Math.floor(targetCharacters / 4),
  );

  const paragraphs = text
    .replace(/\r\n?/g, '\n')
    .split(/\n[ \t]*\n+/)
    .map((paragraph) => paragraph.replace(/[ \t]+$/gm, '').trim())
    .filter(Boolean);
  const pieces = paragraphs.flatMap((paragraph) => splitParagraph(paragraph, targetCharacters, maxCharacters));

  const chunks: string[] = [];
  let current = '';
  let currentHasNewText = false;
  for (const piece of pieces) {
    const combinedLength = current.length + 2 + piece.length;
    const isHeading = /^#{1,6}\s/.test(piece);
    const fits =
      combinedLength <= targetCharacters || (combinedLength <= maxCharacters && current.length < targetCharacters / 2);
    const startNew = currentHasNewText && (!fits || (isHeading && current.length >= targetCharacters / 2));
    if (startNew) {
      chunks.push(current);
      const overlap = tail(current, overlapCharacters);
      current = overlap && overlap.length + 2 + piece.length <= maxCharacters ? `${overlap}\n\n${piece}` : piece;
    } else {
      current = current ? `${current}\n\n${piece}` : piece;
    }
    currentHasNewText = true;
  }
  if (currentHasNewText && current) chunks.push(current);
  return chunks;
}
