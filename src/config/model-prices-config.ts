import type { ModelPrice, ModelPrices } from '../domain/model-prices';
import { ConfigurationError } from './configuration-error';
import type { Environment } from './environment-values';
import { modelTableText, parseModelTable, type ModelTableVariable } from './model-table-variable';

export const MODEL_PRICES_VARIABLE = 'REACT_AGENT_MODEL_PRICES';

const EXAMPLE = `{"gpt-4o-mini": {"input": 0.15, "cachedInput": 0.075, "output": 0.6}}`;
const FIELDS = ['input', 'cachedInput', 'cacheWrite', 'output'] as const;
/** Fields a price may leave out (they default to `input`). */
const OPTIONAL_FIELDS: ReadonlySet<string> = new Set(['cachedInput', 'cacheWrite']);

function problem(message: string): ConfigurationError {
  return new ConfigurationError(
    MODEL_PRICES_VARIABLE,
    `${MODEL_PRICES_VARIABLE} ${message}. Give USD per million tokens for each model, as JSON such as ${EXAMPLE}, or @/path/to/prices.json.`,
  );
}

function checkedPrice(model: string, value: unknown): ModelPrice {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw problem(`gives model "${model}" no price object (with input and output)`);
  const fields = value as Record<string, unknown>;
  const unknown = Object.keys(fields).filter((key) => !(FIELDS as readonly string[]).includes(key));
  if (unknown.length)
    throw problem(
      `gives model "${model}" the unknown field${unknown.length > 1 ? 's' : ''} ${unknown.map((key) => JSON.stringify(key)).join(', ')} (input, cachedInput, cacheWrite, output)`,
    );
  for (const field of FIELDS) {
    const price = fields[field];
    if (price === undefined && OPTIONAL_FIELDS.has(field)) continue;
    if (price === undefined) throw problem(`gives model "${model}" no ${field} price`);
    if (typeof price !== 'number' || !Number.isFinite(price) || price < 0) {
      throw problem(`gives model "${model}" the ${field} price ${JSON.stringify(price)}, not a number of at least 0`);
    }
  }
  return {
    input: fields.input as number,
    ...(fields.cachedInput !== undefined ? { cachedInput: fields.cachedInput as number } : {}),
    ...(fields.cacheWrite !== undefined ? { cacheWrite: fields.cacheWrite as number } : {}),
    output: fields.output as number,
  };
}

const TABLE: ModelTableVariable = { variable: MODEL_PRICES_VARIABLE, problem, entries: 'prices' };

/**
 * Parses the text of `REACT_AGENT_MODEL_PRICES` (JSON: model name → `{input, cachedInput?, cacheWrite?, output}`
 * in USD per million tokens).
 * @throws ConfigurationError naming the variable (and the model at fault).
 */
export function parseModelPrices(text: string, source = MODEL_PRICES_VARIABLE): ModelPrices {
  return parseModelTable(TABLE, text, source, checkedPrice);
}

/**
 * Prices per model for the cost of model calls: `REACT_AGENT_MODEL_PRICES`, JSON or `@file` (a path,
 * relative to the working directory). Unset: no prices (no call has a cost). A model not listed has no cost.
 * @throws ConfigurationError naming the variable: unreadable file, bad JSON, a negative or non-number price.
 */
export function loadModelPrices(environment: Environment = process.env, workingDirectory = process.cwd()): ModelPrices {
  const read = modelTableText(TABLE, environment, workingDirectory);
  return read ? parseModelPrices(read.text, read.source) : {};
}
