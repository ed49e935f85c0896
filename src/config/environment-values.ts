import { ConfigurationError } from './configuration-error';

/** An environment as `process.env` has it: names to optional strings. */
export type Environment = Readonly<Record<string, string | undefined>>;

/** The trimmed value of `name`, or `undefined` when it is unset or blank. */
export function readString(environment: Environment, name: string): string | undefined {
  const value = environment[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

/**
 * Reads `name` as a positive integer (1, 2, ...), or returns `defaultValue` when unset or blank.
 * @throws ConfigurationError like `REACT_AGENT_MODEL_MAX_ATTEMPTS must be a positive integer, got "abc"`.
 */
export function readPositiveInteger(environment: Environment, name: string, defaultValue: number): number {
  const raw = readString(environment, name);
  if (raw === undefined) return defaultValue;
  const value = /^\+?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new ConfigurationError(name, `${name} must be a positive integer, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/**
 * Reads `name` as a positive (> 0) finite number, or returns `defaultValue` when unset or blank.
 * @throws ConfigurationError like `REACT_AGENT_MODEL_TIMEOUT_SECONDS must be a positive number, got "-1"`.
 */
export function readPositiveNumber(environment: Environment, name: string, defaultValue: number): number {
  const raw = readString(environment, name);
  if (raw === undefined) return defaultValue;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) {
    throw new ConfigurationError(name, `${name} must be a positive number, got ${JSON.stringify(raw)}`);
  }
  return value;
}

/**
 * Reads `name` as a finite number within `[minimum, maximum]` (both inclusive), or returns
 * `defaultValue` when unset or blank.
 * @throws ConfigurationError like `REACT_AGENT_TOP_P must be a number from 0 to 1, got "2"`.
 */
export function readNumberInRange(
  environment: Environment,
  name: string,
  defaultValue: number,
  minimum: number,
  maximum: number,
): number {
  const raw = readString(environment, name);
  if (raw === undefined) return defaultValue;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < minimum || value > maximum) {
    throw new ConfigurationError(
      name,
      `${name} must be a number from ${minimum} to ${maximum}, got ${JSON.stringify(raw)}`,
    );
  }
  return value;
}

const TRUE_WORDS = new Set(['true', '1', 'yes', 'on']);
const FALSE_WORDS = new Set(['false', '0', 'no', 'off']);

/** Reads `name` as a boolean (true/false, 1/0, yes/no, on/off), or `defaultValue` when unset. */
export function readBoolean(environment: Environment, name: string, defaultValue: boolean): boolean {
  const raw = readString(environment, name);
  if (raw === undefined) return defaultValue;
  const word = raw.toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  throw new ConfigurationError(name, `${name} must be true or false, got ${JSON.stringify(raw)}`);
}

/**
 * Checks that `value` (read from `name`) is an http(s) URL with a host, and drops trailing
 * slashes (the OpenAI client appends paths such as /chat/completions itself).
 * @throws ConfigurationError like `OPENAI_BASE_URL must be an http(s) URL such as http://localhost:8000/v1, got "x"`.
 */
export function checkedHttpUrl(name: string, value: string): string {
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  if (url === undefined || (url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') {
    throw new ConfigurationError(
      name,
      `${name} must be an http(s) URL such as http://localhost:8000/v1, got ${JSON.stringify(value)}`,
    );
  }
  return value.replace(/\/+$/, '');
}
