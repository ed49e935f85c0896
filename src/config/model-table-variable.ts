import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';

/** Longest file a model table is read from (such a file is a few lines). */
const MAX_FILE_BYTES = 1_000_000;

/** How a model table variable is read. */
export interface ModelTableVariable {
  /** The variable's name. */
  variable: string;
  /** The error for what is wrong (`message` follows the variable's name), with an example of a good value. */
  problem: (message: string) => ConfigurationError;
  /** What each model maps to, in errors ("prices", "limits"). */
  entries: string;
  /** Whether a value that is not JSON is a file's path as it is; else only with `@`. Default false. */
  barePaths?: boolean;
}

/**
 * The text of a variable that maps model names to settings (`REACT_AGENT_MODEL_PRICES`,
 * `REACT_AGENT_MODEL_LIMITS`): the value itself when it is JSON, else the file it names (`@path`,
 * or a bare path where allowed), relative to `workingDirectory`, at most 1 MB. Undefined when unset.
 * @throws ConfigurationError naming the variable: a file that cannot be read or is too large.
 */
export function modelTableText(
  table: ModelTableVariable,
  environment: Environment,
  workingDirectory: string,
): { text: string; source: string } | undefined {
  const raw = readString(environment, table.variable);
  if (raw === undefined) return undefined;
  const named = raw.startsWith('@') || (table.barePaths === true && !/^\s*[[{]/.test(raw));
  if (!named) return { text: raw, source: table.variable };
  const path = resolve(workingDirectory, raw.replace(/^@/, '').trim());
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    throw table.problem(
      `names the file ${path}, which cannot be read (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
    );
  }
  if (text.length > MAX_FILE_BYTES)
    throw table.problem(`names the file ${path}, which is larger than ${MAX_FILE_BYTES} bytes`);
  return { text, source: path };
}

/**
 * Parses a model table: a JSON object of model names (non-empty, at most 200 characters) to
 * entries, each made by `entry` (which throws the table's problem for one it refuses).
 * @throws ConfigurationError naming the variable: bad JSON, not an object, a bad model name.
 */
export function parseModelTable<T>(
  table: ModelTableVariable,
  text: string,
  source: string,
  entry: (model: string, value: unknown) => T,
): Record<string, T> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw table.problem(`is not valid JSON (${source}: ${(error as Error).message})`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
    throw table.problem(`must be a JSON object of model names to ${table.entries}`);
  const entries: Record<string, T> = {};
  for (const [model, value] of Object.entries(parsed)) {
    if (!model.trim() || model.length > 200) throw table.problem('has a model name that is empty or too long');
    entries[model] = entry(model, value);
  }
  return entries;
}
