import { parseArgs, type ParseArgsConfig } from 'node:util';
import { UsageError } from './usage-error';

/** The values `parseArgs` read, by option name. */
export type OptionValues = Record<string, string | boolean | undefined>;

/** parseArgs, with unknown options and missing values as usage errors (exit 2 with the help). */
export function parseCommandLine<T extends NonNullable<ParseArgsConfig['options']>>(
  argumentsList: string[],
  options: T,
  help: string,
): ReturnType<typeof parseArgs<{ args: string[]; options: T; allowPositionals: true; strict: true }>> {
  try {
    return parseArgs({ args: argumentsList, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw new UsageError(`${(error as Error).message.replace(/\. To specify a positional argument.*$/s, '.')}`, help);
  }
}

/** The range a number option must fall in. */
export interface NumberRange {
  minimum: number;
  maximum: number;
  /** Whole numbers only. */
  integer: boolean;
}

/** A number option: undefined when absent; a usage error when it is not a number in range. */
export function numberOption(values: OptionValues, name: string, help: string, range: NumberRange): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const value = Number(raw);
  if (
    typeof raw !== 'string' ||
    raw.trim() === '' ||
    !Number.isFinite(value) ||
    (range.integer && !Number.isInteger(value)) ||
    value < range.minimum ||
    value > range.maximum
  ) {
    throw new UsageError(
      `--${name} must be ${range.integer ? 'a whole number' : 'a number'} from ${range.minimum} to ${range.maximum}, got ${JSON.stringify(raw)}.`,
      help,
    );
  }
  return value;
}
