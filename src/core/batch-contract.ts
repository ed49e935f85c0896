import { workerLocationProblem } from './s3-url';
import type { BatchCounts, RolloutSummary } from './batch-progress';
import { concernsField, validateAgainstSchema } from './json-schema-validation';
import type { ResearchRunInput } from './run-input';
import BATCH_INPUT_SCHEMA from '../../schemas/researchBatch.input.json';
import type { Termination } from './termination';
import { isJudgeChoice, type EvaluationHeadline } from './evaluation/evaluation-contract';
import type { CostFigures } from './cost-figures';

/**
 * The `researchBatch` workflow's contract (issue 11; docs/architecture.md, "Batches are workflows of workflows"), workflow-safe: its
 * input, the ids and ordering of its runs, the activities' inputs and outputs, its summary.
 *
 * A batch runs every (question, rollout) pair once as a child `researchAgent` with the id
 * `<batch id>/q<index>-r<rollout>` (index 0-based, rollout 1-based, as `iter<rollout>.jsonl`).
 * Pairs are taken rollout by rollout: ordinal `o` is question `o % questions` of rollout
 * `floor(o / questions) + 1`, so iter1 fills first.
 */

/** What every run of the batch gets besides its question and answer. */
export type BatchRunTemplate = Omit<ResearchRunInput, 'question' | 'answer' | 'resume' | 'resumedFrom'>;

export const DEFAULT_BATCH_CONCURRENCY = 8;
export const MAX_BATCH_CONCURRENCY = 1_000;
export const MAX_BATCH_ROLLOUTS = 100;
export const MAX_BATCH_QUESTIONS = 1_000_000;
/** Runs one workflow run of the batch starts before it continues as new (fewer if Temporal suggests it sooner). */
export const DEFAULT_RUNS_PER_CONTINUATION = 200;

/** Input of the `researchBatch` workflow. */
export interface ResearchBatchInput {
  /** Reference (`sha256:…`) of the stored questions (src/storage/batch-input-file.ts). */
  input: string;
  /**
   * How many questions the stored input holds.
   * @asType integer
   * @minimum 1
   * @maximum 1000000
   */
  questions: number;
  /**
   * Runs per question; run r of every question goes to `iter<r>.jsonl`.
   * @asType integer
   * @minimum 1
   * @maximum 100
   */
  rollouts: number;
  /**
   * Runs at once. Default 8.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  concurrency?: number;
  /** Output directory (absolute, reachable by the workers), or `s3://bucket/prefix` (written through S3 by the workers). */
  output: string;
  /** Options of every run: limits, model, tools, protocol, loop. */
  run?: BatchRunTemplate;
  /** A name for people: in batch.json and the summary. */
  name?: string;
  /** Where the questions came from (a file name), for batch.json. */
  source?: string;
  /**
   * Skip (question, rollout) pairs the output directory already has a line for, unless that
   * line ended `error`; rerun those, the new line replacing the old.
   */
  resume?: boolean;
  /**
   * Set by a schedule: the batch writes to `<output>/<schedule id>/<scheduled start time>/`,
   * the time taken from the schedule's `TemporalScheduledStartTime` (so a backfill writes
   * where that night would have).
   */
  schedule?: { id: string };
  /**
   * Runs started per workflow run before continuing as new. Default 200.
   * @asType integer
   * @minimum 1
   * @maximum 100000
   */
  runsPerContinuation?: number;
  /**
   * Evaluate when the batch ends (issue 12): the batch starts an `evaluation` child workflow
   * over its output directory, writing to `<output>/evaluation/` (unless the batch was cancelled).
   */
  evaluate?: BatchEvaluation;
  /** Internal: what a continued batch resumes from (set by continue-as-new, never by callers). */
  carry?: BatchCarry;
}

/** How a batch evaluates itself at its end. */
export interface BatchEvaluation {
  /** `gaia`, `browsecomp`, an absolute prompt file path, or `exact_match` (no judge). Default `exact_match`. */
  judge?: string;
  /** Judge activities at once. Default 8. */
  concurrency?: number;
  /** Attempts per judge activity. Default 5. */
  judgeAttempts?: number;
}

/** The small state a batch carries into its next run. */
export interface BatchCarry {
  /** The first ordinal not yet started. */
  cursor: number;
  counts: BatchCounts;
  /** Workflow time the batch started, ms since the epoch. */
  startedAt: number;
  /** The output directory resolved at the start (the dated folder, for a scheduled batch). */
  output: string;
  continuedAsNew: number;
}

/** Child workflow id of a run of the batch. */
export function batchRunId(batchId: string, index: number, rollout: number): string {
  return `${batchId}/q${index}-r${rollout}`;
}

/** The (index, rollout) of a run id made by {@link batchRunId}, or undefined. */
export function parseBatchRunId(runId: string): { batchId: string; index: number; rollout: number } | undefined {
  const match = /^(.+)\/q(\d+)-r(\d+)$/.exec(runId);
  return match ? { batchId: match[1] as string, index: Number(match[2]), rollout: Number(match[3]) } : undefined;
}

/** The (question index, rollout) of an ordinal. */
export function pairOfOrdinal(ordinal: number, questions: number): { index: number; rollout: number } {
  return { index: ordinal % questions, rollout: Math.floor(ordinal / questions) + 1 };
}

/** Folder name of a scheduled batch: its scheduled start time, `2026-01-02T03-00-00Z` (no colons). */
export function scheduledFolderName(scheduledStart: Date): string {
  return scheduledStart
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/:/g, '-');
}

/** The directory a batch writes to. */
export function batchOutputDirectory(
  output: string,
  schedule: { id: string } | undefined,
  scheduledStart: Date,
): string {
  return schedule ? `${output.replace(/\/+$/, '')}/${schedule.id}/${scheduledFolderName(scheduledStart)}` : output;
}

/**
 * Problems with a batch's input (empty when valid), so the CLI and the workflow refuse the same
 * things: first its shape against the contract's schema (schemas/researchBatch.input.json: types,
 * ranges, unknown fields, the run options as a run's input checks them) and, for fields of the
 * right type, what a schema cannot say (a stored reference, a usable output, a schedule id, a judge).
 */
export function validateBatchInput(input: ResearchBatchInput): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return [
      'the input must be a JSON object such as {"input": "sha256:…", "questions": 3, "rollouts": 1, "output": "/abs/dir"}',
    ];
  const problems = validateAgainstSchema(BATCH_INPUT_SCHEMA, input, '');
  const shapeOk = (field: string) => !concernsField(problems, field);
  if (shapeOk('input') && !/^sha256:[0-9a-f]{64}$/.test(input.input))
    problems.push(`input must be a stored input reference (sha256:…), got ${JSON.stringify(input.input)}`);
  // An s3:// output (accepted since the S3 outputs of issue 13) used to fail here at once, so no running batch replays differently.
  if (shapeOk('output') && workerLocationProblem(input.output)) {
    problems.push(
      `output must be an absolute directory path or an s3://bucket/prefix URL, got ${JSON.stringify(input.output)}`,
    );
  }
  if (shapeOk('schedule') && input.schedule !== undefined && !/^[A-Za-z0-9][A-Za-z0-9._-]*$/.test(input.schedule.id)) {
    problems.push(`schedule.id must be letters, digits, '.', '_' or '-', got ${JSON.stringify(input.schedule.id)}`);
  }
  if (shapeOk('evaluate') && input.evaluate?.judge !== undefined && !isJudgeChoice(input.evaluate.judge)) {
    problems.push(
      `evaluate.judge must be gaia, browsecomp, exact_match or an absolute prompt file path, got ${JSON.stringify(input.evaluate.judge)}`,
    );
  }
  return problems;
}

/** Everything batch.json records about a batch. */
export interface BatchRecord {
  id: string;
  name?: string;
  /** Reference of the stored questions. */
  input: string;
  source?: string;
  questions: number;
  rollouts: number;
  concurrency: number;
  run: BatchRunTemplate;
  /** The model the runs use (the run options', else the worker's default). */
  model?: string;
  output: string;
  schedule?: { id: string; scheduledStart: string };
  startedAt: string;
  endedAt?: string;
  status: 'running' | 'completed' | 'cancelled';
  counts?: RolloutSummary[];
}

export interface OpenBatchOutputInput {
  record: BatchRecord;
  resume: boolean;
}

export interface OpenBatchOutputOutput {
  model: string;
}

export interface PrepareBatchChunkInput {
  input: string;
  output: string;
  questions: number;
  rollouts: number;
  /** Ordinals [from, to). */
  from: number;
  to: number;
  resume: boolean;
}

/** One (question, rollout) pair of a chunk: to run (with its question), or kept from an earlier batch. */
export interface BatchChunkItem {
  ordinal: number;
  question?: string;
  answer?: string;
  /** Set when resuming and the output already has a line for the pair that did not end `error`. */
  kept?: Termination;
}

export interface WriteBatchLineInput {
  output: string;
  batchId: string;
  /** The run's workflow id and first run id; the activity reads the run's result through Temporal. */
  workflowId: string;
  runId?: string;
  index: number;
  rollout: number;
  /** When the run failed instead of returning a result: what went wrong (the line ends `error`). */
  failure?: { message: string; question: string; answer?: string };
}

export interface WriteBatchLineOutput {
  termination: Termination;
}

export interface FinishBatchOutputInput {
  output: string;
  summary: BatchSummary;
}

/** What a batch returns, and summary.json holds. */
export interface BatchSummary {
  batchId: string;
  name?: string;
  output: string;
  input: string;
  questions: number;
  rollouts: number;
  /** True when the batch was cancelled: pairs not started have no line. */
  cancelled: boolean;
  startedAt: string;
  endedAt: string;
  durationMs: number;
  continuedAsNew: number;
  /** Lines in the iter files altogether. */
  lines: number;
  perRollout: RolloutSummary[];
  /**
   * What the batch's runs cost altogether and per rollout (per run), from `perRollout`; absent when
   * no run had a price. Per correct answer: `evaluation.headline.cost`.
   */
  cost?: CostFigures;
  /** With `evaluate`: where the evaluation wrote its report and its headline, or why it failed. */
  evaluation?: { evaluationId: string; reportPath?: string; headline?: EvaluationHeadline; failed?: string };
}
