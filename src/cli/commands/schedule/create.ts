import { ScheduleAlreadyRunning } from '@temporalio/client';
import { WorkflowTypes } from '../../../core/workflow-types';
import {
  batchSettingsFrom,
  batchSummaryText,
  checkedBatchFiles,
  reportRejected,
  researchBatchInputOf,
  storeInput,
  type CheckedBatchFiles,
} from '../../batch-preparation';
import { UsageError } from '../../usage-error';
import { scheduleHelp } from './schedule-help';
import { scheduleLink } from './schedule-link';
import type { ScheduleMemo } from './schedule-memo';
import { durationOption, overlapOption, specFrom } from './schedule-options';
import type { ScheduleSubcommand } from './schedule-subcommand';

/** `schedule create <id>`: a schedule that starts a batch of the questions (stored now, by hash) at each action. */
export const createSchedule: ScheduleSubcommand = (id, values) => async (context) => {
  if (!values.input) throw new UsageError('schedule create needs --input FILE: the questions.', scheduleHelp);
  if (!values.output)
    throw new UsageError('schedule create needs --output DIR: where the dated folders go.', scheduleHelp);
  const { timing, timezone, jitter } = specFrom(values);
  if (!timing) throw new UsageError('schedule create needs --cron EXPR or --every DURATION.', scheduleHelp);
  const settings = batchSettingsFrom(values, scheduleHelp);
  const overlap = overlapOption(values) ?? 'SKIP';
  const catchupWindow = durationOption(values, 'catchup-window');
  let files: CheckedBatchFiles;
  try {
    files = await checkedBatchFiles(values.input, values.output, { resume: true });
  } catch (error) {
    return reportRejected(error);
  }
  for (const note of files.notes) console.error(note);
  const input = researchBatchInputOf(files, await storeInput(context.store, files.file), settings, {
    schedule: { id },
  });
  const memo: ScheduleMemo = {
    questions: input.questions,
    rollouts: input.rollouts,
    output: `${files.output}/${id}`,
    schedule: id,
    ...(values.cron !== undefined ? { cron: values.cron } : {}),
    ...(values.every !== undefined ? { every: values.every } : {}),
    source: files.source,
    ...(settings.name ? { name: settings.name } : {}),
  };
  try {
    await context.client.schedule.create({
      scheduleId: id,
      spec: { ...timing, ...(timezone ? { timezone } : {}), ...(jitter !== undefined ? { jitter } : {}) },
      action: {
        type: 'startWorkflow',
        workflowType: WorkflowTypes.researchBatch,
        workflowId: id,
        taskQueue: context.worker.taskQueue,
        args: [input],
        staticSummary: batchSummaryText(input.questions, input.rollouts, `${files.output}/${id}/<scheduled time>`),
        memo: memo as unknown as Record<string, unknown>,
      },
      policies: {
        overlap,
        ...(catchupWindow !== undefined ? { catchupWindow } : {}),
        pauseOnFailure: values['pause-on-failure'] === true,
      },
      state: { paused: values.paused === true, ...(values.note ? { note: values.note } : {}) },
    });
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) {
      console.error(
        `react-agent schedule: a schedule "${id}" already exists; change it with 'react-agent schedule update ${id} ...' or remove it with 'schedule delete ${id}'.`,
      );
      return 1;
    }
    throw error;
  }
  console.log(id);
  const description = await context.client.schedule.getHandle(id).describe();
  const next = description.info.nextActionTimes.slice(0, 3).map((time) => time.toISOString());
  const link = scheduleLink(context, id);
  console.error(
    `Schedule ${id} created${values.paused ? ' (paused)' : ''}: ${batchSummaryText(input.questions, input.rollouts, `${files.output}/${id}/<scheduled time>/`)}` +
      `${next.length ? `\nNext: ${next.join(', ')}` : ''}${link ? `\nWeb UI: ${link}` : ''}`,
  );
  return 0;
};
