import { extname } from 'node:path';
import { DocumentExtractionError } from './document-extraction-error';

/** The formats `extractText` reads. */
export type DocumentFormat = 'pdf' | 'docx' | 'html' | 'markdown' | 'csv' | 'json' | 'text';

/** File name extensions (lower case, with the dot) of each readable format. */
const FORMAT_BY_EXTENSION: Readonly<Record<string, DocumentFormat>> = {
  '.pdf': 'pdf',
  '.docx': 'docx',
  '.html': 'html',
  '.htm': 'html',
  '.xhtml': 'html',
  '.md': 'markdown',
  '.markdown': 'markdown',
  '.mdx': 'markdown',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.json': 'json',
  '.txt': 'text',
  '.text': 'text',
  '.log': 'text',
  '.rst': 'text',
  '.jsonl': 'text',
  '.ndjson': 'text',
  '.xml': 'text',
  '.yaml': 'text',
  '.yml': 'text',
};

/** Extensions we know we cannot read, with what to do instead. */
const UNSUPPORTED_EXTENSIONS: Readonly<Record<string, string>> = {
  '.doc': 'old Word .doc files are not supported; save the file as .docx or PDF',
  '.xls': 'spreadsheets are not supported; export the sheet as CSV',
  '.xlsx': 'spreadsheets are not supported; export the sheet as CSV',
  '.ods': 'spreadsheets are not supported; export the sheet as CSV',
  '.ppt': 'presentations are not supported; export the slides as PDF',
  '.pptx': 'presentations are not supported; export the slides as PDF',
  '.odp': 'presentations are not supported; export the slides as PDF',
  '.odt': 'OpenDocument text is not supported; save the file as .docx or PDF',
  '.rtf': 'RTF is not supported; save the file as .docx, PDF or plain text',
  '.epub': 'e-books are not supported; convert the book to PDF or HTML',
  '.zip': 'archives are not supported; unpack the archive and read its files',
  '.gz': 'archives are not supported; unpack the archive and read its files',
  '.tar': 'archives are not supported; unpack the archive and read its files',
  '.7z': 'archives are not supported; unpack the archive and read its files',
  '.png': 'images are not supported (no OCR)',
  '.jpg': 'images are not supported (no OCR)',
  '.jpeg': 'images are not supported (no OCR)',
  '.gif': 'images are not supported (no OCR)',
  '.webp': 'images are not supported (no OCR)',
  '.mp3': 'audio is not supported',
  '.wav': 'audio is not supported',
  '.mp4': 'video is not supported',
  '.mov': 'video is not supported',
};

/** The formats a reader of this module can name in a message. */
export const READABLE_FORMATS_DESCRIPTION = 'PDF, Word (.docx), HTML, markdown, CSV, JSON and plain text';

/** The format an extension names, `undefined` for an unknown or missing extension. */
export function formatFromExtension(path: string): DocumentFormat | undefined {
  return FORMAT_BY_EXTENSION[extname(path).toLowerCase()];
}

/** True when the extension names a format `extractText` reads (used to pick files in folders). */
export function hasReadableExtension(path: string): boolean {
  return formatFromExtension(path) !== undefined;
}

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((value, index) => bytes[index] === value);
}

/** True when the bytes look like text: no NUL bytes (UTF-16 with a byte order mark aside). */
export function looksLikeText(bytes: Uint8Array): boolean {
  if (startsWith(bytes, [0xff, 0xfe]) || startsWith(bytes, [0xfe, 0xff])) return true;
  const sample = bytes.subarray(0, 8192);
  return !sample.includes(0);
}

/** True when a ZIP archive holds a Word document (its central directory names word/document.xml). */
function isWordArchive(bytes: Uint8Array): boolean {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).includes('word/document.xml', 0, 'latin1');
}

/**
 * The format of a file: by its extension when it names one, otherwise by its content (PDF and
 * ZIP signatures, HTML and JSON openings, else text when it looks like text).
 *
 * @throws DocumentExtractionError `unsupported` for known unreadable extensions and for binary
 * content we cannot read, with a message that says what to do instead.
 */
export function detectDocumentFormat(path: string, bytes: Uint8Array): DocumentFormat {
  const extension = extname(path).toLowerCase();
  const byExtension = FORMAT_BY_EXTENSION[extension];
  if (byExtension === 'pdf' || byExtension === 'docx') return byExtension;
  if (byExtension) {
    if (!looksLikeText(bytes))
      throw new DocumentExtractionError(
        'unsupported',
        `Cannot read ${path}: its name says ${extension} but it holds binary data.`,
      );
    return byExtension;
  }
  const advice = UNSUPPORTED_EXTENSIONS[extension];
  if (advice)
    throw new DocumentExtractionError(
      'unsupported',
      `Cannot read ${path}: ${advice}. Readable formats: ${READABLE_FORMATS_DESCRIPTION}.`,
    );

  if (startsWith(bytes, [0x25, 0x50, 0x44, 0x46, 0x2d])) return 'pdf'; // %PDF-
  if (startsWith(bytes, [0x50, 0x4b, 0x03, 0x04])) {
    if (isWordArchive(bytes)) return 'docx';
    throw new DocumentExtractionError(
      'unsupported',
      `Cannot read ${path}: it is a ZIP archive (or an Office file other than .docx). Readable formats: ${READABLE_FORMATS_DESCRIPTION}.`,
    );
  }
  if (!looksLikeText(bytes)) {
    throw new DocumentExtractionError(
      'unsupported',
      `Cannot read ${path}: it is a binary file of an unknown type. Readable formats: ${READABLE_FORMATS_DESCRIPTION}.`,
    );
  }
  const opening = Buffer.from(bytes.subarray(0, 1024))
    .toString('utf8')
    .replace(/^\uFEFF/, '')
    .trimStart()
    .toLowerCase();
  if (opening.startsWith('<!doctype html') || opening.startsWith('<html') || /^<\?xml[^>]*>\s*<html/.test(opening))
    return 'html';
  if (opening.startsWith('{') || opening.startsWith('[')) {
    try {
      JSON.parse(decodeText(bytes));
      return 'json';
    } catch {
      return 'text';
    }
  }
  return 'text';
}

/** Decodes text bytes: UTF-16 when a byte order mark says so, else UTF-8 (a UTF-8 BOM is dropped). */
export function decodeText(bytes: Uint8Array): string {
  if (startsWith(bytes, [0xff, 0xfe])) return new TextDecoder('utf-16le').decode(bytes);
  if (startsWith(bytes, [0xfe, 0xff])) return new TextDecoder('utf-16be').decode(bytes);
  return new TextDecoder('utf-8').decode(bytes);
}
