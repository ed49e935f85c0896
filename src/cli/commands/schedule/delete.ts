import type { ScheduleSubcommand } from './schedule-subcommand';

/** `schedule delete <id>`: its batches and their output stay. */
export const deleteSchedule: ScheduleSubcommand = (id) => async (context) => {
  await context.client.schedule.getHandle(id).delete();
  console.log(`Schedule ${id} deleted (its batches and their output stay).`);
  return 0;
};
