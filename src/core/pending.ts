import { withUserText, type PendingMessage } from './messages';
import type { RunState } from './run-state';
import { estimateTokens } from './turns';

/**
 * The one owner of a run's pending messages (appended before the next model call) and their
 * token count: every change of `pending`, `pendingTokens` and `pendingCallIds` goes through
 * these functions, so the count always goes with the messages. Pure and workflow-safe.
 */

/** Pending becomes `messages`, counted as `tokens`; `callIds` are the tool calls whose observations they carry. */
export function setPending(
  state: RunState,
  messages: PendingMessage[],
  tokens: number,
  callIds: string[] = [],
): RunState {
  return { ...state, pending: messages, pendingTokens: tokens, pendingCallIds: callIds };
}

/** Nothing pending: the messages went into the conversation. */
export function clearPending(state: RunState): RunState {
  return setPending(state, [], 0);
}

/** Text the workflow writes (a note, a user message, a request), added to the last pending user message or as a new one. */
export function appendPendingText(state: RunState, text: string): RunState {
  return {
    ...state,
    pending: withUserText(state.pending, text),
    pendingTokens: state.pendingTokens + estimateTokens(text),
  };
}

/** Messages added after what is pending, with their token count. */
export function appendPending(state: RunState, messages: PendingMessage[], tokens: number): RunState {
  return { ...state, pending: [...state.pending, ...messages], pendingTokens: state.pendingTokens + tokens };
}

/**
 * Messages put before what is pending without counting them: the short "not run" answers to
 * tool calls that came with an answer the schema refused. Runs recorded before this module
 * counted them so; counting them now could change when compression runs on replay.
 */
export function prependPendingUncounted(state: RunState, messages: PendingMessage[]): RunState {
  return { ...state, pending: [...messages, ...state.pending] };
}

/** Messages injected by the user (update `injectMessage`), added in the order they came. */
export function deliverInjectedMessages(state: RunState, texts: readonly string[]): RunState {
  return texts.reduce((next, text) => appendPendingText(next, `[Message from the user] ${text}`), state);
}
