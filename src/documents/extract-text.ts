import { readFile, stat } from 'node:fs/promises';
import mammoth from 'mammoth';
import { getDocumentProxy, getMeta } from 'unpdf';
import { DocumentExtractionError } from './document-extraction-error';
import { decodeText, detectDocumentFormat, type DocumentFormat } from './document-format';
import { htmlToMarkdown } from './html-to-markdown';
import { DEFAULT_MAXIMUM_ZIP_ENTRIES, readZipWithinLimits, storedZip } from './zip-archive';

/** Default size cap of {@link extractText}: 20 MB. */
export const DEFAULT_MAXIMUM_DOCUMENT_BYTES = 20 * 1024 * 1024;
/** Default of {@link ExtractTextOptions.maxInflatedBytes}: 16 MB. */
export const DEFAULT_MAXIMUM_INFLATED_BYTES = 16 * 1024 * 1024;
/** Default of {@link ExtractTextOptions.maxTextCharacters}: 1,000,000. */
export const DEFAULT_MAXIMUM_TEXT_CHARACTERS = 1_000_000;

/** Options of {@link extractText} and {@link extractTextFromBytes}. */
export interface ExtractTextOptions {
  /** Larger files are refused with a `too-large` DocumentExtractionError. Default 20 MB ({@link DEFAULT_MAXIMUM_DOCUMENT_BYTES}). */
  maxBytes?: number;
  /**
   * Most bytes the parts of a ZIP-based document (.docx) that are read may inflate to, all
   * together; checked against the sizes the archive declares and again while inflating. Past it
   * the file is refused with a `too-large` DocumentExtractionError. Images are never inflated.
   * Default 16 MB ({@link DEFAULT_MAXIMUM_INFLATED_BYTES}).
   */
  maxInflatedBytes?: number;
  /**
   * The text is cut here, with a note saying how much there was; a PDF's pages stop being read
   * once it is reached. Default 1,000,000 ({@link DEFAULT_MAXIMUM_TEXT_CHARACTERS}).
   */
  maxTextCharacters?: number;
  /** Read the bytes as this format instead of the one the name and content suggest. Default: detected. */
  format?: DocumentFormat;
  /** Stops the work between steps when aborted. Default: never aborted. */
  signal?: AbortSignal;
}

/** The text of a document. */
export interface ExtractedDocument {
  /** The readable text: markdown for HTML and Word files, pages separated by blank lines for PDF. */
  text: string;
  /** The document's own title when it has one (PDF metadata, HTML <title>, first heading). */
  title?: string;
  /** The format the text was read as. */
  format: DocumentFormat;
  /** Pages of a PDF; absent for other formats. */
  pages?: number;
}

function sizeLabel(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / (1024 * 1024)).toFixed(1)} MB` : `${Math.ceil(bytes / 1024)} KB`;
}

function tooLarge(name: string, bytes: number, maxBytes: number): DocumentExtractionError {
  return new DocumentExtractionError(
    'too-large',
    `${name} is ${sizeLabel(bytes)}, over the ${sizeLabel(maxBytes)} limit for reading files.`,
  );
}

/**
 * Reads a file and returns its text: PDF (unpdf), Word .docx (mammoth), HTML (Readability and
 * turndown, as markdown), markdown, CSV, JSON (pretty-printed) and plain text. The format comes
 * from the extension, else from the content.
 *
 * @throws DocumentExtractionError for unsupported types, files over `maxBytes` and damaged files.
 *   File system errors (missing file, no permission) are thrown as they are.
 */
export async function extractText(path: string, options: ExtractTextOptions = {}): Promise<ExtractedDocument> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAXIMUM_DOCUMENT_BYTES;
  const information = await stat(path);
  if (information.isDirectory()) throw new DocumentExtractionError('unsupported', `${path} is a folder, not a file.`);
  if (information.size > maxBytes) throw tooLarge(path, information.size, maxBytes);
  options.signal?.throwIfAborted();
  const bytes = await readFile(path, { signal: options.signal });
  return extractTextFromBytes(bytes, path, options);
}

/**
 * The same as {@link extractText} for bytes already in memory (a download, an upload). `name`
 * is a file name or path: its extension decides the format, and it appears in messages.
 */
export async function extractTextFromBytes(
  bytes: Uint8Array,
  name: string,
  options: ExtractTextOptions = {},
): Promise<ExtractedDocument> {
  const maxBytes = options.maxBytes ?? DEFAULT_MAXIMUM_DOCUMENT_BYTES;
  if (bytes.byteLength > maxBytes) throw tooLarge(name, bytes.byteLength, maxBytes);
  const maxTextCharacters = options.maxTextCharacters ?? DEFAULT_MAXIMUM_TEXT_CHARACTERS;
  const document = await extractWholeText(bytes, name, options, maxTextCharacters);
  return { ...document, text: capText(document.text, maxTextCharacters) };
}

/** `text` cut at `maxCharacters`, with a note saying how much there was. */
export function capText(text: string, maxCharacters: number): string {
  if (text.length <= maxCharacters) return text;
  return `${text.slice(0, maxCharacters)}\n\n[Text cut: the first ${maxCharacters.toLocaleString('en-US')} characters of ${text.length.toLocaleString('en-US')} (the limit for one document).]`;
}

async function extractWholeText(
  bytes: Uint8Array,
  name: string,
  options: ExtractTextOptions,
  maxTextCharacters: number,
): Promise<ExtractedDocument> {
  const format = options.format ?? detectDocumentFormat(name, bytes);
  options.signal?.throwIfAborted();
  switch (format) {
    case 'pdf':
      return extractPdf(bytes, name, maxTextCharacters);
    case 'docx':
      return extractWordDocument(bytes, name, options.maxInflatedBytes ?? DEFAULT_MAXIMUM_INFLATED_BYTES);
    case 'html': {
      const page = htmlToMarkdown(decodeText(bytes), `file://${name.startsWith('/') ? '' : '/'}${encodeURI(name)}`);
      return withTitle({ text: page.markdown, format }, page.title);
    }
    case 'markdown': {
      const text = normaliseLineEndings(decodeText(bytes));
      return withTitle({ text, format }, firstHeading(text));
    }
    case 'json':
      return { text: prettyJson(normaliseLineEndings(decodeText(bytes))), format };
    case 'csv':
    case 'text':
      return { text: normaliseLineEndings(decodeText(bytes)), format };
  }
}

function withTitle(document: ExtractedDocument, title: string | undefined): ExtractedDocument {
  const cleaned = title?.replace(/\s+/g, ' ').trim();
  return cleaned ? { ...document, title: cleaned } : document;
}

function normaliseLineEndings(text: string): string {
  return text.replace(/\r\n?/g, '\n');
}

/** The text of the first `# ` (or `## `) heading of markdown, if any. */
function firstHeading(markdown: string): string | undefined {
  const match = /^#{1,2}[ \t]+(.+?)[ \t#]*$/m.exec(markdown);
  return match?.[1];
}

/** Pretty-printed JSON; text that does not parse is returned as it is. */
function prettyJson(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

async function extractPdf(bytes: Uint8Array, name: string, maxTextCharacters: number): Promise<ExtractedDocument> {
  let document: Awaited<ReturnType<typeof getDocumentProxy>>;
  try {
    // pdf.js takes ownership of the buffer it is given, so it gets a copy.
    document = await getDocumentProxy(new Uint8Array(bytes), { verbosity: 0 });
  } catch (error) {
    throw new DocumentExtractionError(
      'unreadable',
      `Cannot read ${name} as a PDF: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  try {
    // Page by page, stopping once the text passes the cap: a PDF of a million pages is not read to the end.
    const text: string[] = [];
    let characters = 0;
    for (let pageNumber = 1; pageNumber <= document.numPages && characters <= maxTextCharacters; pageNumber += 1) {
      const page = await document.getPage(pageNumber);
      const content = await page.getTextContent();
      const pageText = content.items
        .map((item) => ('str' in item ? item.str + (item.hasEOL ? '\n' : '') : ''))
        .join('');
      text.push(pageText);
      characters += pageText.length;
      page.cleanup();
    }
    const totalPages = document.numPages;
    let title: string | undefined;
    try {
      const info = (await getMeta(document)).info as Record<string, unknown>;
      if (typeof info.Title === 'string') title = info.Title;
    } catch {
      title = undefined;
    }
    const pages = text.map((page) => page.trim()).filter(Boolean);
    return withTitle({ text: pages.join('\n\n'), format: 'pdf', pages: totalPages }, title);
  } catch (error) {
    throw new DocumentExtractionError(
      'unreadable',
      `Cannot read the text of ${name}: ${error instanceof Error ? error.message : String(error)}.`,
    );
  } finally {
    await document.loadingTask.destroy();
  }
}

/** Characters that are not whitespace, to compare how much text two renderings kept. */
function visibleLength(text: string): number {
  return text.replace(/[\s#*_>`|[\]()-]/g, '').length;
}

/** The parts of a Word document mammoth parses: XML and relationships; images and embedded files are never inflated. */
function isWordXmlPart(entryName: string): boolean {
  return /\.(xml|rels)$/i.test(entryName);
}

async function extractWordDocument(
  bytes: Uint8Array,
  name: string,
  maxInflatedBytes: number,
): Promise<ExtractedDocument> {
  const original = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  // mammoth reads an archive rebuilt from what was inflated within the limit, so it never inflates anything itself.
  let parts: Map<string, Buffer>;
  try {
    parts = readZipWithinLimits(
      original,
      name,
      { maxInflatedBytes, maxEntries: DEFAULT_MAXIMUM_ZIP_ENTRIES },
      isWordXmlPart,
    );
  } catch (error) {
    if (!(error instanceof DocumentExtractionError) || error.problem !== 'unreadable') throw error;
    throw new DocumentExtractionError(
      'unreadable',
      error.message.replace(`Cannot read ${name}:`, `Cannot read ${name} as a Word document:`),
    );
  }
  const buffer = storedZip(parts);
  let html: string;
  let raw: string;
  try {
    html = (
      await mammoth.convertToHtml({ buffer }, { convertImage: mammoth.images.imgElement(async () => ({ src: '' })) })
    ).value;
    raw = (await mammoth.extractRawText({ buffer })).value;
  } catch (error) {
    throw new DocumentExtractionError(
      'unreadable',
      `Cannot read ${name} as a Word document: ${error instanceof Error ? error.message : String(error)}.`,
    );
  }
  const page = htmlToMarkdown(`<!doctype html><html><head><title></title></head><body>${html}</body></html>`);
  const headingMatch = /<h[1-3][^>]*>(.*?)<\/h[1-3]>/s.exec(html);
  const heading = headingMatch?.[1]?.replace(/<[^>]+>/g, '');
  // Readability may drop parts it takes for page furniture; keep the markdown only when it kept the text.
  const text =
    visibleLength(page.markdown) >= 0.9 * visibleLength(raw)
      ? page.markdown
      : normaliseLineEndings(raw)
          .replace(/\n{3,}/g, '\n\n')
          .trim();
  return withTitle({ text, format: 'docx' }, heading ? decodeEntities(heading) : undefined);
}

function decodeEntities(text: string): string {
  return text.replace(
    /&(amp|lt|gt|quot|#39);/g,
    (_match, entity: string) => ({ amp: '&', lt: '<', gt: '>', quot: '"', '#39': "'" })[entity] ?? '',
  );
}
