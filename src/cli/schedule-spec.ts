import type { ScheduleOverlapPolicy } from '@temporalio/client';

/**
 * Checks of what a user types for a schedule, before the server sees it, so a mistake gets a
 * message naming the field and what is wrong: cron expressions (Temporal's 5-, 6- and 7-field
 * forms, `@daily`-style shorthands, `@every`), durations, overlap policies, time zones.
 */

/** Overlap policies by their command-line names. */
export const OVERLAP_POLICIES: Record<string, ScheduleOverlapPolicy> = {
  skip: 'SKIP',
  'buffer-one': 'BUFFER_ONE',
  'buffer-all': 'BUFFER_ALL',
  'allow-all': 'ALLOW_ALL',
  'cancel-other': 'CANCEL_OTHER',
  'terminate-other': 'TERMINATE_OTHER',
};

export function overlapPolicyOf(name: string): ScheduleOverlapPolicy | undefined {
  return OVERLAP_POLICIES[name.toLowerCase()];
}

/** The command-line name of a policy (`BUFFER_ONE` → `buffer-one`). */
export function overlapNameOf(policy: string | undefined): string {
  return Object.entries(OVERLAP_POLICIES).find(([, value]) => value === policy)?.[0] ?? 'skip';
}

const UNITS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** `90s`, `15m`, `1h30m`, `2d`, `500ms` → milliseconds; undefined when it does not parse. */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim().toLowerCase();
  if (!/^(\d+(\.\d+)?(ms|s|m|h|d))+$/.test(trimmed)) return undefined;
  let total = 0;
  for (const match of trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g))
    total += Number(match[1]) * (UNITS[match[2] as string] as number);
  return Math.round(total);
}

/** `1h 30m` style text of a duration in milliseconds. */
export function formatDuration(milliseconds: number): string {
  if (milliseconds < 1_000) return `${Math.round(milliseconds)}ms`;
  const seconds = Math.round(milliseconds / 1_000);
  const parts: string[] = [];
  const days = Math.floor(seconds / 86_400);
  const hours = Math.floor((seconds % 86_400) / 3_600);
  const minutes = Math.floor((seconds % 3_600) / 60);
  const rest = seconds % 60;
  if (days) parts.push(`${days}d`);
  if (hours) parts.push(`${hours}h`);
  if (minutes) parts.push(`${minutes}m`);
  if (rest || parts.length === 0) parts.push(`${rest}s`);
  return parts.slice(0, 2).join(' ');
}

/** Whether the runtime knows this IANA time zone. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return true;
  } catch {
    return false;
  }
}

const MONTH_NAMES = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAY_NAMES = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

interface CronField {
  name: string;
  minimum: number;
  maximum: number;
  names?: string[];
  /** The value names[i] stands for is i + this. */
  nameOffset?: number;
}

const SECOND: CronField = { name: 'second', minimum: 0, maximum: 59 };
const MINUTE: CronField = { name: 'minute', minimum: 0, maximum: 59 };
const HOUR: CronField = { name: 'hour', minimum: 0, maximum: 23 };
const DAY_OF_MONTH: CronField = { name: 'day of month', minimum: 1, maximum: 31 };
const MONTH: CronField = { name: 'month', minimum: 1, maximum: 12, names: MONTH_NAMES, nameOffset: 1 };
const DAY_OF_WEEK: CronField = { name: 'day of week', minimum: 0, maximum: 7, names: DAY_NAMES, nameOffset: 0 };
const YEAR: CronField = { name: 'year', minimum: 1970, maximum: 2999 };

const SHORTHANDS = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/**
 * What is wrong with a cron expression, or undefined when it is one Temporal takes:
 * `minute hour day-of-month month day-of-week` (5 fields), `+ year` (6), `second +` … `+ year` (7),
 * a shorthand (`@daily`, …) or `@every <duration>[/<offset>]`, optionally after `CRON_TZ=<zone>`.
 */
export function cronProblem(expression: string): string | undefined {
  let text = expression.replace(/#.*$/, '').trim();
  const zone = /^(?:CRON_TZ|TZ)=(\S+)\s+(.*)$/.exec(text);
  if (zone) {
    if (!isKnownTimeZone(zone[1] as string)) return `unknown time zone "${zone[1]}" in ${zone[0].split(/\s/)[0]}`;
    text = (zone[2] as string).trim();
  }
  if (text === '')
    return 'the expression is empty; give five fields: minute hour day-of-month month day-of-week (e.g. "0 3 * * *" for 03:00 every day)';
  if (text.startsWith('@')) {
    if (SHORTHANDS.has(text.toLowerCase())) return undefined;
    const every = /^@every\s+(\S+?)(?:\/(\S+))?$/i.exec(text);
    if (every) {
      if (parseDuration(every[1] as string) === undefined)
        return `"@every ${every[1]}" needs a duration such as 30m, 6h or 1d`;
      if (every[2] !== undefined && parseDuration(every[2]) === undefined)
        return `the offset "${every[2]}" of @every is not a duration such as 5m`;
      return undefined;
    }
    return `unknown shorthand "${text.split(/\s/)[0]}"; use one of ${[...SHORTHANDS].join(', ')} or "@every <duration>"`;
  }
  const fields = text.split(/\s+/);
  const layout =
    fields.length === 5
      ? [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK]
      : fields.length === 6
        ? [MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR]
        : fields.length === 7
          ? [SECOND, MINUTE, HOUR, DAY_OF_MONTH, MONTH, DAY_OF_WEEK, YEAR]
          : undefined;
  if (!layout)
    return `expected 5 fields (minute hour day-of-month month day-of-week), or 6 with a year, or 7 with seconds first; got ${fields.length}: "${text}"`;
  for (let position = 0; position < fields.length; position += 1) {
    const problem = cronFieldProblem(fields[position] as string, layout[position] as CronField);
    if (problem) return `${(layout[position] as CronField).name} field "${fields[position]}": ${problem}`;
  }
  return undefined;
}

function cronFieldProblem(field: string, spec: CronField): string | undefined {
  for (const part of field.split(',')) {
    if (part === '') return 'an empty list item';
    const [range, step, ...extra] = part.split('/');
    if (extra.length) return `"${part}" has more than one "/"`;
    if (step !== undefined && !(/^\d+$/.test(step) && Number(step) > 0))
      return `the step "${step}" must be a positive whole number`;
    if (range === '*' || range === '?') continue;
    const bounds = (range as string).split('-');
    if (bounds.length > 2) return `"${range}" is not a value or a range`;
    const values: number[] = [];
    for (const bound of bounds) {
      const value = cronValue(bound, spec);
      if (typeof value === 'string') return value;
      values.push(value);
    }
    if (values.length === 2 && (values[0] as number) > (values[1] as number))
      return `the range ${range} runs backwards`;
  }
  return undefined;
}

function cronValue(text: string, spec: CronField): number | string {
  if (/^\d+$/.test(text)) {
    const value = Number(text);
    if (value < spec.minimum || value > spec.maximum) return `${value} is out of range ${spec.minimum}-${spec.maximum}`;
    return value;
  }
  const named = spec.names?.indexOf(text.toLowerCase().slice(0, 3));
  if (named !== undefined && named >= 0 && text.length >= 3) return named + (spec.nameOffset ?? 0);
  return spec.names
    ? `"${text}" is neither a number from ${spec.minimum} to ${spec.maximum} nor a name (${spec.names.join(', ')})`
    : `"${text}" is not a number from ${spec.minimum} to ${spec.maximum}`;
}
