import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { BatchEvaluation } from '../core/batch-contract';
import { UsageError } from './usage-error';

/** `--evaluate [--judge NAME|FILE]` on `batch` and `schedule create` (issue 12). */
export const evaluateOptionSpecs = {
  evaluate: { type: 'boolean' },
  judge: { type: 'string' },
} as const;

export const evaluateOptionsHelp = `  --evaluate           evaluate when the batch ends: an 'evaluation' workflow over the output,
                       written to <output>/evaluation/ by the workers (report.json, report.html,
                       scored/, summary.jsonl)
  --judge NAME|FILE    with --evaluate: gaia, browsecomp or a prompt file (default: exact match and F1)`;

/** The batch's `evaluate` option, or undefined without --evaluate. */
export function evaluateOptionFrom(
  values: { evaluate?: boolean; judge?: string },
  help: string,
): BatchEvaluation | undefined {
  if (!values.evaluate) {
    if (values.judge !== undefined) throw new UsageError('--judge goes with --evaluate.', help);
    return undefined;
  }
  if (values.judge === undefined) return {};
  if (values.judge === 'gaia' || values.judge === 'browsecomp') return { judge: values.judge };
  const path = resolve(values.judge);
  if (!existsSync(path))
    throw new UsageError(`--judge must be gaia, browsecomp or a prompt file; ${path} does not exist.`, help);
  return { judge: path };
}
