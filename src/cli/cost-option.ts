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
    throw new UsageError(`--max-cost must be a number of US dollars above 0 (e.g. 0.50), got ${JSON.stringify(raw)}.`, help);
  }
  return value;
}
