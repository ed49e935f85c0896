import { modelLimitProblem } from '../core/model-limits/limiter-state';
import type { ModelLimit, ModelLimits } from '../core/model-limits/model-limit';
import { ConfigurationError } from './configuration-error';
import type { Environment } from './environment-values';
import { modelTableText, parseModelTable, type ModelTableVariable } from './model-table-variable';

export const MODEL_LIMITS_VARIABLE = 'REACT_AGENT_MODEL_LIMITS';

const EXAMPLE = `{"gpt-4.1": {"tokensPerMinute": 30000, "requestsPerMinute": 500}}`;
const FIELDS: ReadonlySet<string> = new Set([
  'tokensPerMinute',
  'requestsPerMinute',
  'reservedOutputTokens',
  'leaseSeconds',
]);

function problem(message: string): ConfigurationError {
  return new ConfigurationError(
    MODEL_LIMITS_VARIABLE,
    `${MODEL_LIMITS_VARIABLE} ${message}. Give each model's limits (tokensPerMinute and/or requestsPerMinute; optional reservedOutputTokens, leaseSeconds; "*" for every other model) as JSON such as ${EXAMPLE}, or the path of a JSON file.`,
  );
}

const TABLE: ModelTableVariable = { variable: MODEL_LIMITS_VARIABLE, problem, entries: 'limits', barePaths: true };

function checkedLimit(model: string, limit: unknown): ModelLimit {
  if (typeof limit === 'object' && limit !== null && !Array.isArray(limit)) {
    const unknown = Object.keys(limit).filter((key) => !FIELDS.has(key));
    if (unknown.length)
      throw problem(`gives model "${model}" the unknown field ${unknown.map((key) => JSON.stringify(key)).join(', ')}`);
  }
  const fault = modelLimitProblem(limit);
  if (fault) throw problem(`gives model "${model}" a limit that cannot be used: ${fault}`);
  return limit as ModelLimit;
}

/**
 * Parses the text of `REACT_AGENT_MODEL_LIMITS`: model name (or `*`) → `{tokensPerMinute?,
 * requestsPerMinute?, reservedOutputTokens?, leaseSeconds?}`.
 * @throws ConfigurationError naming the variable and the model at fault.
 */
export function parseModelLimits(text: string, source = MODEL_LIMITS_VARIABLE): ModelLimits {
  return parseModelTable(TABLE, text, source, checkedLimit);
}

/**
 * The shared limits of model calls (issue 33, docs/model-limits.md): `REACT_AGENT_MODEL_LIMITS`, a
 * JSON object or the path of a JSON file (`@path` too), relative to the working directory. Unset:
 * no limits (the model activity asks no limiter, no extra RPC per call).
 * @throws ConfigurationError naming the variable: unreadable file, bad JSON, a limit that cannot be used.
 */
export function loadModelLimits(environment: Environment = process.env, workingDirectory = process.cwd()): ModelLimits {
  const read = modelTableText(TABLE, environment, workingDirectory);
  return read ? parseModelLimits(read.text, read.source) : {};
}
