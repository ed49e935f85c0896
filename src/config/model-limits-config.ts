import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { modelLimitProblem } from '../core/model-limits/limiter-state';
import type { ModelLimit, ModelLimits } from '../core/model-limits/model-limit';
import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';

export const MODEL_LIMITS_VARIABLE = 'REACT_AGENT_MODEL_LIMITS';

const EXAMPLE = `{"gpt-4.1": {"tokensPerMinute": 30000, "requestsPerMinute": 500}}`;
const FIELDS: ReadonlySet<string> = new Set([
  'tokensPerMinute',
  'requestsPerMinute',
  'reservedOutputTokens',
  'leaseSeconds',
]);
/** Longest file or value read (a limits file is a few lines). */
const MAX_BYTES = 1_000_000;

function problem(message: string): ConfigurationError {
  return new ConfigurationError(
    MODEL_LIMITS_VARIABLE,
    `${MODEL_LIMITS_VARIABLE} ${message}. Give each model's limits (tokensPerMinute and/or requestsPerMinute; optional reservedOutputTokens, leaseSeconds; "*" for every other model) as JSON such as ${EXAMPLE}, or the path of a JSON file.`,
  );
}

/**
 * Parses the text of `REACT_AGENT_MODEL_LIMITS`: model name (or `*`) → `{tokensPerMinute?,
 * requestsPerMinute?, reservedOutputTokens?, leaseSeconds?}`.
 * @throws ConfigurationError naming the variable and the model at fault.
 */
export function parseModelLimits(text: string, source = MODEL_LIMITS_VARIABLE): ModelLimits {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw problem(`is not valid JSON (${source}: ${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw problem('must be a JSON object of model names to limits');
  const limits: Record<string, ModelLimit> = {};
  for (const [model, limit] of Object.entries(parsed)) {
    if (!model.trim() || model.length > 200) throw problem(`has a model name that is empty or too long`);
    if (typeof limit === 'object' && limit !== null && !Array.isArray(limit)) {
      const unknown = Object.keys(limit).filter((key) => !FIELDS.has(key));
      if (unknown.length)
        throw problem(
          `gives model "${model}" the unknown field ${unknown.map((key) => JSON.stringify(key)).join(', ')}`,
        );
    }
    const fault = modelLimitProblem(limit);
    if (fault) throw problem(`gives model "${model}" a limit that cannot be used: ${fault}`);
    limits[model] = limit as ModelLimit;
  }
  return limits;
}

/**
 * The shared limits of model calls (issue 33, docs/model-limits.md): `REACT_AGENT_MODEL_LIMITS`, a
 * JSON object or the path of a JSON file (`@path` too), relative to the working directory. Unset:
 * no limits (the model activity asks no limiter, no extra RPC per call).
 * @throws ConfigurationError naming the variable: unreadable file, bad JSON, a limit that cannot be used.
 */
export function loadModelLimits(environment: Environment = process.env, workingDirectory = process.cwd()): ModelLimits {
  const raw = readString(environment, MODEL_LIMITS_VARIABLE);
  if (raw === undefined) return {};
  if (/^\s*[[{]/.test(raw)) return parseModelLimits(raw);
  const path = resolve(workingDirectory, raw.replace(/^@/, '').trim());
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw problem(
      `names the file ${path}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  if (text.length > MAX_BYTES) throw problem(`names the file ${path}, which is larger than ${MAX_BYTES} bytes`);
  return parseModelLimits(text, path);
}
