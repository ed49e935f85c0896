import type { ScheduleDescription } from '@temporalio/client';
import type { ResearchBatchInput } from '../../../core/batch-contract';
import { printJson } from '../../cli-context';
import { formatDuration, overlapNameOf } from '../../schedule-spec';
import { scheduleLink } from './schedule-link';
import type { ScheduleMemo } from './schedule-memo';
import type { ScheduleSubcommand } from './schedule-subcommand';

/** `schedule describe <id>`: its state, spec, policies, batch, next run times and recent batches with their status, as JSON. */
export const describeSchedule: ScheduleSubcommand = (id) => async (context) => {
  const description: ScheduleDescription = await context.client.schedule.getHandle(id).describe();
  const input = description.action.args?.[0] as ResearchBatchInput | undefined;
  const memo = (description.action.memo ?? {}) as unknown as Partial<ScheduleMemo>;
  const recent = await Promise.all(
    description.info.recentActions.map(async (action) => {
      const batchId = action.action.workflow.workflowId;
      const status = await context.client.workflow
        .getHandle(batchId)
        .describe()
        .then((found) => found.status.name)
        .catch(() => 'unknown');
      return { scheduledAt: action.scheduledAt.toISOString(), takenAt: action.takenAt.toISOString(), batchId, status };
    }),
  );
  printJson({
    scheduleId: id,
    state: { paused: description.state.paused, ...(description.state.note ? { note: description.state.note } : {}) },
    spec: {
      ...(memo.cron ? { cron: memo.cron } : {}),
      ...(memo.every ? { every: memo.every } : {}),
      timezone: description.spec.timezone || 'UTC',
      ...(description.spec.jitter ? { jitter: formatDuration(description.spec.jitter) } : {}),
    },
    policies: {
      overlap: overlapNameOf(description.policies.overlap),
      catchupWindow: formatDuration(description.policies.catchupWindow),
      pauseOnFailure: description.policies.pauseOnFailure,
    },
    batch: input
      ? {
          input: input.input,
          source: input.source,
          questions: input.questions,
          rollouts: input.rollouts,
          concurrency: input.concurrency,
          output: `${input.output}/${id}/<scheduled start time>/`,
          run: input.run ?? {},
        }
      : undefined,
    nextRuns: description.info.nextActionTimes.map((time) => time.toISOString()),
    recentBatches: recent,
    runningBatches: description.info.runningActions.map((action) => action.workflow.workflowId),
    actionsTaken: description.info.numActionsTaken,
    createdAt: description.info.createdAt.toISOString(),
    webUi: scheduleLink(context, id),
  });
  return 0;
};
