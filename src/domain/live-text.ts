/**
 * Live text (issue 32): the words of a streaming model call, pushed from the worker that runs it
 * to whoever watches, within moments of leaving the model server, without entering history.
 *
 * The worker serves each `callModel` attempt's text at an unguessable URL (`GET
 * <base>/calls/<token>`) as newline-delimited JSON, one {@link LiveTextLine} a line: the text from
 * the start of the attempt (as far as the worker still holds it), then each piece as it comes,
 * then an `end` line. The attempt's heartbeat details carry the URL (`liveText.url`), so a client
 * that describes the run finds it. Beside it they carry the run's URL on that worker (`GET
 * <base>/runs/<token>`, `liveText.runUrl`): the same lines for every attempt of the run the worker
 * runs, open now or later, each tagged with its activity id and attempt and opened by an
 * `opened` line ({@link RunTextLine}), so a watcher of the run needs no describe for the calls
 * that land there. This module is the wire format both ends share: the lines, their encoding,
 * and a bounded reader of them. Pure: no I/O.
 */

/** What a piece of streamed text is: the model's reasoning, its reply, or a native tool call (name and arguments). */
export type LiveTextKind = 'reasoning' | 'content' | 'tool';

/** One piece of a run's live text, as a client reads it. */
export interface LiveTextChunk {
  /** The run's model call number (1 for the first) the text belongs to. */
  call: number;
  /**
   * What the text is. `'tail'` when it came from the heartbeat details (the fallback), where
   * reasoning, content and tool calls are mixed in one bounded tail.
   */
  kind: LiveTextKind | 'tail';
  /** The text; a new kind, and each further tool call, starts on a new line (`'\n'` leads the text). */
  text: string;
}

/** A piece of text on the wire. */
export interface LiveTextPieceLine {
  call: number;
  kind: LiveTextKind;
  text: string;
}

/** Characters the watcher did not get (it fell behind, or joined after the worker dropped them). */
export interface LiveTextGapLine {
  skipped: number;
}

/** The attempt ended; nothing follows. `outcome` is `'completed'` or `'failed'` (a failed or cancelled attempt). */
export interface LiveTextEndLine {
  end: 'completed' | 'failed';
}

/** One line of a live text stream. */
export type LiveTextLine = LiveTextPieceLine | LiveTextGapLine | LiveTextEndLine;

/** The heartbeat details' pointer to the attempt's live text. */
export interface LiveTextPointer {
  /** Where to `GET` the stream (`http://host:port/calls/<32 hex digits>`). */
  url: string;
  /**
   * Where to `GET` the run's stream on the same worker (`http://host:port/runs/<64 hex digits>`):
   * every model-call attempt of the run that this worker runs, open now or from now on, each line
   * tagged with its call ({@link RunTextLine}). Absent from workers before it was added.
   */
  runUrl?: string;
}

/** An attempt of a model call opened on the worker (the first line of it on a run stream). */
export interface RunTextOpenedLine {
  opened: true;
  call: number;
}

/**
 * One line of a run stream (`GET <base>/runs/<token>`): a call stream's line, or an attempt's
 * opening, tagged with the attempt it belongs to (the `callModel` activity id and attempt).
 */
export interface RunTextLine {
  activityId: string;
  attempt: number;
  line: LiveTextLine | RunTextOpenedLine;
}

/** The content type of the stream. */
export const LIVE_TEXT_CONTENT_TYPE = 'application/x-ndjson; charset=utf-8';

/** Longest line the worker writes, in characters of text per piece (longer pieces are split). */
export const LIVE_TEXT_PIECE_CHARACTERS = 16_384;

/** Longest line a reader accepts, in bytes (a piece of the longest text, JSON-escaped, fits). */
export const LIVE_TEXT_MAX_LINE_BYTES = 256 * 1024;

/** Longest URL a reader takes from heartbeat details. */
export const LIVE_TEXT_MAX_URL_LENGTH = 2_048;

/** The path of an attempt's stream under the worker's base URL. */
export const LIVE_TEXT_PATH_PATTERN = /^\/calls\/([0-9a-f]{32})$/;

/** The path of a run's stream under the worker's base URL. */
export const RUN_TEXT_PATH_PATTERN = /^\/runs\/([0-9a-f]{64})$/;

/** Longest activity id a run stream's line may carry. */
const MAX_ACTIVITY_ID_LENGTH = 256;

const KINDS: ReadonlySet<string> = new Set(['reasoning', 'content', 'tool']);

/** A line as the worker writes it (JSON and a newline). */
export function encodeLiveTextLine(line: LiveTextLine): string {
  return `${JSON.stringify(line)}\n`;
}

/** `text` split into pieces of at most {@link LIVE_TEXT_PIECE_CHARACTERS} characters (never inside a surrogate pair). */
export function liveTextPieces(text: string, limit = LIVE_TEXT_PIECE_CHARACTERS): string[] {
  const pieces: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    let cut = limit;
    const code = rest.charCodeAt(cut - 1);
    if (code >= 0xd800 && code <= 0xdbff) cut -= 1;
    pieces.push(rest.slice(0, cut));
    rest = rest.slice(cut);
  }
  if (rest) pieces.push(rest);
  return pieces;
}

/** The line a text line of the stream holds; throws on anything else (the stream is not to be trusted further). */
export function parseLiveTextLine(text: string): LiveTextLine {
  return liveTextLineOf(jsonObjectOf(text));
}

function jsonObjectOf(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error('live text: a line is not JSON');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error('live text: a line is not an object');
  return value as Record<string, unknown>;
}

function liveTextLineOf(line: Record<string, unknown>): LiveTextLine {
  if (typeof line.text === 'string') {
    if (typeof line.kind !== 'string' || !KINDS.has(line.kind)) throw new Error('live text: unknown kind');
    if (!Number.isSafeInteger(line.call) || (line.call as number) < 0) throw new Error('live text: bad call number');
    return { call: line.call as number, kind: line.kind as LiveTextKind, text: line.text };
  }
  if (line.skipped !== undefined) {
    if (!Number.isSafeInteger(line.skipped) || (line.skipped as number) < 0) throw new Error('live text: bad gap');
    return { skipped: line.skipped as number };
  }
  if (line.end === 'completed' || line.end === 'failed') return { end: line.end };
  throw new Error('live text: unknown line');
}

/**
 * What a run stream's line holds (`{"activityId":"5","attempt":1,` then a call stream's line's
 * fields, or `"call":3,"opened":true}`); throws on anything else.
 */
export function parseRunTextLine(text: string): RunTextLine {
  const { activityId, attempt, opened, ...rest } = jsonObjectOf(text);
  if (typeof activityId !== 'string' || !activityId || activityId.length > MAX_ACTIVITY_ID_LENGTH)
    throw new Error('live text: bad activity id');
  if (!Number.isSafeInteger(attempt) || (attempt as number) < 1) throw new Error('live text: bad attempt');
  if (opened !== undefined) {
    if (opened !== true || !Number.isSafeInteger(rest.call) || (rest.call as number) < 0)
      throw new Error('live text: bad opening');
    return { activityId, attempt: attempt as number, line: { opened: true, call: rest.call as number } };
  }
  return { activityId, attempt: attempt as number, line: liveTextLineOf(rest) };
}

/**
 * The prefix that makes a call stream's line a run stream's line for this attempt: the line's
 * `{` replaced by it (`runTextPrefix('5', 1) + line.slice(1)`), so the worker tags a line it
 * encoded once without encoding it again.
 */
export function runTextPrefix(activityId: string, attempt: number): string {
  return `{"activityId":${JSON.stringify(activityId)},"attempt":${attempt},`;
}

/** The line that opens an attempt on a run stream. */
export function encodeRunTextOpened(activityId: string, attempt: number, call: number): string {
  return `${runTextPrefix(activityId, attempt)}"call":${call},"opened":true}\n`;
}

/**
 * Turns the bytes of a stream, as they arrive in any pieces, into its lines. Bounded: a line
 * longer than `maxLineBytes` throws (so a hostile or broken peer cannot make a reader hold more).
 */
export class LiveTextLineReader<Line = LiveTextLine> {
  private readonly decoder = new TextDecoder('utf-8', { fatal: false });
  private held = '';

  constructor(
    private readonly maxLineBytes = LIVE_TEXT_MAX_LINE_BYTES,
    /** How a line is read: {@link parseLiveTextLine} (a call's stream) by default, {@link parseRunTextLine} for a run's. */
    private readonly parse: (text: string) => Line = parseLiveTextLine as unknown as (text: string) => Line,
  ) {}

  /** The whole lines `bytes` completes. */
  read(bytes: Uint8Array): Line[] {
    this.held += this.decoder.decode(bytes, { stream: true });
    const lines: Line[] = [];
    for (let newline = this.held.indexOf('\n'); newline !== -1; newline = this.held.indexOf('\n')) {
      const text = this.held.slice(0, newline);
      this.held = this.held.slice(newline + 1);
      if (text.trim()) lines.push(this.parse(text));
    }
    // A character is at most 3 bytes of UTF-8 in a JS string's unit: a cheap upper bound, exact enough.
    if (this.held.length > this.maxLineBytes)
      throw new Error(`live text: a line is longer than ${this.maxLineBytes} bytes`);
    return lines;
  }
}

/** The live text pointer in heartbeat details, if they carry a readable http(s) URL. */
export function liveTextPointerOfDetails(details: unknown): LiveTextPointer | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { liveText } = details as Record<string, unknown>;
  if (typeof liveText !== 'object' || liveText === null) return undefined;
  const { url } = liveText as Record<string, unknown>;
  if (typeof url !== 'string' || url.length > LIVE_TEXT_MAX_URL_LENGTH) return undefined;
  if (!/^https?:\/\/[^\s/]+\/(?:[^\s]*\/)?calls\/[0-9a-f]{32}$/.test(url)) return undefined;
  const { runUrl } = liveText as Record<string, unknown>;
  const runUrlReadable =
    typeof runUrl === 'string' &&
    runUrl.length <= LIVE_TEXT_MAX_URL_LENGTH &&
    /^https?:\/\/[^\s/]+\/(?:[^\s]*\/)?runs\/[0-9a-f]{64}$/.test(runUrl);
  return runUrlReadable ? { url, runUrl } : { url };
}

/** The model call number in heartbeat details (`modelCall`), if any. */
export function modelCallOfDetails(details: unknown): number | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { modelCall } = details as Record<string, unknown>;
  return Number.isSafeInteger(modelCall) && (modelCall as number) >= 0 ? (modelCall as number) : undefined;
}
