import { priceOf, type ModelPrices } from '../domain/model-prices';
import { UsageError } from './usage-error';

/**
 * `--max-cost USD`: undefined when absent; a usage error unless it is a number of dollars above 0
 * (`0.5`, `2`; a leading `$` is allowed). 0 is refused rather than read as "no budget", which is
 * what leaving the option out means.
 */
export function costOption(raw: string | undefined, help: string): number | undefined {
  if (raw === undefined) return undefined;
  const text = raw.trim().replace(/^\$/, '');
  const value = Number(text);
  if (text === '' || !Number.isFinite(value) || value <= 0) {
    throw new UsageError(
      `--max-cost must be a number of US dollars above 0 (e.g. 0.50), got ${JSON.stringify(raw)}.`,
      help,
    );
  }
  return value;
}

/**
 * Why a run with a cost budget cannot be held to it by a worker with these prices (it has none for
 * the run's model), or undefined. For `react-agent run` when it starts the worker itself: then the
 * CLI's own `REACT_AGENT_MODEL_PRICES` are the worker's, and it refuses before the first call costs
 * anything. (A worker already running may have other prices; its run ends `error` after one call.)
 */
export function costBudgetPriceProblem(
  maxCostUsd: number | undefined,
  model: string,
  prices: ModelPrices,
): string | undefined {
  if (!maxCostUsd || priceOf(prices, model) !== undefined) return undefined;
  return `--max-cost needs a price for the model "${model}", and REACT_AGENT_MODEL_PRICES, which the worker this command starts reads, has none${
    Object.keys(prices).length ? ` (it prices ${Object.keys(prices).join(', ')})` : ''
  }: the budget could never end the run. Add the model's prices, e.g. REACT_AGENT_MODEL_PRICES='{"${model}": {"input": 0.15, "output": 0.6}}', or run without --max-cost.`;
}
