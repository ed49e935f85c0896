import { basename } from 'node:path';
import { extractTextInThread, type IsolatedExtractionOptions } from '../../../src/documents/extraction-thread';
import { htmlToMarkdown } from '../../../src/documents/html-to-markdown';

/** How a PDF is read: in a worker thread with these limits (the byte cap is the visit tool's own). */
export type DocumentLimits = Omit<IsolatedExtractionOptions, 'signal' | 'format' | 'maxBytes'>;

/** How a body is turned into text. */
export type ContentFormat = 'html' | 'markdown' | 'text' | 'json' | 'pdf';

/** The content types the visit tool reads by default. */
export const DEFAULT_ALLOWED_CONTENT_TYPES: readonly string[] = [
  'text/html',
  'application/xhtml+xml',
  'text/plain',
  'text/markdown',
  'application/json',
  'application/pdf',
];

/** Content types that say nothing about the body; it is sniffed instead. */
const UNDECLARED_CONTENT_TYPES = new Set(['', 'application/octet-stream', 'binary/octet-stream']);

/** True when the body has to be sniffed because the type says nothing. */
export function isUndeclaredContentType(contentType: string): boolean {
  return UNDECLARED_CONTENT_TYPES.has(contentType);
}

/** The format of an (allowed) content type: HTML, markdown, JSON, PDF, or else plain text. */
export function formatOfContentType(contentType: string): ContentFormat {
  if (contentType === 'text/html' || contentType === 'application/xhtml+xml') return 'html';
  if (contentType === 'text/markdown' || contentType === 'text/x-markdown') return 'markdown';
  if (contentType === 'application/json' || contentType.endsWith('+json')) return 'json';
  if (contentType === 'application/pdf') return 'pdf';
  return 'text';
}

/** The format of a local file, from its extension; undefined when it has to be sniffed. */
export function formatOfFileName(fileName: string): ContentFormat | undefined {
  const extension = /\.([a-z0-9]+)$/i.exec(fileName)?.[1]?.toLowerCase();
  switch (extension) {
    case 'html':
    case 'htm':
    case 'xhtml':
      return 'html';
    case 'md':
    case 'markdown':
      return 'markdown';
    case 'json':
      return 'json';
    case 'pdf':
      return 'pdf';
    case 'txt':
    case 'text':
      return 'text';
    default:
      return undefined;
  }
}

/**
 * Guesses the format of a body whose type is unknown: a PDF signature, an HTML start, JSON, or
 * text without NUL bytes that decodes as UTF-8. Undefined means binary (not readable).
 */
export function sniffFormat(body: Buffer): ContentFormat | undefined {
  const head = body.subarray(0, 8192);
  if (head.subarray(0, 5).toString('latin1') === '%PDF-') return 'pdf';
  if (head.includes(0)) return undefined;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, lastCompleteUtf8Boundary(head)));
  } catch {
    return undefined;
  }
  const start = head.toString('utf8').trimStart().slice(0, 512).toLowerCase();
  if (start.startsWith('<!doctype html') || start.startsWith('<html') || /^<(?:head|body|meta|title)\b/.test(start))
    return 'html';
  if (start.startsWith('{') || start.startsWith('[')) return 'json';
  return 'text';
}

/** Length of `bytes` without a multi-byte UTF-8 sequence cut at the end. */
function lastCompleteUtf8Boundary(bytes: Buffer): number {
  const index = bytes.length;
  for (let back = 1; back <= 3 && index - back >= 0; back += 1) {
    const byte = bytes[index - back] as number;
    if ((byte & 0xc0) === 0x80) continue; // continuation byte
    if (byte >= 0xc0) return index - back; // a sequence starts here: drop it (maybe incomplete)
    break;
  }
  return index;
}

/** A document as text the model can read. */
export interface ReadableDocument {
  /** Title from the document, else a name derived from its address. */
  title: string;
  /** Readable content as markdown (plain text is left as it is). */
  markdown: string;
}

/** What {@link extractReadableContent} needs to know about a body. */
export interface ContentDescription {
  format: ContentFormat;
  /** Charset from the `content-type` header, if any. */
  charset?: string;
  /** Final address (for relative links and the fallback title). */
  url: string;
  /** True when the body was cut at the byte limit. */
  truncated: boolean;
}

function decode(body: Buffer, charset: string | undefined, format: ContentFormat): string {
  let label = charset;
  if (!label && format === 'html') {
    label = /<meta[^>]+charset\s*=\s*["']?([\w.:-]+)/i.exec(body.subarray(0, 4096).toString('latin1'))?.[1];
  }
  try {
    return new TextDecoder(label ?? 'utf-8').decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
}

/** A title for a document that has none: its file name, else its host, else the address. */
export function titleFromAddress(address: string): string {
  try {
    const url = new URL(address);
    const name = decodeURIComponent(basename(url.pathname));
    return name || url.hostname || address;
  } catch {
    return basename(address) || address;
  }
}

async function pdfToText(
  body: Buffer,
  url: string,
  truncated: boolean,
  limits: DocumentLimits & { signal?: AbortSignal },
): Promise<ReadableDocument> {
  if (truncated) throw new Error('the PDF is larger than the byte limit and a cut PDF cannot be read');
  // In a thread of its own: a PDF whose streams inflate to gigabytes ends that thread, never the worker.
  const document = await extractTextInThread(
    { bytes: body, name: titleFromAddress(url) },
    { ...limits, format: 'pdf', maxBytes: body.length },
  );
  return { title: document.title ?? titleFromAddress(url), markdown: document.text };
}

/**
 * Turns a body into readable markdown: HTML through Readability and turndown (boilerplate
 * dropped), PDF through unpdf in a worker thread (`limits`), JSON pretty-printed in a fence,
 * text and markdown as they are.
 * @throws Error when a PDF is cut or cannot be parsed; DocumentExtractionError past a limit.
 */
export async function extractReadableContent(
  body: Buffer,
  description: ContentDescription,
  limits: DocumentLimits & { signal?: AbortSignal } = {},
): Promise<ReadableDocument> {
  const { format, url } = description;
  if (format === 'pdf') return pdfToText(body, url, description.truncated, limits);
  const text = decode(body, description.charset, format);
  switch (format) {
    case 'html': {
      const page = htmlToMarkdown(text, url);
      return { title: page.title || titleFromAddress(url), markdown: page.markdown };
    }
    case 'json': {
      let pretty = text.trim();
      try {
        pretty = JSON.stringify(JSON.parse(text), null, 2);
      } catch {
        // cut or malformed: show it as it came
      }
      return { title: titleFromAddress(url), markdown: '```json\n' + pretty + '\n```' };
    }
    case 'markdown': {
      const heading = /^#\s+(.+)$/m.exec(text)?.[1]?.trim();
      return { title: heading || titleFromAddress(url), markdown: text.trim() };
    }
    default:
      return { title: titleFromAddress(url), markdown: text.trim() };
  }
}
