/**
 * The text of a model call while it streams, as the `callModel` activity puts it in its heartbeat
 * details (never in history): the last part of what arrived, bounded in size, and how many
 * characters arrived in all, so a reader that saw part of it can print only what is new.
 */
import type { ModelLimitReason } from '../core/model-limits/model-limit';

/** At most this many characters of streamed text ride in a heartbeat (the details stay small). */
export const STREAM_TAIL_CHARACTERS = 2_000;

/** The heartbeat details of a `callModel` attempt. */
export interface ModelCallHeartbeat {
  /** The run's model call number (issue 32; absent in details of older workers). */
  modelCall?: number;
  /** Where the worker serves the attempt's live text (issue 32; `src/domain/live-text.ts`); absent when it does not. */
  liveText?: { url: string };
  /** Chunks received so far. */
  chunks: number;
  /** Characters of the reply's content so far. */
  characters: number;
  /** Characters of reasoning streamed apart from the content, when there is any. */
  reasoningCharacters?: number;
  /** While no chunk has come: seconds waited for it. */
  waitingForFirstTokenSeconds?: number;
  /**
   * The last {@link STREAM_TAIL_CHARACTERS} (at most) of the text streamed so far: reasoning,
   * content and native tool calls in the order they arrived. Absent before any text.
   */
  streamed?: string;
  /** Characters of streamed text in all (where `streamed` ends); absent before any text. */
  streamedCharacters?: number;
  /**
   * Before the request is sent: the call waits for the model's shared limit
   * (`REACT_AGENT_MODEL_LIMITS`, issue 33) — seconds left, the model, and which limit.
   */
  waitingForModelLimit?: ModelLimitWait;
}

/** A model call waiting for its model's shared limit (heartbeat details). */
export interface ModelLimitWait {
  seconds: number;
  model: string;
  limit: ModelLimitReason;
}

/** How a limit reads in `follow`, `status` and logs. */
export function describeLimitReason(reason: ModelLimitReason | undefined): string {
  switch (reason) {
    case 'requests':
      return 'requests-per-minute limit';
    case 'share':
      return "batch's share of its limits";
    case 'pause':
      return 'pause after a 429';
    default:
      return 'tokens-per-minute limit';
  }
}

/** "waiting 12 s for gpt-x's tokens-per-minute limit", for heartbeat details that say a call waits; else undefined. */
export function modelLimitWaitOfDetails(details: unknown): string | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const wait = (details as Record<string, unknown>).waitingForModelLimit;
  if (typeof wait !== 'object' || wait === null) return undefined;
  const { seconds, model, limit } = wait as Record<string, unknown>;
  if (typeof seconds !== 'number' || !Number.isFinite(seconds) || typeof model !== 'string') return undefined;
  const reason = (['tokens', 'requests', 'share', 'pause'] as const).find((known) => known === limit);
  return `waiting ${Math.max(0, Math.round(seconds))} s for ${model.slice(0, 100)}'s ${describeLimitReason(reason)}`;
}

/** The streamed text of one attempt, kept bounded: what the heartbeat details carry. */
export interface StreamTail {
  /** The last characters (at most the limit). */
  text: string;
  /** Characters appended in all. */
  characters: number;
}

const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** `tail` with `addition` appended, cut to its last `limit` characters (never starting inside a surrogate pair). */
export function appendToStreamTail(tail: StreamTail, addition: string, limit = STREAM_TAIL_CHARACTERS): StreamTail {
  if (!addition) return tail;
  let text = tail.text.length + addition.length > limit ? (tail.text + addition).slice(-limit) : tail.text + addition;
  if (text.length && isLowSurrogate(text.charCodeAt(0)) && tail.text.length + addition.length > limit)
    text = text.slice(1);
  return { text, characters: tail.characters + addition.length };
}

/** The streamed text in heartbeat details, if they carry any readable text. */
export function streamTailOfDetails(details: unknown): StreamTail | undefined {
  if (typeof details !== 'object' || details === null) return undefined;
  const { streamed, streamedCharacters } = details as Record<string, unknown>;
  if (typeof streamed !== 'string' || typeof streamedCharacters !== 'number' || !Number.isFinite(streamedCharacters))
    return undefined;
  if (streamedCharacters < streamed.length) return undefined;
  return { text: streamed, characters: streamedCharacters };
}

/** What a reader prints of a stream tail, given how far it printed before. */
export interface StreamIncrement {
  /** The new text to print ('' when nothing is new). */
  text: string;
  /** Characters that went by unseen before `text` (the tail had moved on past them). */
  skipped: number;
  /** Where the reader has printed up to now. */
  printedCharacters: number;
}

/**
 * The part of `tail` a reader has not printed yet. `printedCharacters` undefined means it printed
 * nothing of this attempt (a follow started late, or reconnected): it gets all the tail holds,
 * and `skipped` counts what came before. Details older than what was printed give nothing.
 */
export function streamIncrement(printedCharacters: number | undefined, tail: StreamTail): StreamIncrement {
  const printed = printedCharacters ?? 0;
  if (tail.characters <= printed) return { text: '', skipped: 0, printedCharacters: Math.max(printed, 0) };
  const unseen = tail.characters - printed;
  const text = unseen >= tail.text.length ? tail.text : tail.text.slice(tail.text.length - unseen);
  return { text, skipped: unseen - text.length, printedCharacters: tail.characters };
}
