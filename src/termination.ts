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
 * - `cancelled`: the run was cancelled through Temporal.
 * - `stuck`: the loop repeated itself without progress.
 * - `error`: a failure that retrying cannot fix (bad credentials, unknown model, an answer that
 *   never matched the answer schema, a model whose last `loop.maxMalformedReplies` replies could
 *   not be read in the run's protocol, …).
 */
export const TERMINATIONS = ['answer', 'max_calls', 'timeout', 'token_limit', 'cancelled', 'stuck', 'error'] as const;

export type Termination = (typeof TERMINATIONS)[number];
