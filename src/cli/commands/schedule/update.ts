import type { ScheduleHandle, ScheduleOverlapPolicy, ScheduleSpec } from '@temporalio/client';
import type { BatchRunTemplate, ResearchBatchInput } from '../../../core/batch-contract';
import {
  batchNumbersFrom,
  batchRunTemplateFrom,
  batchSummaryText,
  checkedInputFile,
  checkedOutputDirectory,
  reportRejected,
  storedQuestions,
  type CheckedQuestions,
} from '../../batch-preparation';
import { everyRunOptionSpecs } from '../../run-options';
import { scheduleHelp } from './schedule-help';
import type { ScheduleMemo } from './schedule-memo';
import { durationOption, overlapOption, specFrom, type ScheduleTiming, type ScheduleValues } from './schedule-options';
import type { ScheduleSubcommand } from './schedule-subcommand';

type ScheduleUpdater = Parameters<ScheduleHandle['update']>[0];
/** A schedule as Temporal describes it to an update. */
export type PreviousSchedule = Parameters<ScheduleUpdater>[0];
/** A schedule as an update leaves it. */
export type UpdatedSchedule = ReturnType<ScheduleUpdater>;

/** What `schedule update` was given, checked; each field absent when not given. */
export interface ScheduleChanges {
  /** The new questions: stored, with their count and file name. */
  questions?: Pick<ResearchBatchInput, 'input' | 'questions' | 'source'>;
  rollouts?: number;
  concurrency?: number;
  output?: string;
  /** Run options, laid over the previous ones ({@link mergeRunOptions}). */
  run?: BatchRunTemplate;
  name?: string;
  timing?: ScheduleTiming;
  cron?: string;
  every?: string;
  timezone?: string;
  jitter?: number;
  overlap?: ScheduleOverlapPolicy;
  catchupWindow?: number;
  /** true for --pause-on-failure, false for --no-pause-on-failure. */
  pauseOnFailure?: boolean;
  /** true for --paused (an update never unpauses). */
  paused?: boolean;
  note?: string;
}

/** The previous run options with the given ones laid over them. */
export function mergeRunOptions(previous: BatchRunTemplate, given: BatchRunTemplate): BatchRunTemplate {
  const limits = { ...(previous.limits ?? {}), ...(given.limits ?? {}) };
  const model = { ...(previous.model ?? {}), ...(given.model ?? {}) };
  return {
    ...previous,
    ...given,
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(Object.keys(model).length ? { model } : {}),
  };
}

/** Schedule `id` with the changes laid over it: what is not given stays as it was. */
export function updatedSchedule(id: string, previous: PreviousSchedule, changes: ScheduleChanges): UpdatedSchedule {
  const previousInput = previous.action.args?.[0] as ResearchBatchInput;
  const previousMemo = (previous.action.memo ?? {}) as unknown as ScheduleMemo;
  const input: ResearchBatchInput = {
    ...previousInput,
    ...(changes.questions ?? {}),
    ...(changes.rollouts !== undefined ? { rollouts: changes.rollouts } : {}),
    ...(changes.concurrency !== undefined ? { concurrency: changes.concurrency } : {}),
    ...(changes.output ? { output: changes.output } : {}),
    ...(changes.run ? { run: mergeRunOptions(previousInput.run ?? {}, changes.run) } : {}),
    ...(changes.name ? { name: changes.name } : {}),
  };
  const spec = { ...previous.spec } as ScheduleSpec;
  if (changes.timing) {
    delete spec.calendars;
    delete spec.intervals;
    delete spec.cronExpressions;
    Object.assign(spec, changes.timing);
  }
  if (changes.timezone !== undefined) spec.timezone = changes.timezone;
  if (changes.jitter !== undefined) spec.jitter = changes.jitter;
  const memo: ScheduleMemo = {
    ...previousMemo,
    questions: input.questions,
    rollouts: input.rollouts,
    output: `${input.output}/${id}`,
    ...(changes.cron !== undefined ? { cron: changes.cron, every: undefined } : {}),
    ...(changes.every !== undefined ? { every: changes.every, cron: undefined } : {}),
    ...(input.source ? { source: input.source } : {}),
  };
  return {
    spec,
    action: {
      ...previous.action,
      args: [input],
      staticSummary: batchSummaryText(input.questions, input.rollouts, `${input.output}/${id}/<scheduled time>`),
      memo: JSON.parse(JSON.stringify(memo)) as Record<string, unknown>,
    },
    policies: {
      overlap: changes.overlap ?? previous.policies.overlap,
      catchupWindow: changes.catchupWindow ?? previous.policies.catchupWindow,
      pauseOnFailure: changes.pauseOnFailure ?? previous.policies.pauseOnFailure,
    },
    state: {
      paused: changes.paused === true ? true : previous.state.paused,
      ...(changes.note !== undefined
        ? { note: changes.note }
        : previous.state.note !== undefined
          ? { note: previous.state.note }
          : {}),
      ...(previous.state.remainingActions !== undefined ? { remainingActions: previous.state.remainingActions } : {}),
    },
  };
}

function hasRunOptions(values: ScheduleValues): boolean {
  return Object.keys(everyRunOptionSpecs).some((name) => values[name as keyof ScheduleValues] !== undefined);
}

/** `schedule update <id> [any create option]`: changes what is given, keeps the rest. */
export const updateSchedule: ScheduleSubcommand = (id, values) => async (context) => {
  const { timing, timezone, jitter } = specFrom(values);
  const numbers = batchNumbersFrom(values, scheduleHelp, false);
  const run = hasRunOptions(values) ? batchRunTemplateFrom(values, scheduleHelp) : undefined;
  const overlap = overlapOption(values);
  const catchupWindow = durationOption(values, 'catchup-window');
  let questions: CheckedQuestions | undefined;
  let output: string | undefined;
  try {
    if (values.input) {
      questions = await checkedInputFile(values.input);
      for (const note of questions.notes) console.error(note);
    }
    if (values.output) output = await checkedOutputDirectory(values.output, { resume: true });
  } catch (error) {
    return reportRejected(error);
  }
  const changes: ScheduleChanges = {
    ...(questions ? { questions: await storedQuestions(context.store, questions) } : {}),
    ...numbers,
    ...(output ? { output } : {}),
    ...(run ? { run } : {}),
    ...(values.name ? { name: values.name } : {}),
    ...(timing ? { timing } : {}),
    ...(values.cron !== undefined ? { cron: values.cron } : {}),
    ...(values.every !== undefined ? { every: values.every } : {}),
    ...(timezone !== undefined ? { timezone } : {}),
    ...(jitter !== undefined ? { jitter } : {}),
    ...(overlap ? { overlap } : {}),
    ...(catchupWindow !== undefined ? { catchupWindow } : {}),
    ...(values['pause-on-failure']
      ? { pauseOnFailure: true }
      : values['no-pause-on-failure']
        ? { pauseOnFailure: false }
        : {}),
    ...(values.paused === true ? { paused: true } : {}),
    ...(values.note !== undefined ? { note: values.note } : {}),
  };
  await context.client.schedule.getHandle(id).update((previous) => updatedSchedule(id, previous, changes));
  console.log(`Schedule ${id} updated.`);
  return 0;
};
