/**
 * What a model call costs (issue 19, "Usage and cost"): prices per model in USD per million
 * tokens (`REACT_AGENT_MODEL_PRICES`, parsed and checked by src/config/model-prices-config.ts),
 * and the cost of one call's usage at its model's price. A model without a price has no cost —
 * absent, not zero.
 *
 * Pure functions.
 */

/** One model's prices, USD per million tokens. */
export interface ModelPrice {
  /** Prompt tokens. */
  input: number;
  /** Prompt tokens the server reports as cached (`prompt_tokens_details.cached_tokens`, Anthropic's `cache_read_input_tokens`); `input` when not given. */
  cachedInput?: number;
  /** Prompt tokens written to the server's cache (Anthropic's `cache_creation_input_tokens`, 1.25 × input for its 5-minute cache); `input` when not given. */
  cacheWrite?: number;
  /** Completion tokens (reasoning included). */
  output: number;
}

/** Model name → its prices. */
export type ModelPrices = Readonly<Record<string, ModelPrice>>;

/** The tokens of one model call a price applies to. */
export interface PricedTokens {
  promptTokens: number;
  completionTokens: number;
  /** Of `promptTokens`, those the server reported as cached (charged at `cachedInput`). */
  cachedPromptTokens?: number;
  /** Of `promptTokens`, those the server wrote to its cache (charged at `cacheWrite`). */
  cacheWriteTokens?: number;
}

const PER_MILLION = 1_000_000;

/** The price of `model`, or undefined when it has none (then its calls have no cost). */
export function priceOf(prices: ModelPrices | undefined, model: string): ModelPrice | undefined {
  return prices !== undefined && Object.prototype.hasOwnProperty.call(prices, model) ? prices[model] : undefined;
}

/**
 * The cost in USD of one call's tokens at `price`: uncached prompt tokens at `input`, cached ones
 * at `cachedInput` (or `input`), those written to the cache at `cacheWrite` (or `input`),
 * completion tokens at `output`. Cached and cache-write tokens are counted at most up to the
 * prompt tokens; negative or non-finite counts count as none.
 */
export function callCostUsd(tokens: PricedTokens, price: ModelPrice): number {
  const count = (value: number | undefined) => (value !== undefined && Number.isFinite(value) && value > 0 ? value : 0);
  const prompt = count(tokens.promptTokens);
  const cached = Math.min(count(tokens.cachedPromptTokens), prompt);
  const written = Math.min(count(tokens.cacheWriteTokens), prompt - cached);
  const cachedPrice = price.cachedInput ?? price.input;
  const writePrice = price.cacheWrite ?? price.input;
  return (
    ((prompt - cached - written) * price.input +
      cached * cachedPrice +
      written * writePrice +
      count(tokens.completionTokens) * price.output) /
    PER_MILLION
  );
}

/**
 * What prompt caching saved on one call at `price`, in USD: the call's cost with every prompt
 * token at `input` and nothing written to the cache, less its cost as charged (`callCostUsd`).
 * Negative when the cache writes cost more than the cache reads saved (a call that writes a
 * long prefix and reads nothing). Undefined when the call reported no cached and no cache-write
 * tokens (absent or 0, as Chat Completions says of every uncached call): caching had no part in its cost.
 */
export function callCacheSavedUsd(tokens: PricedTokens, price: ModelPrice): number | undefined {
  if (!((tokens.cachedPromptTokens ?? 0) > 0 || (tokens.cacheWriteTokens ?? 0) > 0)) return undefined;
  const uncached: PricedTokens = { promptTokens: tokens.promptTokens, completionTokens: tokens.completionTokens };
  return callCostUsd(uncached, price) - callCostUsd(tokens, price);
}

/** What caching saved on a call of `model` (`callCacheSavedUsd`), or undefined when the model has no price. */
export function modelCallCacheSavedUsd(
  prices: ModelPrices | undefined,
  model: string,
  tokens: PricedTokens,
): number | undefined {
  const price = priceOf(prices, model);
  return price === undefined ? undefined : callCacheSavedUsd(tokens, price);
}

/** The cost of a call of `model`, or undefined when the model has no price. */
export function modelCallCostUsd(
  prices: ModelPrices | undefined,
  model: string,
  tokens: PricedTokens,
): number | undefined {
  const price = priceOf(prices, model);
  return price === undefined ? undefined : callCostUsd(tokens, price);
}
