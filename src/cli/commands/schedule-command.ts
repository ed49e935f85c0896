import { basename } from 'node:path';
import { ScheduleAlreadyRunning, ScheduleNotFoundError, type ScheduleDescription, type ScheduleOverlapPolicy, type ScheduleSpec } from '@temporalio/client';
import type { BatchRunTemplate, ResearchBatchInput } from '../../core/batch-contract';
import { WorkflowTypes } from '../../core/workflow-types';
import { batchNumbersFrom, batchRunTemplateFrom, batchSummaryText, checkedInputFile, checkedOutputDirectory, storeInput } from '../batch-options';
import { openCliContext, printJson, type CliContext } from '../cli-context';
import { cronProblem, formatDuration, isKnownTimeZone, OVERLAP_POLICIES, overlapNameOf, overlapPolicyOf, parseDuration } from '../schedule-spec';
import { webUiLink } from '../temporal-client';
import { evaluateOptionFrom, evaluateOptionSpecs, evaluateOptionsHelp } from '../evaluate-option';
import { parseCommandLine } from '../command-line';
import { everyRunOptionSpecs, everyRunOptionsHelp } from '../run-options';
import { UsageError } from '../usage-error';
import { reportRejected } from './batch-command';

export const scheduleHelp = `Usage: react-agent schedule <subcommand> ...

Temporal Schedules that start batches (each a researchBatch workflow, as 'react-agent batch' starts).
Each scheduled batch writes to its own dated folder DIR/<schedule-id>/<scheduled start time>/
(the time it was scheduled for, so a backfill writes where that night would have). The input is
stored by content hash when the schedule is created: editing or deleting the file later changes
nothing.

  schedule create <schedule-id> --input FILE --output DIR (--cron EXPR | --every DURATION) [options]
  schedule list
  schedule describe <id>                     next run times, recent batches with their ids and status
  schedule pause <id> [--note TEXT]
  schedule unpause <id> [--note TEXT]
  schedule trigger <id> [--overlap POLICY]    start a batch now
  schedule backfill <id> --from T --to T [--overlap POLICY]
                                             take the actions of a past period (default overlap buffer-all)
  schedule update <id> [any create option]   change what is given, keep the rest
  schedule delete <id>

Options of create and update:
  --input FILE               questions (.jsonl, .json, .csv), checked whole, stored by hash
  --output DIR               base directory the workers can reach
  --cron EXPR                e.g. "0 3 * * *" (03:00 every day); 5 fields, or 6/7, @daily, @every 6h
  --every DURATION           e.g. 30m, 6h, 1d
  --rollouts K               runs per question (default 1)
  --concurrency N            runs at once (default 8)
  --name NAME                a name for the batches (in batch.json)
  --overlap POLICY           ${Object.keys(OVERLAP_POLICIES).join('|')} (default skip): when a batch is still running
  --catchup-window DURATION  how late a missed action may still start (e.g. after an outage); Temporal's default 1 year
  --pause-on-failure         pause the schedule when a batch fails
  --timezone TZ              IANA zone the cron is read in (default UTC)
  --jitter DURATION          start each batch up to this much later, at random
  --paused                   create it paused
  --note TEXT                a note shown with the schedule's state
${evaluateOptionsHelp.replace(/when the batch ends/, 'when each scheduled batch ends (create)')}
${everyRunOptionsHelp}

Durations: 90s, 15m, 6h, 1d, 1h30m. Times (--from, --to): ISO 8601, e.g. 2026-01-01T00:00:00Z.`;

const scheduleOptionSpecs = {
  input: { type: 'string' },
  output: { type: 'string' },
  cron: { type: 'string' },
  every: { type: 'string' },
  rollouts: { type: 'string' },
  concurrency: { type: 'string' },
  name: { type: 'string' },
  overlap: { type: 'string' },
  'catchup-window': { type: 'string' },
  'pause-on-failure': { type: 'boolean' },
  'no-pause-on-failure': { type: 'boolean' },
  timezone: { type: 'string' },
  jitter: { type: 'string' },
  paused: { type: 'boolean' },
  note: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  ...evaluateOptionSpecs,
  ...everyRunOptionSpecs,
} as const;

type Values = ReturnType<typeof parseCommandLine<typeof scheduleOptionSpecs>>['values'];

/** What the scheduled batches' memo says, for `list --batches` and `schedule describe`. */
interface ScheduleMemo {
  questions: number;
  rollouts: number;
  output: string;
  schedule: string;
  cron?: string;
  every?: string;
  source?: string;
  name?: string;
}

function durationOption(values: Values, name: 'catchup-window' | 'jitter' | 'every'): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  const milliseconds = parseDuration(raw);
  if (milliseconds === undefined || milliseconds <= 0) throw new UsageError(`--${name} "${raw}" is not a duration such as 90s, 15m, 6h, 1d or 1h30m.`, scheduleHelp);
  return milliseconds;
}

function overlapOption(values: Values): ScheduleOverlapPolicy | undefined {
  if (values.overlap === undefined) return undefined;
  const policy = overlapPolicyOf(values.overlap);
  if (!policy) throw new UsageError(`--overlap must be one of ${Object.keys(OVERLAP_POLICIES).join(', ')}, got "${values.overlap}".`, scheduleHelp);
  return policy;
}

/** The spec options given (cron or interval, time zone, jitter), checked. */
function specFrom(values: Values): { timing?: Pick<ScheduleSpec, 'cronExpressions' | 'intervals'>; timezone?: string; jitter?: number } {
  if (values.cron !== undefined && values.every !== undefined) throw new UsageError('Give --cron or --every, not both.', scheduleHelp);
  let timing: Pick<ScheduleSpec, 'cronExpressions' | 'intervals'> | undefined;
  if (values.cron !== undefined) {
    const problem = cronProblem(values.cron);
    if (problem) throw new UsageError(`--cron "${values.cron}" does not parse: ${problem}.`, scheduleHelp);
    timing = { cronExpressions: [values.cron] };
  }
  const every = durationOption(values, 'every');
  if (every !== undefined) {
    if (every < 1_000) throw new UsageError(`--every must be at least 1s, got "${values.every}".`, scheduleHelp);
    timing = { intervals: [{ every }] };
  }
  if (values.timezone !== undefined && !isKnownTimeZone(values.timezone))
    throw new UsageError(`--timezone "${values.timezone}" is not a known IANA time zone (e.g. Europe/Paris, America/New_York, UTC).`, scheduleHelp);
  const jitter = durationOption(values, 'jitter');
  return { ...(timing ? { timing } : {}), ...(values.timezone !== undefined ? { timezone: values.timezone } : {}), ...(jitter !== undefined ? { jitter } : {}) };
}

function scheduleIdFrom(positionals: string[], subcommand: string): string {
  const id = positionals[1];
  if (!id) throw new UsageError(`schedule ${subcommand} needs a schedule id.`, scheduleHelp);
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(id)) throw new UsageError(`A schedule id is letters, digits, '.', '_' and '-' (it names the output folder), got "${id}".`, scheduleHelp);
  if (positionals.length > 2) throw new UsageError(`Unexpected arguments after the schedule id: ${positionals.slice(2).join(' ')}.`, scheduleHelp);
  return id;
}

function hasRunOptions(values: Values): boolean {
  return Object.keys(everyRunOptionSpecs).some((name) => values[name as keyof Values] !== undefined);
}

/** The previous run options with the given ones laid over them. */
function mergeRunOptions(previous: BatchRunTemplate, given: BatchRunTemplate): BatchRunTemplate {
  const limits = { ...(previous.limits ?? {}), ...(given.limits ?? {}) };
  const model = { ...(previous.model ?? {}), ...(given.model ?? {}) };
  return {
    ...previous,
    ...given,
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(Object.keys(model).length ? { model } : {}),
  };
}

function scheduleLink(context: CliContext, id: string): string | undefined {
  return webUiLink(context.temporal, id)?.replace(/\/workflows\/[^/]*$/, `/schedules/${encodeURIComponent(id)}`);
}

function notFound(context: CliContext, id: string): number {
  console.error(`react-agent schedule: no schedule "${id}" in namespace ${context.temporal.namespace}; 'react-agent schedule list' shows the schedules there.`);
  return 1;
}

async function create(context: CliContext, id: string, values: Values): Promise<number> {
  if (!values.input) throw new UsageError('schedule create needs --input FILE: the questions.', scheduleHelp);
  if (!values.output) throw new UsageError('schedule create needs --output DIR: where the dated folders go.', scheduleHelp);
  const { timing, timezone, jitter } = specFrom(values);
  if (!timing) throw new UsageError('schedule create needs --cron EXPR or --every DURATION.', scheduleHelp);
  const { rollouts, concurrency } = batchNumbersFrom(values, scheduleHelp);
  const run = batchRunTemplateFrom(values, scheduleHelp);
  const evaluate = evaluateOptionFrom(values, scheduleHelp);
  const overlap = overlapOption(values) ?? 'SKIP';
  const catchupWindow = durationOption(values, 'catchup-window');
  let prepared: { file: Awaited<ReturnType<typeof checkedInputFile>>['file']; notes: string[]; output: string };
  try {
    const { file, notes } = await checkedInputFile(values.input);
    prepared = { file, notes, output: await checkedOutputDirectory(values.output, { resume: true }) };
  } catch (error) {
    return reportRejected(error);
  }
  for (const note of prepared.notes) console.error(note);
  const input: ResearchBatchInput = {
    input: await storeInput(context.store, prepared.file),
    questions: prepared.file.items.length,
    rollouts: rollouts as number,
    concurrency: concurrency as number,
    output: prepared.output,
    run,
    ...(values.name ? { name: values.name } : {}),
    source: basename(values.input),
    schedule: { id },
    ...(evaluate ? { evaluate } : {}),
  };
  const memo: ScheduleMemo = {
    questions: input.questions,
    rollouts: input.rollouts,
    output: `${prepared.output}/${id}`,
    schedule: id,
    ...(values.cron !== undefined ? { cron: values.cron } : {}),
    ...(values.every !== undefined ? { every: values.every } : {}),
    source: input.source as string,
    ...(values.name ? { name: values.name } : {}),
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
        staticSummary: batchSummaryText(input.questions, input.rollouts, `${prepared.output}/${id}/<scheduled time>`),
        memo: memo as unknown as Record<string, unknown>,
      },
      policies: { overlap, ...(catchupWindow !== undefined ? { catchupWindow } : {}), pauseOnFailure: values['pause-on-failure'] === true },
      state: { paused: values.paused === true, ...(values.note ? { note: values.note } : {}) },
    });
  } catch (error) {
    if (error instanceof ScheduleAlreadyRunning) {
      console.error(`react-agent schedule: a schedule "${id}" already exists; change it with 'react-agent schedule update ${id} ...' or remove it with 'schedule delete ${id}'.`);
      return 1;
    }
    throw error;
  }
  console.log(id);
  const description = await context.client.schedule.getHandle(id).describe();
  const next = description.info.nextActionTimes.slice(0, 3).map((time) => time.toISOString());
  const link = scheduleLink(context, id);
  console.error(
    `Schedule ${id} created${values.paused ? ' (paused)' : ''}: ${batchSummaryText(input.questions, input.rollouts, `${prepared.output}/${id}/<scheduled time>/`)}` +
      `${next.length ? `\nNext: ${next.join(', ')}` : ''}${link ? `\nWeb UI: ${link}` : ''}`,
  );
  return 0;
}

async function update(context: CliContext, id: string, values: Values): Promise<number> {
  const { timing, timezone, jitter } = specFrom(values);
  const numbers = batchNumbersFrom(values, scheduleHelp, false);
  const run = hasRunOptions(values) ? batchRunTemplateFrom(values, scheduleHelp) : undefined;
  const overlap = overlapOption(values);
  const catchupWindow = durationOption(values, 'catchup-window');
  let file: Awaited<ReturnType<typeof checkedInputFile>>['file'] | undefined;
  let output: string | undefined;
  try {
    if (values.input) {
      const checked = await checkedInputFile(values.input);
      for (const note of checked.notes) console.error(note);
      file = checked.file;
    }
    if (values.output) output = await checkedOutputDirectory(values.output, { resume: true });
  } catch (error) {
    return reportRejected(error);
  }
  const storedInput = file ? await storeInput(context.store, file) : undefined;
  const changed: string[] = [];
  await context.client.schedule.getHandle(id).update((previous) => {
    const previousInput = previous.action.args?.[0] as ResearchBatchInput;
    const previousMemo = (previous.action.memo ?? {}) as unknown as ScheduleMemo;
    const input: ResearchBatchInput = {
      ...previousInput,
      ...(storedInput && file ? { input: storedInput, questions: file.items.length, source: basename(values.input as string) } : {}),
      ...numbers,
      ...(output ? { output } : {}),
      ...(run ? { run: mergeRunOptions(previousInput.run ?? {}, run) } : {}),
      ...(values.name ? { name: values.name } : {}),
    };
    const spec = { ...previous.spec } as ScheduleSpec;
    if (timing) {
      delete spec.calendars;
      delete spec.intervals;
      delete spec.cronExpressions;
      Object.assign(spec, timing);
      changed.push(values.cron !== undefined ? 'cron' : 'interval');
    }
    if (timezone !== undefined) spec.timezone = timezone;
    if (jitter !== undefined) spec.jitter = jitter;
    const memo: ScheduleMemo = {
      ...previousMemo,
      questions: input.questions,
      rollouts: input.rollouts,
      output: `${input.output}/${id}`,
      ...(values.cron !== undefined ? { cron: values.cron, every: undefined } : {}),
      ...(values.every !== undefined ? { every: values.every, cron: undefined } : {}),
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
        overlap: overlap ?? previous.policies.overlap,
        catchupWindow: catchupWindow ?? previous.policies.catchupWindow,
        pauseOnFailure: values['pause-on-failure'] ? true : values['no-pause-on-failure'] ? false : previous.policies.pauseOnFailure,
      },
      state: {
        paused: values.paused === true ? true : previous.state.paused,
        ...(values.note !== undefined ? { note: values.note } : previous.state.note !== undefined ? { note: previous.state.note } : {}),
        ...(previous.state.remainingActions !== undefined ? { remainingActions: previous.state.remainingActions } : {}),
      },
    };
  });
  console.log(`Schedule ${id} updated.`);
  return 0;
}

async function describe(context: CliContext, id: string): Promise<number> {
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
}

async function list(context: CliContext): Promise<number> {
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
}

function timeOption(values: Values, name: 'from' | 'to'): Date {
  const raw = values[name];
  if (!raw) throw new UsageError(`schedule backfill needs --from T and --to T (ISO 8601 times, e.g. 2026-01-01T00:00:00Z).`, scheduleHelp);
  const time = new Date(raw);
  if (Number.isNaN(time.getTime())) throw new UsageError(`--${name} "${raw}" is not a time; use ISO 8601, e.g. 2026-01-01T00:00:00Z.`, scheduleHelp);
  return time;
}

export async function scheduleCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argumentsList, scheduleOptionSpecs, scheduleHelp);
  const subcommand = positionals[0];
  const subcommands = ['create', 'list', 'describe', 'pause', 'unpause', 'trigger', 'backfill', 'update', 'delete'];
  if (!subcommand) throw new UsageError('Give a subcommand.', scheduleHelp);
  if (!subcommands.includes(subcommand)) throw new UsageError(`Unknown schedule subcommand "${subcommand}"; use one of ${subcommands.join(', ')}.`, scheduleHelp);
  const id = subcommand === 'list' ? '' : scheduleIdFrom(positionals, subcommand);
  let backfillRange: { from: Date; to: Date } | undefined;
  if (subcommand === 'backfill') {
    backfillRange = { from: timeOption(values, 'from'), to: timeOption(values, 'to') };
    if (backfillRange.from.getTime() >= backfillRange.to.getTime())
      throw new UsageError(`--from must be before --to (${backfillRange.from.toISOString()} is not before ${backfillRange.to.toISOString()}).`, scheduleHelp);
  }
  const overlap = ['trigger', 'backfill'].includes(subcommand) ? overlapOption(values) : undefined;
  const context = await openCliContext();
  try {
    const handle = context.client.schedule.getHandle(id);
    switch (subcommand) {
      case 'create':
        return await create(context, id, values);
      case 'list':
        return await list(context);
      case 'describe':
        return await describe(context, id);
      case 'update':
        return await update(context, id, values);
      case 'pause':
        await handle.pause(values.note ?? 'Paused with react-agent schedule pause');
        console.log(`Schedule ${id} paused: no batches start until 'react-agent schedule unpause ${id}'.`);
        return 0;
      case 'unpause':
        await handle.unpause(values.note ?? 'Unpaused with react-agent schedule unpause');
        console.log(`Schedule ${id} unpaused.`);
        return 0;
      case 'trigger':
        await handle.trigger(overlap);
        console.log(`Schedule ${id} triggered: a batch starts now ('react-agent schedule describe ${id}' shows its id).`);
        return 0;
      case 'backfill': {
        const range = backfillRange as { from: Date; to: Date };
        await handle.backfill({ start: range.from, end: range.to, overlap: overlap ?? 'BUFFER_ALL' });
        console.log(
          `Schedule ${id} backfilled from ${range.from.toISOString()} to ${range.to.toISOString()} (overlap ${overlapNameOf(overlap ?? 'BUFFER_ALL')}): each action of that period starts a batch writing to its own dated folder.`,
        );
        return 0;
      }
      case 'delete':
        await handle.delete();
        console.log(`Schedule ${id} deleted (its batches and their output stay).`);
        return 0;
      default:
        throw new UsageError(`Unknown schedule subcommand "${subcommand}".`, scheduleHelp);
    }
  } catch (error) {
    if (error instanceof ScheduleNotFoundError) return notFound(context, id);
    throw error;
  } finally {
    await context.close();
  }
}
