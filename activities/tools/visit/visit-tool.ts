import { pathToFileURL } from 'node:url';
import { ToolInputError, type ToolContext, type ToolDefinition } from '../tool-definition';
import { readLocalFile } from './local-file-reader';
import { fetchPage } from './page-fetcher';
import type { PageSummarizer, PageSummary } from './page-summarizer';
import {
  DEFAULT_ALLOWED_CONTENT_TYPES,
  extractReadableContent,
  type DocumentLimits,
  formatOfContentType,
  formatOfFileName,
  isUndeclaredContentType,
  sniffFormat,
  type ReadableDocument,
} from './readable-content';
import { parseVisitTarget } from './visit-target';

/** How the visit tool fetches and reads pages. Every field is optional. */
export interface VisitToolOptions {
  /**
   * Most bytes read of one page or file (after decompression); the body is streamed and
   * reading stops here, with a note in the output. Default 5 MB (5,242,880).
   */
  maxBytes?: number;
  /** Longest one page may take to fetch, redirects included, in milliseconds. Default 30,000. */
  timeoutMs?: number;
  /** Redirects followed per page; every hop is checked by the SSRF guard. Default 5. */
  maxRedirects?: number;
  /**
   * Content types (without parameters) that are read; anything else is refused before its body
   * is downloaded. A response without a type (or `application/octet-stream`) is sniffed.
   * Default: text/html, application/xhtml+xml, text/plain, text/markdown, application/json,
   * application/pdf (text through unpdf).
   */
  allowedContentTypes?: readonly string[];
  /**
   * Allow loopback, private (RFC 1918, fc00::/7), link-local (incl. 169.254.169.254), CGNAT and
   * other non-public addresses. Default false.
   */
  allowPrivateNetworks?: boolean;
  /**
   * Hosts that bypass the SSRF guard, e.g. a company intranet: exact names or IP literals,
   * case-insensitive; an entry starting with `.` also matches every subdomain. Default none.
   */
  allowedHosts?: readonly string[];
  /** Sent as `user-agent`. Default {@link DEFAULT_VISIT_USER_AGENT}. */
  userAgent?: string;
  /**
   * Directories whose files may be read through `file://` URLs or plain paths (symbolic links
   * are resolved and must stay inside). Default none: local files are refused.
   */
  localFileDirectories?: readonly string[];
  /**
   * Goal-directed extraction: when set and the call has a `goal`, each page is returned as the
   * evidence and summary for that goal instead of the whole text. Default none.
   */
  summarizer?: PageSummarizer;
  /**
   * The limits of reading a PDF, in a worker thread of its own (text, heap, binary allocations,
   * time); see `IsolatedExtractionOptions` for each default.
   */
  documentLimits?: DocumentLimits;
}

/** Default of {@link VisitToolOptions.maxBytes}: 5 MB. */
export const DEFAULT_VISIT_MAX_BYTES = 5 * 1024 * 1024;
/** Default of {@link VisitToolOptions.timeoutMs}: 30 s. */
export const DEFAULT_VISIT_TIMEOUT_MS = 30_000;
/** Default of {@link VisitToolOptions.maxRedirects}. */
export const DEFAULT_VISIT_MAX_REDIRECTS = 5;
/** Default of {@link VisitToolOptions.userAgent}. */
export const DEFAULT_VISIT_USER_AGENT = 'Mozilla/5.0 (compatible; DurableReactAgent/0.1; research agent visit tool)';

/** Separates the pages of one call, as DeepResearch does. */
const PAGE_SEPARATOR = '\n\n=======\n\n';

interface ResolvedVisitOptions {
  maxBytes: number;
  timeoutMs: number;
  maxRedirects: number;
  allowedContentTypes: readonly string[];
  allowPrivateNetworks: boolean;
  allowedHosts: readonly string[];
  userAgent: string;
  localFileDirectories: readonly string[];
  summarizer?: PageSummarizer;
  documentLimits: DocumentLimits;
}

function positive(name: string, value: number | undefined, fallback: number, allowZero = false): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0 || (!allowZero && value === 0))
    throw new RangeError(`visit tool option ${name} must be a positive number, got ${value}`);
  return value;
}

function resolveOptions(options: VisitToolOptions): ResolvedVisitOptions {
  return {
    maxBytes: positive('maxBytes', options.maxBytes, DEFAULT_VISIT_MAX_BYTES),
    timeoutMs: positive('timeoutMs', options.timeoutMs, DEFAULT_VISIT_TIMEOUT_MS),
    maxRedirects: positive('maxRedirects', options.maxRedirects, DEFAULT_VISIT_MAX_REDIRECTS, true),
    allowedContentTypes: (options.allowedContentTypes ?? DEFAULT_ALLOWED_CONTENT_TYPES).map((type) =>
      type.trim().toLowerCase(),
    ),
    allowPrivateNetworks: options.allowPrivateNetworks ?? false,
    allowedHosts: options.allowedHosts ?? [],
    userAgent: options.userAgent ?? DEFAULT_VISIT_USER_AGENT,
    localFileDirectories: options.localFileDirectories ?? [],
    ...(options.summarizer ? { summarizer: options.summarizer } : {}),
    documentLimits: options.documentLimits ?? {},
  };
}

/** A page read and converted, before any summary. */
interface ReadPage extends ReadableDocument {
  finalUrl: string;
  truncated: boolean;
}

function formatBytes(bytes: number): string {
  const megabytes = bytes / (1024 * 1024);
  const size = megabytes >= 1 ? `${Number(megabytes.toFixed(1))} MB` : `${Math.round(bytes / 1024)} KB`;
  return `${size} (${bytes.toLocaleString('en-US')} bytes)`;
}

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\.$/, '');
}

function formatSummary(goal: string, summary: PageSummary): string {
  if (!summary.evidence) return `Goal: ${goal}\n\n${summary.summary || '(the extraction returned nothing)'}`;
  return `Goal: ${goal}\n\nEvidence:\n${summary.evidence}\n\nSummary:\n${summary.summary}`;
}

/**
 * The `visit` tool (as DeepResearch's): fetches one or more web pages (or allowed local files)
 * and returns each as `## <title>\nURL: <final url>\n\n<markdown>` — or, with a `goal` and a
 * summarizer, the evidence and summary for that goal. Every web address, and every redirect
 * hop, passes the SSRF guard; bodies are capped at `maxBytes`; each page has its own timeout.
 * A page that cannot be read is reported inline ("could not visit X: reason") so the others
 * still count; when none can be read the call fails with a `ToolInputError` (an observation,
 * not a retry). A failing summarizer throws a plain Error, which Temporal retries.
 */
export function createVisitTool(options: VisitToolOptions = {}): ToolDefinition {
  const settings = resolveOptions(options);
  const localFiles = settings.localFileDirectories.length > 0;

  async function readWebPage(url: URL, signal: AbortSignal): Promise<ReadPage> {
    const timeout = AbortSignal.timeout(settings.timeoutMs);
    try {
      const page = await fetchPage(url, {
        maxBytes: settings.maxBytes,
        maxRedirects: settings.maxRedirects,
        userAgent: settings.userAgent,
        accept:
          'text/html,application/xhtml+xml,text/markdown;q=0.9,text/plain;q=0.9,application/json;q=0.8,application/pdf;q=0.8,*/*;q=0.1',
        allowPrivateNetworks: settings.allowPrivateNetworks,
        allowedHosts: settings.allowedHosts,
        signal: AbortSignal.any([signal, timeout]),
        checkContentType(contentType) {
          if (isUndeclaredContentType(contentType) || settings.allowedContentTypes.includes(contentType)) return;
          throw new Error(
            `its content type ${contentType} cannot be read as text (readable types: ${settings.allowedContentTypes.join(', ')})`,
          );
        },
      });
      const format = isUndeclaredContentType(page.contentType)
        ? sniffFormat(page.body)
        : formatOfContentType(page.contentType);
      if (!format) throw new Error('the response is binary and declares no readable content type');
      const document = await extractReadableContent(
        page.body,
        { format, url: page.finalUrl, truncated: page.truncated, ...(page.charset ? { charset: page.charset } : {}) },
        { ...settings.documentLimits, signal },
      );
      return { ...document, finalUrl: page.finalUrl, truncated: page.truncated };
    } catch (error) {
      if (signal.aborted) throw signal.reason ?? error;
      if (timeout.aborted) throw new Error(`timed out after ${settings.timeoutMs / 1000} s`);
      throw error;
    }
  }

  async function readFile(reference: string, signal: AbortSignal): Promise<ReadPage> {
    const file = await readLocalFile(reference, settings.localFileDirectories, settings.maxBytes);
    const format = formatOfFileName(file.path) ?? sniffFormat(file.body);
    if (!format) throw new Error('it is a binary file and cannot be read as text');
    const finalUrl = pathToFileURL(file.path).href;
    const document = await extractReadableContent(
      file.body,
      { format, url: finalUrl, truncated: file.truncated },
      { ...settings.documentLimits, signal },
    );
    return { ...document, finalUrl, truncated: file.truncated };
  }

  async function read(entry: string, signal: AbortSignal): Promise<ReadPage> {
    const target = parseVisitTarget(entry);
    return target.kind === 'file' ? readFile(target.reference, signal) : readWebPage(target.url, signal);
  }

  async function render(page: ReadPage, goal: string | undefined, context: ToolContext): Promise<string> {
    let body = page.markdown.trim();
    if (!body) body = '(the page has no readable text)';
    else if (goal && settings.summarizer) {
      const summary = await settings.summarizer.summarize(
        { goal, url: page.finalUrl, title: page.title, markdown: body },
        context,
      );
      body = formatSummary(goal, summary);
    }
    const note = page.truncated
      ? `\n\n[Truncated: only the first ${formatBytes(settings.maxBytes)} were read; the rest was not downloaded.]`
      : '';
    return `## ${page.title || page.finalUrl}\nURL: ${page.finalUrl}\n\n${body}${note}`;
  }

  return {
    name: 'visit',
    description:
      'Visit webpage(s) and return their readable content as markdown; with a goal, return the evidence and summary relevant to it.' +
      (localFiles ? ' Also reads local files given as file:// URLs or paths inside the allowed directories.' : ''),
    parameters: {
      type: 'object',
      properties: {
        url: {
          type: ['string', 'array'],
          items: { type: 'string' },
          minItems: 1,
          description:
            'The URL(s) of the webpage(s) to visit: one URL or an array of URLs.' +
            (localFiles ? ' file:// URLs and paths of allowed local files work too.' : ''),
        },
        goal: { type: 'string', description: 'What you want to find on the page(s).' },
      },
      required: ['url'],
      additionalProperties: false,
    },
    activity: { startToCloseSeconds: 900 },
    async run(args, context) {
      const entries = typeof args.url === 'string' ? [args.url] : args.url;
      if (
        !Array.isArray(entries) ||
        entries.length === 0 ||
        !entries.every((entry): entry is string => typeof entry === 'string')
      ) {
        throw new ToolInputError('"url" must be a URL or a non-empty array of URLs (strings).');
      }
      const goal = typeof args.goal === 'string' && args.goal.trim() ? args.goal.trim() : undefined;

      const sections: string[] = [];
      let failures = 0;
      for (const [index, entry] of entries.entries()) {
        if (context.signal.aborted) throw context.signal.reason;
        context.heartbeat({ visiting: entry, page: index + 1, of: entries.length });
        let page: ReadPage;
        try {
          page = await read(entry, context.signal);
        } catch (error) {
          if (context.signal.aborted) throw context.signal.reason ?? error;
          failures += 1;
          sections.push(`could not visit ${entry}: ${reasonOf(error)}.`);
          continue;
        }
        sections.push(await render(page, goal, context));
      }
      const output = sections.join(PAGE_SEPARATOR);
      if (failures === entries.length) throw new ToolInputError(output);
      return output;
    },
  };
}
