/**
 * The one vocabulary for why a run ended. It appears in the run result, in the
 * `ReactTermination` search attribute and in the CLI.
 *
 * - `answer`: the model gave an `<answer>`.
 * - `max_calls`: the model-call budget ran out.
 * - `timeout`: the wall-time budget (measured in workflow time) ran out.
 * - `token_limit`: the context grew past the token budget (or the model said so), or
 *   `loop.maxTruncatedReplies` replies in a row were cut off at the output token limit; the run
 *   made one last call asking for the final answer.
 * - `cost_limit`: the money budget (`limits.maxCostUsd`) ran out, at the worker's prices; the run
 *   made one last call asking for the final answer.
 * - `cancelled`: the run was cancelled through Temporal.
 * - `stuck`: the loop repeated itself without progress.
 * - `error`: a failure that retrying cannot fix (bad credentials, unknown model, an answer that
 *   never matched the answer schema, a model whose last `loop.maxMalformedReplies` replies could
 *   not be read in the run's protocol, …).
 */
export const TERMINATIONS = [
  'answer',
  'max_calls',
  'timeout',
  'token_limit',
  'cost_limit',
  'cancelled',
  'stuck',
  'error',
] as const;

export type Termination = (typeof TERMINATIONS)[number];

/**
 * A budget or limit that ran out, ending the loop without an answer of its own: the
 * terminations that are budgets, and two limits on replies the loop could not use —
 * `truncated_replies` (cut off at the output token limit `loop.maxTruncatedReplies` times in a
 * row) and `malformed_replies` (unreadable `loop.maxMalformedReplies` times in a row).
 */
export type BudgetEnd =
  'max_calls' | 'timeout' | 'token_limit' | 'cost_limit' | 'stuck' | 'truncated_replies' | 'malformed_replies';

/**
 * The termination a budget end is recorded as. Truncated replies end `token_limit` (a token
 * limit ran out: the one on a reply's length); malformed replies end `error` (the model does not
 * follow the protocol, which retrying does not fix; the result's `error` says so).
 */
export function terminationOfBudgetEnd(end: BudgetEnd): Termination {
  switch (end) {
    case 'truncated_replies':
      return 'token_limit';
    case 'malformed_replies':
      return 'error';
    case 'max_calls':
    case 'timeout':
    case 'token_limit':
    case 'cost_limit':
    case 'stuck':
      return end;
    default: {
      const unknown: never = end;
      throw new Error(`unknown budget end ${String(unknown)}`);
    }
  }
}
