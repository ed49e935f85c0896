import type { ToolCallRequest } from './protocol';

/**
 * Tool calls of one model reply that run, whatever the protocol: the first this many; each call
 * past them is answered with {@link callOverCap}'s observation and runs nothing. A reply of ten
 * thousand calls would otherwise schedule ten thousand activities and fill the run's history
 * (issue 28). The worker sets it with `REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY`; default 8.
 */
export const DEFAULT_MAX_TOOL_CALLS_PER_REPLY = 8;

/** The most `REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY` may be. */
export const MAX_TOOL_CALLS_PER_REPLY_LIMIT = 1_000;

/** A call past the cap: no name or arguments kept, answered with why it did not run. */
export function callOverCap(id: string, cap: number): ToolCallRequest {
  return { id, name: '', arguments: {}, problem: `Error: at most ${cap} tool calls are run per turn; this one was not run.` };
}
