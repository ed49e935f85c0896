import type { LiveTextKind, LiveTextPointer } from '../../src/domain/live-text';
import { appendToStreamTail, type ModelCallHeartbeat, type StreamTail } from '../../src/domain/model-stream-text';
import type { ChatDelta, ChatProgress } from '../model/chat-model';

/**
 * The last part of what a reply streamed — reasoning, content, native tool calls, in the order
 * they came, a new line where the kind changes and for each further tool call — bounded.
 */
export class StreamedText {
  tail: StreamTail = { text: '', characters: 0 };
  private lastKind: 'reasoning' | 'content' | 'tool' | undefined;
  private readonly namedCalls = new Set<number>();

  /** Appends a delta; returns what was appended (its separator included) and its kind, for the live text. */
  add(delta: ChatDelta): { kind: LiveTextKind; text: string } | undefined {
    if (!delta.text) return undefined;
    const kind = delta.kind === 'tool-name' || delta.kind === 'tool-arguments' ? 'tool' : delta.kind;
    let separator = this.lastKind !== undefined && this.lastKind !== kind ? '\n' : '';
    if (delta.kind === 'tool-name' && !this.namedCalls.has(delta.toolCall ?? 0)) {
      // Each native tool call on a line of its own: its name, then its arguments as they come.
      if (this.lastKind === 'tool') separator = '\n';
      this.namedCalls.add(delta.toolCall ?? 0);
    }
    this.lastKind = kind;
    this.tail = appendToStreamTail(this.tail, separator + delta.text);
    return { kind, text: separator + delta.text };
  }
}

/** Which call an attempt is, and where its live text is served (when the worker serves it). */
export interface CallOfHeartbeat {
  modelCall: number;
  liveText?: LiveTextPointer;
}

/**
 * A model call's heartbeat details: how far it got, and the streamed text's tail once text flows;
 * with `call`, the call's number and the URL of its live text (every heartbeat carries them, since
 * the server keeps only the latest details).
 */
export function heartbeatOf(
  progress: ChatProgress,
  streamed: StreamedText,
  call?: CallOfHeartbeat,
): ModelCallHeartbeat {
  return {
    ...(call ? { modelCall: call.modelCall } : {}),
    ...(call?.liveText ? { liveText: call.liveText } : {}),
    chunks: progress.chunks,
    characters: progress.contentCharacters,
    ...(progress.reasoningCharacters ? { reasoningCharacters: progress.reasoningCharacters } : {}),
    ...(progress.waitingForFirstChunkMs !== undefined
      ? { waitingForFirstTokenSeconds: Math.round(progress.waitingForFirstChunkMs / 1000) }
      : {}),
    ...(streamed.tail.characters ? { streamed: streamed.tail.text, streamedCharacters: streamed.tail.characters } : {}),
  };
}
