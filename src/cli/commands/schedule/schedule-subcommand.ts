import type { CliContext } from '../../cli-context';
import type { ScheduleValues } from './schedule-options';

/**
 * A subcommand of `react-agent schedule`: given the schedule id ('' for `list`) and the options,
 * it checks what it can before the CLI connects to Temporal, and returns what it does once connected
 * (its exit code).
 */
export type ScheduleSubcommand = (id: string, values: ScheduleValues) => (context: CliContext) => Promise<number>;
