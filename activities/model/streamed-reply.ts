import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { FailureTypes } from '../../src/core/failure-types';
import type { NativeToolCall, ProviderState } from '../../src/core/messages';
import type { SecretRedactor } from '../../src/domain/secret-redaction';
import { ModelStreamLimitError } from './bounded-event-stream';
import {
  DEFAULT_FIRST_CHUNK_LIMIT_MS,
  DEFAULT_PROGRESS_INTERVAL_MS,
  DEFAULT_STALL_LIMIT_MS,
  type ChatControls,
  type ChatProgress,
  type ChatReply,
  type ChatUsage,
} from './chat-model';
import { ModelStreamWatchdog } from './stream-watchdog';

/**
 * The stream loop every API's {@link ChatModel} shares once its SDK yields events (issue 31): the
 * watchdog (heartbeats while the request is open, the first-chunk and stall limits), the count of
 * the reply's bytes against REACT_AGENT_MODEL_MAX_REPLY_BYTES, the bounded body's refusal
 * (`bounded-event-stream.ts`), cancellation, and the failures of each way a stream can end badly.
 * What an event means is the API's own ({@link StreamedReplyOptions.read}); it adds to a
 * {@link ReplyBuilder}.
 */

/** The reply as the events build it, with the callbacks for what streams. */
export class ReplyBuilder {
  content = '';
  reasoning = '';
  /** By the API's own index of each call in the reply (0-based, in order). */
  readonly toolCalls: NativeToolCall[] = [];
  finishReason = '';
  usage: ChatUsage | undefined;
  provider: ProviderState | undefined;
  chunks = 0;
  private replyBytes = 0;
  /** Set once the reply's text passed its limit. */
  tooLarge: ApplicationFailure | undefined;

  constructor(
    private readonly controls: ChatControls,
    private readonly maxReplyBytes: number,
  ) {}

  /** Counts a piece of the reply's text; false once the reply is larger than it may be (the loop then stops). */
  private taken(text: string): boolean {
    this.replyBytes += Buffer.byteLength(text);
    if (this.replyBytes > this.maxReplyBytes && !this.tooLarge)
      this.tooLarge = replyTooLarge(
        `its text passed ${this.maxReplyBytes} bytes (REACT_AGENT_MODEL_MAX_REPLY_BYTES) after ${this.chunks} chunks`,
      );
    return this.tooLarge === undefined;
  }

  addContent(text: string): boolean {
    if (!text || !this.taken(text)) return !this.tooLarge;
    this.content += text;
    this.controls.onDelta?.({ kind: 'content', text });
    return true;
  }

  addReasoning(text: string): boolean {
    if (!text || !this.taken(text)) return !this.tooLarge;
    this.reasoning += text;
    this.controls.onDelta?.({ kind: 'reasoning', text });
    return true;
  }

  /** Starts or continues native tool call `index` with its id, a piece of its name, a piece of its arguments. */
  addToolCall(index: number, piece: { id?: string; name?: string; arguments?: string }): boolean {
    if (!this.taken(piece.name ?? '') || !this.taken(piece.arguments ?? '')) return false;
    const call = (this.toolCalls[index] ??= { id: '', name: '', arguments: '' });
    if (piece.id) call.id = piece.id;
    if (piece.name) {
      call.name += piece.name;
      this.controls.onDelta?.({ kind: 'tool-name', text: piece.name, toolCall: index });
    }
    if (piece.arguments) {
      call.arguments += piece.arguments;
      this.controls.onDelta?.({ kind: 'tool-arguments', text: piece.arguments, toolCall: index });
    }
    return true;
  }

  /** Counts opaque provider data (signatures, encrypted reasoning) against the limit too. */
  countOpaque(text: string): boolean {
    return this.taken(text);
  }

  progress(waitingForFirstChunkMs: number): ChatProgress {
    return {
      chunks: this.chunks,
      contentCharacters: this.content.length,
      reasoningCharacters: this.reasoning.length,
      ...(this.chunks === 0 ? { waitingForFirstChunkMs } : {}),
    };
  }

  reply(): ChatReply {
    return {
      content: this.content,
      reasoning: this.reasoning,
      toolCalls: this.toolCalls.filter(Boolean),
      finishReason: this.finishReason,
      ...(this.usage ? { usage: this.usage } : {}),
      ...(this.provider ? { provider: this.provider } : {}),
      chunks: this.chunks,
    };
  }
}

/** What {@link readStreamedReply} needs of an API. */
export interface StreamedReplyOptions<Event> {
  controls: ChatControls;
  /** REACT_AGENT_MODEL_MAX_REPLY_BYTES. */
  maxReplyBytes: number;
  /** The stream's line limit and its whole-body multiple, for the failure's message. */
  streamBytesPerReplyByte: number;
  /** Sends the request; its events as the SDK yields them. Aborting `signal` must end them. */
  open: (signal: AbortSignal) => Promise<AsyncIterable<Event>>;
  /** Reads one event into the builder; false to stop reading (the reply is too large). */
  read: (event: Event, reply: ReplyBuilder) => boolean;
  /** What the SDK threw, as a typed failure. */
  classify: (error: unknown) => ApplicationFailure;
  /** Takes the key out of the failure's message. */
  redactor: SecretRedactor;
}

/** Sends a request and reads its stream to the end into a {@link ChatReply}, or throws the failure it ended with. */
export async function readStreamedReply<Event>(options: StreamedReplyOptions<Event>): Promise<ChatReply> {
  const { controls } = options;
  const firstChunkLimitMs = controls.firstChunkLimitMs ?? DEFAULT_FIRST_CHUNK_LIMIT_MS;
  const stallLimitMs = controls.stallLimitMs ?? DEFAULT_STALL_LIMIT_MS;
  const requestAbort = new AbortController();
  const signal = AbortSignal.any([controls.signal, requestAbort.signal]);
  const builder = new ReplyBuilder(controls, options.maxReplyBytes);
  const watchdog = new ModelStreamWatchdog({
    firstTokenLimitMs: firstChunkLimitMs,
    stallLimitMs,
    ...(controls.heartbeatIntervalMs !== undefined ? { heartbeatIntervalMs: controls.heartbeatIntervalMs } : {}),
    heartbeat: () => controls.onProgress?.(builder.progress(watchdog.waitForFirstChunkMs)),
    abandon: () => requestAbort.abort(),
  });
  const progressIntervalMs = controls.progressIntervalMs ?? DEFAULT_PROGRESS_INTERVAL_MS;
  let progressSentAt = Number.NEGATIVE_INFINITY;
  let progressHeld = false;
  try {
    const events = await options.open(signal);
    for await (const event of events) {
      watchdog.chunkArrived();
      builder.chunks += 1;
      // Leaving the loop aborts the request.
      if (!options.read(event, builder) || builder.tooLarge) break;
      const now = Date.now();
      progressHeld = now - progressSentAt < progressIntervalMs;
      if (!progressHeld) {
        progressSentAt = now;
        controls.onProgress?.(builder.progress(0));
      }
    }
    if (progressHeld && !builder.tooLarge) controls.onProgress?.(builder.progress(0));
  } catch (error) {
    if (error instanceof ModelStreamLimitError) {
      const line = error.limit === 'line';
      builder.tooLarge = replyTooLarge(
        `${line ? 'one line of its stream' : 'its stream'} passed ${error.limitBytes} bytes (${line ? 'REACT_AGENT_MODEL_MAX_LINE_BYTES' : `${options.streamBytesPerReplyByte} × REACT_AGENT_MODEL_MAX_REPLY_BYTES`}) after ${builder.chunks} chunks`,
      );
    } else if (!controls.signal.aborted && !watchdog.abandoned)
      throw options.redactor.redactError(options.classify(error));
  } finally {
    // Leaving the loop early (a break) ends the request: both SDKs' streams abort it then.
    watchdog.stop();
  }
  // An aborted stream can end quietly instead of throwing, so these are checked either way.
  if (controls.signal.aborted) throw abortReason(controls.signal);
  if (builder.tooLarge) throw builder.tooLarge;
  if (watchdog.abandoned === 'first-token') {
    throw ApplicationFailure.create({
      type: FailureTypes.modelFirstTokenTimeout,
      message:
        `The model sent no reply within ${firstChunkLimitMs / 1000} s (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS); ` +
        'a slow server can take this long to read a long prompt. Abandoned to be retried.',
    });
  }
  if (watchdog.abandoned === 'stall') {
    throw ApplicationFailure.create({
      type: FailureTypes.modelBadResponse,
      message: `The model stream sent nothing for ${stallLimitMs / 1000} s (its stall limit) after ${builder.chunks} chunks; abandoned to be retried.`,
    });
  }
  if (!builder.finishReason) {
    throw ApplicationFailure.create({
      type: FailureTypes.modelBadResponse,
      message: `The model stream ended after ${builder.chunks} chunks without a finish reason; retrying.`,
    });
  }
  return builder.reply();
}

/** The failure of a reply larger than the worker takes: not retried (the server would be paid to send it again). */
export function replyTooLarge(what: string): ApplicationFailure {
  return ApplicationFailure.create({
    type: FailureTypes.modelReplyTooLarge,
    message: `The model's reply was too large: ${what}. The call was abandoned and is not retried.`,
    nonRetryable: true,
  });
}

/** The reason a signal aborted with, as an Error (Temporal's cancellation when it is not one). */
export function abortReason(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  return reason instanceof Error ? reason : new CancelledFailure('Activity cancelled');
}
