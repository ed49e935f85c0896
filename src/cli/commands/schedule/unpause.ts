import type { ScheduleSubcommand } from './schedule-subcommand';

/** `schedule unpause <id> [--note TEXT]`. */
export const unpauseSchedule: ScheduleSubcommand = (id, values) => async (context) => {
  await context.client.schedule.getHandle(id).unpause(values.note ?? 'Unpaused with react-agent schedule unpause');
  console.log(`Schedule ${id} unpaused.`);
  return 0;
};
