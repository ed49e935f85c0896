/**
 * Token calibration. The workflow's budget check uses the token counts the model server reports,
 * but tool outputs, notes and compression are counted with our own estimate (tiktoken o200k),
 * which a model with another tokenizer can count quite differently. After every model call the
 * workflow keeps the ratio the server reported (server prompt tokens / our estimate of that same
 * prompt, both returned by the model activity) and converts estimates with it. Pure and
 * deterministic: computed in the workflow from numbers in history.
 */

/** The ratio before any model call has reported one: estimates are taken as they are. */
export const UNCALIBRATED = 1;

/** The ratio is kept within these bounds, so a server reporting nonsense cannot make every estimate zero or huge. */
export const MIN_SERVER_TOKENS_PER_ESTIMATED_TOKEN = 0.2;
export const MAX_SERVER_TOKENS_PER_ESTIMATED_TOKEN = 5;

/**
 * The ratio after a model call: the server's prompt tokens over our estimate of the same prompt,
 * rounded to 3 decimals and bounded; the previous ratio when the call gave no usable pair
 * (no estimate in an older history, or a count of 0).
 */
export function calibrationAfterCall(
  previous: number,
  serverPromptTokens: number,
  estimatedPromptTokens: number | undefined,
): number {
  if (estimatedPromptTokens === undefined || !(estimatedPromptTokens > 0) || !(serverPromptTokens > 0)) return previous;
  const ratio = Math.round((serverPromptTokens / estimatedPromptTokens) * 1_000) / 1_000;
  return Math.min(MAX_SERVER_TOKENS_PER_ESTIMATED_TOKEN, Math.max(MIN_SERVER_TOKENS_PER_ESTIMATED_TOKEN, ratio));
}

/** Our estimate in the server's tokens (rounded up: budgets should not be underestimated). */
export function inServerTokens(estimatedTokens: number, ratio: number): number {
  return Math.ceil(estimatedTokens * ratio);
}

/** A number of the server's tokens in our estimate's units (rounded down: a target should not be overshot). */
export function inEstimatedTokens(serverTokens: number, ratio: number): number {
  return Math.floor(serverTokens / ratio);
}
