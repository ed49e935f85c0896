import { heartbeatIntervalFor } from '../heartbeats';
import {
  DEFAULT_FIRST_CHUNK_LIMIT_MS,
  DEFAULT_STALL_LIMIT_MS,
  type ChatControls,
  type ChatDelta,
  type ChatProgress,
} from './chat-model';

/**
 * How long a model call's stream may stall, and how often it heartbeats while the request is open:
 * the stall limit is `stallSeconds` (the worker's REACT_AGENT_MODEL_STALL_SECONDS), else the heartbeat
 * timeout, else {@link DEFAULT_STALL_LIMIT_MS}; the heartbeats come often enough for the heartbeat
 * timeout ({@link heartbeatIntervalFor}) whatever the stall limit, so a stall limit longer than the
 * heartbeat timeout never times the call out on its heartbeat.
 */
export function modelStreamLimits(
  stallSeconds: number | undefined,
  heartbeatTimeoutMs: number | undefined,
): { stallLimitMs: number; heartbeatIntervalMs: number } {
  const stallLimitMs =
    stallSeconds !== undefined ? stallSeconds * 1000 : (heartbeatTimeoutMs ?? DEFAULT_STALL_LIMIT_MS);
  return { stallLimitMs, heartbeatIntervalMs: heartbeatIntervalFor(heartbeatTimeoutMs ?? stallLimitMs) };
}

/** What a caller of the model knows about its call, for {@link chatControls}. */
export interface ChatControlsOptions {
  /** Aborts the request: the activity's cancellation signal (or the tool's). */
  signal: AbortSignal;
  /**
   * The calling activity's heartbeat timeout (`Context.current().info.heartbeatTimeoutMs`); the
   * heartbeats come often enough for it. Absent or 0: none known, the stall limit's default.
   */
  heartbeatTimeoutMs?: number;
  /** Longest wait for the first chunk, in seconds (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS). Default 300 ({@link DEFAULT_FIRST_CHUNK_LIMIT_MS}). */
  firstTokenSeconds?: number;
  /** Longest gap between two chunks once the reply streams, in seconds (REACT_AGENT_MODEL_STALL_SECONDS). Default: the heartbeat timeout, else 60 ({@link modelStreamLimits}). */
  stallSeconds?: number;
  /** Called after every chunk and every heartbeat interval while the request is open: the caller heartbeats. Default none. */
  onProgress?: (progress: ChatProgress) => void;
  /** Called with every piece of the reply as it arrives. Default none. */
  onDelta?: (delta: ChatDelta) => void;
}

/**
 * The {@link ChatControls} of one model call, the one way every caller builds them (the model
 * activity, compression's summaries, the judge, the visit tool's page summariser): its signal, its
 * first-chunk limit, its stall limit and heartbeat interval ({@link modelStreamLimits}), and the
 * caller's callbacks.
 */
export function chatControls(options: ChatControlsOptions): ChatControls {
  const heartbeatTimeoutMs = options.heartbeatTimeoutMs ? options.heartbeatTimeoutMs : undefined;
  return {
    signal: options.signal,
    firstChunkLimitMs:
      options.firstTokenSeconds !== undefined ? options.firstTokenSeconds * 1000 : DEFAULT_FIRST_CHUNK_LIMIT_MS,
    ...modelStreamLimits(options.stallSeconds, heartbeatTimeoutMs),
    ...(options.onDelta ? { onDelta: options.onDelta } : {}),
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
}
