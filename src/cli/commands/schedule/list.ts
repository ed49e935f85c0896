import { WorkflowTypes } from '../../../core/workflow-types';
import type { ScheduleMemo } from './schedule-memo';
import type { ScheduleSubcommand } from './schedule-subcommand';

/** `schedule list`: the schedules that start batches, a line each. */
export const listSchedules: ScheduleSubcommand = () => async (context) => {
  console.log(['SCHEDULE ID', 'STATE', 'WHEN', 'NEXT RUN', 'OUTPUT'].join('\t'));
  for await (const schedule of context.client.schedule.list()) {
    if (schedule.action?.workflowType !== WorkflowTypes.researchBatch) continue;
    const described = await context.client.schedule
      .getHandle(schedule.scheduleId)
      .describe()
      .catch(() => undefined);
    const memo = (described?.action.memo ?? {}) as Partial<ScheduleMemo>;
    console.log(
      [
        schedule.scheduleId,
        schedule.state.paused ? 'paused' : 'active',
        memo.cron ? `cron ${memo.cron}` : memo.every ? `every ${memo.every}` : '-',
        schedule.info.nextActionTimes[0]?.toISOString() ?? '-',
        memo.output ?? '-',
      ].join('\t'),
    );
  }
  return 0;
};
