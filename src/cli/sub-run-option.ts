import type { SubRunOptions } from '../core/sub-runs/sub-run-options';
import { numberOption, type NumberRange, type OptionValues } from './command-line';
import { RUN_OPTIONS, type RunOption } from './run-options';
import { UsageError } from './usage-error';

const rangeOf = (flag: 'subruns' | 'subrun-depth') =>
  (RUN_OPTIONS as readonly RunOption[]).find((option) => option.flag === flag)?.range as NumberRange;

/**
 * `--subruns N` and `--subrun-depth D` as a run's `subruns` input field (issue 30): undefined when
 * `--subruns` is absent (a run does not delegate by default); `{ maxParallel: N }`, with `maxDepth: D`
 * when `--subrun-depth` is given (the run's own default is 1). Each is checked against its range
 * (1 to 16, 1 to 3) here, for `run` and `start` as for `batch` and `schedule`; `--subrun-depth`
 * without `--subruns` is a usage error.
 */
export function subRunOptionsFrom(values: OptionValues, help: string): SubRunOptions | undefined {
  const maxParallel = numberOption(values, 'subruns', help, rangeOf('subruns'));
  const maxDepth = numberOption(values, 'subrun-depth', help, rangeOf('subrun-depth'));
  if (maxParallel === undefined) {
    if (maxDepth !== undefined)
      throw new UsageError('--subrun-depth needs --subruns N: how many sub-runs may run at once.', help);
    return undefined;
  }
  return { maxParallel, ...(maxDepth !== undefined ? { maxDepth } : {}) };
}
