import { overlapOption } from './schedule-options';
import type { ScheduleSubcommand } from './schedule-subcommand';

/** `schedule trigger <id> [--overlap POLICY]`: a batch starts now. */
export const triggerSchedule: ScheduleSubcommand = (id, values) => {
  const overlap = overlapOption(values);
  return async (context) => {
    await context.client.schedule.getHandle(id).trigger(overlap);
    console.log(`Schedule ${id} triggered: a batch starts now ('react-agent schedule describe ${id}' shows its id).`);
    return 0;
  };
};
