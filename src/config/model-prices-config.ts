import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ModelPrice, ModelPrices } from '../domain/model-prices';
import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';

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

/**
 * Parses the text of `REACT_AGENT_MODEL_PRICES` (JSON: model name → `{input, cachedInput?, cacheWrite?, output}`
 * in USD per million tokens).
 * @throws ConfigurationError naming the variable (and the model at fault).
 */
export function parseModelPrices(text: string, source = MODEL_PRICES_VARIABLE): ModelPrices {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw problem(`is not valid JSON (${source}: ${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw problem('must be a JSON object of model names to prices');
  const prices: Record<string, ModelPrice> = {};
  for (const [model, price] of Object.entries(parsed)) prices[model] = checkedPrice(model, price);
  return prices;
}

/**
 * Prices per model for the cost of model calls: `REACT_AGENT_MODEL_PRICES`, JSON or `@file` (a path,
 * relative to the working directory). Unset: no prices (no call has a cost). A model not listed has no cost.
 * @throws ConfigurationError naming the variable: unreadable file, bad JSON, a negative or non-number price.
 */
export function loadModelPrices(environment: Environment = process.env, workingDirectory = process.cwd()): ModelPrices {
  const raw = readString(environment, MODEL_PRICES_VARIABLE);
  if (raw === undefined) return {};
  if (!raw.startsWith('@')) return parseModelPrices(raw);
  const path = resolve(workingDirectory, raw.slice(1).trim());
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw problem(
      `names the file ${path}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  return parseModelPrices(text, path);
}
