import type { ScheduleOverlapPolicy, ScheduleSpec } from '@temporalio/client';
import { batchOptionSpecs } from '../../batch-preparation';
import type { parseCommandLine } from '../../command-line';
import { cronProblem, isKnownTimeZone, OVERLAP_POLICIES, overlapPolicyOf, parseDuration } from '../../schedule-spec';
import { UsageError } from '../../usage-error';
import { scheduleHelp } from './schedule-help';

/** The options of `react-agent schedule`: a batch's (as `batch` takes them) and the schedule's own. */
export const scheduleOptionSpecs = {
  input: { type: 'string' },
  ...batchOptionSpecs,
  cron: { type: 'string' },
  every: { type: 'string' },
  overlap: { type: 'string' },
  'catchup-window': { type: 'string' },
  'pause-on-failure': { type: 'boolean' },
  'no-pause-on-failure': { type: 'boolean' },
  timezone: { type: 'string' },
  jitter: { type: 'string' },
  paused: { type: 'boolean' },
  note: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
} as const;

/** The options as parsed. */
export type ScheduleValues = ReturnType<typeof parseCommandLine<typeof scheduleOptionSpecs>>['values'];

/** When a schedule's batches start: a cron expression or an interval. */
export type ScheduleTiming = Pick<ScheduleSpec, 'cronExpressions' | 'intervals'>;

/** A duration option in milliseconds; undefined when absent; a usage error unless above 0. */
export function durationOption(
  values: ScheduleValues,
  name: 'catchup-window' | 'jitter' | 'every',
): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const milliseconds = parseDuration(raw);
  if (milliseconds === undefined || milliseconds <= 0)
    throw new UsageError(`--${name} "${raw}" is not a duration such as 90s, 15m, 6h, 1d or 1h30m.`, scheduleHelp);
  return milliseconds;
}

/** `--overlap`: Temporal's policy; undefined when absent. */
export function overlapOption(values: ScheduleValues): ScheduleOverlapPolicy | undefined {
  if (values.overlap === undefined) return undefined;
  const policy = overlapPolicyOf(values.overlap);
  if (!policy)
    throw new UsageError(
      `--overlap must be one of ${Object.keys(OVERLAP_POLICIES).join(', ')}, got "${values.overlap}".`,
      scheduleHelp,
    );
  return policy;
}

/** The spec options given (cron or interval, time zone, jitter), checked. */
export function specFrom(values: ScheduleValues): { timing?: ScheduleTiming; timezone?: string; jitter?: number } {
  if (values.cron !== undefined && values.every !== undefined)
    throw new UsageError('Give --cron or --every, not both.', scheduleHelp);
  let timing: ScheduleTiming | undefined;
  if (values.cron !== undefined) {
    const problem = cronProblem(values.cron);
    if (problem) throw new UsageError(`--cron "${values.cron}" does not parse: ${problem}.`, scheduleHelp);
    timing = { cronExpressions: [values.cron] };
  }
  const every = durationOption(values, 'every');
  if (every !== undefined) {
    if (every < 1_000) throw new UsageError(`--every must be at least 1s, got "${values.every}".`, scheduleHelp);
    timing = { intervals: [{ every }] };
  }
  if (values.timezone !== undefined && !isKnownTimeZone(values.timezone))
    throw new UsageError(
      `--timezone "${values.timezone}" is not a known IANA time zone (e.g. Europe/Paris, America/New_York, UTC).`,
      scheduleHelp,
    );
  const jitter = durationOption(values, 'jitter');
  return {
    ...(timing ? { timing } : {}),
    ...(values.timezone !== undefined ? { timezone: values.timezone } : {}),
    ...(jitter !== undefined ? { jitter } : {}),
  };
}

/** The schedule id after the subcommand, checked: it names the output folder. */
export function scheduleIdFrom(positionals: string[], subcommand: string): string {
  const id = positionals[1];
  if (!id) throw new UsageError(`schedule ${subcommand} needs a schedule id.`, scheduleHelp);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id))
    throw new UsageError(
      `A schedule id is letters, digits, '.', '_' and '-' (it names the output folder), got "${id}".`,
      scheduleHelp,
    );
  if (positionals.length > 2)
    throw new UsageError(
      `Unexpected arguments after the schedule id: ${positionals.slice(2).join(' ')}.`,
      scheduleHelp,
    );
  return id;
}
