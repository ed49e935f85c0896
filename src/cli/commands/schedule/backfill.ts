import { overlapNameOf } from '../../schedule-spec';
import { UsageError } from '../../usage-error';
import { scheduleHelp } from './schedule-help';
import { overlapOption, type ScheduleValues } from './schedule-options';
import type { ScheduleSubcommand } from './schedule-subcommand';

function timeOption(values: ScheduleValues, name: 'from' | 'to'): Date {
  const raw = values[name];
  if (!raw)
    throw new UsageError(
      `schedule backfill needs --from T and --to T (ISO 8601 times, e.g. 2026-01-01T00:00:00Z).`,
      scheduleHelp,
    );
  const time = new Date(raw);
  if (Number.isNaN(time.getTime()))
    throw new UsageError(`--${name} "${raw}" is not a time; use ISO 8601, e.g. 2026-01-01T00:00:00Z.`, scheduleHelp);
  return time;
}

/** `--from` and `--to`, checked: both times, the first before the second. */
export function backfillRangeFrom(values: ScheduleValues): { from: Date; to: Date } {
  const range = { from: timeOption(values, 'from'), to: timeOption(values, 'to') };
  if (range.from.getTime() >= range.to.getTime())
    throw new UsageError(
      `--from must be before --to (${range.from.toISOString()} is not before ${range.to.toISOString()}).`,
      scheduleHelp,
    );
  return range;
}

/** `schedule backfill <id> --from T --to T [--overlap POLICY]`: the actions of a past period (overlap buffer-all unless given). */
export const backfillSchedule: ScheduleSubcommand = (id, values) => {
  const range = backfillRangeFrom(values);
  const overlap = overlapOption(values) ?? 'BUFFER_ALL';
  return async (context) => {
    await context.client.schedule.getHandle(id).backfill({ start: range.from, end: range.to, overlap });
    console.log(
      `Schedule ${id} backfilled from ${range.from.toISOString()} to ${range.to.toISOString()} (overlap ${overlapNameOf(overlap)}): each action of that period starts a batch writing to its own dated folder.`,
    );
    return 0;
  };
};
