import { ScheduleNotFoundError } from '@temporalio/client';
import { openCliContext } from '../../cli-context';
import { parseCommandLine } from '../../command-line';
import { UsageError } from '../../usage-error';
import { backfillSchedule } from './backfill';
import { createSchedule } from './create';
import { deleteSchedule } from './delete';
import { describeSchedule } from './describe';
import { listSchedules } from './list';
import { pauseSchedule } from './pause';
import { scheduleHelp } from './schedule-help';
import { scheduleIdFrom, scheduleOptionSpecs } from './schedule-options';
import type { ScheduleSubcommand } from './schedule-subcommand';
import { triggerSchedule } from './trigger';
import { unpauseSchedule } from './unpause';
import { updateSchedule } from './update';

export { scheduleHelp } from './schedule-help';

/** The subcommands, in the order the usage error lists them. */
const subcommands: Record<string, ScheduleSubcommand> = {
  create: createSchedule,
  list: listSchedules,
  describe: describeSchedule,
  pause: pauseSchedule,
  unpause: unpauseSchedule,
  trigger: triggerSchedule,
  backfill: backfillSchedule,
  update: updateSchedule,
  delete: deleteSchedule,
};

/** `react-agent schedule <subcommand>`: checks the subcommand's options, then connects and runs it; an unknown schedule exits 1. */
export async function scheduleCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argumentsList, scheduleOptionSpecs, scheduleHelp);
  const name = positionals[0];
  if (!name) throw new UsageError('Give a subcommand.', scheduleHelp);
  const subcommand = Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
  if (!subcommand)
    throw new UsageError(
      `Unknown schedule subcommand "${name}"; use one of ${Object.keys(subcommands).join(', ')}.`,
      scheduleHelp,
    );
  const id = name === 'list' ? '' : scheduleIdFrom(positionals, name);
  const run = subcommand(id, values);
  const context = await openCliContext();
  try {
    return await run(context);
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) {
      console.error(
        `react-agent schedule: no schedule "${id}" in namespace ${context.temporal.namespace}; 'react-agent schedule list' shows the schedules there.`,
      );
      return 1;
    }
    throw error;
  } finally {
    await context.close();
  }
}
