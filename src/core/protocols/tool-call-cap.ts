import type { ToolCallRequest } from './protocol';

/**
 * Tool calls of one model reply that run, whatever the protocol: the first this many; the calls
 * past them run nothing, and the first of them is answered for all with {@link callOverCap}'s
 * observation (in native tool calling the rest are left out of the stored reply, {@link keptToolCalls}). A reply of ten
 * thousand calls would otherwise schedule ten thousand activities and fill the run's history
 * (issue 28). The worker sets it with `REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY`; default 8.
 */
export const DEFAULT_MAX_TOOL_CALLS_PER_REPLY = 8;

/** The most `REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY` may be. */
export const MAX_TOOL_CALLS_PER_REPLY_LIMIT = 1_000;

/**
 * The native tool calls of a reply that stay in the conversation: those that run and the first
 * past the cap, whose answer speaks for the rest. The API wants a tool message for every call the
 * assistant message holds, so the calls after it are left out of the stored reply rather than
 * each answered: ten thousand answers made a model call's result and the next one's input over a
 * megabyte each, near Temporal's 2 MB payload limit.
 */
export function keptToolCalls<Call>(calls: readonly Call[], cap: number): Call[] {
  return calls.slice(0, cap + 1);
}

/**
 * The first call past the cap: no name or arguments kept, answered with why it did not run and
 * how many calls after it did not run either (`after`), so one observation answers for all of them.
 */
export function callOverCap(id: string, cap: number, after = 0): ToolCallRequest {
  const rest = after > 0 ? `, nor the ${after} after it` : '';
  return {
    id,
    name: '',
    arguments: {},
    problem: `Error: at most ${cap} tool calls are run per turn; this one was not run${rest}.`,
  };
}
