import type { ScheduleSubcommand } from './schedule-subcommand';

/** `schedule pause <id> [--note TEXT]`: no batches start until it is unpaused. */
export const pauseSchedule: ScheduleSubcommand = (id, values) => async (context) => {
  await context.client.schedule.getHandle(id).pause(values.note ?? 'Paused with react-agent schedule pause');
  console.log(`Schedule ${id} paused: no batches start until 'react-agent schedule unpause ${id}'.`);
  return 0;
};
