import type { EvaluationReport } from './evaluation-report';
import type { EvaluationRun } from './evaluation-runs';
import type { CostFigures } from '../cost-figures';
import type { VerdictFormat } from './judge-prompts';
import { concernsField, validateAgainstSchema } from '../json-schema-validation';
import { workerLocationProblem } from '../s3-url';
import EVALUATION_INPUT_SCHEMA from '../../../schemas/evaluation.input.json';

/**
 * The `evaluation` workflow's contract (issue 12), workflow-safe: its input, its activities'
 * inputs and outputs, its outcome. Transcripts never enter its history: an activity reads the
 * rollout files and stores the runs' facts (no messages) by hash in the transcript store; judge
 * activities read that blob and judge a range of runs each; verdicts go to the verdict store,
 * and the last activity reads them back to write the report.
 */

/** Judge concurrency: judge activities at once (each judges its runs one after another). Default 8. */
export const DEFAULT_EVALUATION_CONCURRENCY = 8;
/** Runs judged by one judge activity. Default 10. */
export const DEFAULT_RUNS_PER_JUDGE_ACTIVITY = 10;
/** Attempts of a judge activity (Temporal retries) before the evaluation fails. Default 5. */
export const DEFAULT_JUDGE_ATTEMPTS = 5;

/** Input of the `evaluation` workflow. */
export interface EvaluationWorkflowInput {
  /**
   * What the workers read: one batch output (an absolute directory or `s3://bucket/prefix`), or
   * rollout files (absolute paths or `s3://bucket/prefix/iter1.jsonl`) in rollout order.
   */
  paths: string[];
  /** Output (report.json, scored/, summary.jsonl): an absolute directory or `s3://bucket/prefix`. */
  output: string;
  /**
   * `gaia`, `browsecomp`, the absolute path of a prompt file (placeholders:
   * src/core/evaluation/judge-prompts.ts), or `exact_match` (no judge: exact match and F1).
   */
  judge: string;
  /** The batch evaluated, for the report. */
  batchId?: string;
  /**
   * Judge activities at once. Default {@link DEFAULT_EVALUATION_CONCURRENCY}.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  concurrency?: number;
  /**
   * Runs per judge activity. Default {@link DEFAULT_RUNS_PER_JUDGE_ACTIVITY}.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  runsPerActivity?: number;
  /**
   * Attempts per judge activity. Default {@link DEFAULT_JUDGE_ATTEMPTS}.
   * @asType integer
   * @minimum 1
   * @maximum 1000
   */
  judgeAttempts?: number;
  /** Web UI base for run links in the report (e.g. http://localhost:8233/namespaces/default). */
  webUiBase?: string;
}

/** What the stored evaluation input holds (the blob `prepareEvaluation` writes). */
export interface StoredEvaluationInput {
  version: 1;
  source: EvaluationReport['source'];
  files: string[];
  rollouts: EvaluationRun[][];
  skipped: EvaluationReport['skipped'];
  duplicates: NonNullable<EvaluationReport['duplicates']>;
  judge: StoredJudge;
}

/** The judge an evaluation uses, as stored with its input. */
export interface StoredJudge {
  name: string;
  template: string;
  format: VerdictFormat;
  model: string;
  promptHash: string;
}

export interface PrepareEvaluationInput {
  paths: string[];
  judge: string;
  batchId?: string;
  /** Where the report will go, checked against the data roots before anything is judged (absent in histories from before issue 28). */
  output?: string;
}

export interface PrepareEvaluationOutput {
  /** Reference (`sha256:…`) of the stored {@link StoredEvaluationInput}. */
  input: string;
  /** Runs over all rollouts, in order: rollout 1's, then rollout 2's, … */
  runs: number;
  judge: { name: string; model: string; promptHash: string };
  /** Set when nothing can be judged (no reference answers): the message; statistics are still written. */
  refused?: string;
}

/** Judge runs [from, to) of the stored input (skipping runs without a reference). */
export interface JudgeRunsInput {
  input: string;
  from: number;
  to: number;
}

/** The ranges of runs the judge activities take, in order: `[from, to)`, `size` runs each, the last one what is left. */
export function* judgeRanges(runs: number, size: number): Generator<Pick<JudgeRunsInput, 'from' | 'to'>> {
  for (let from = 0; from < runs; from += size) yield { from, to: Math.min(runs, from + size) };
}

export interface JudgeRunsOutput {
  /** Judge calls made (a reminder counts as a call). */
  made: number;
  /** Verdicts found already stored. */
  stored: number;
  unparsed: number;
}

export interface WriteEvaluationInput {
  input: string;
  output: string;
  createdAt: string;
  judgeCalls: { made: number; stored: number };
  refused?: string;
  webUiBase?: string;
}

/** The headline an evaluation returns (also what the CLI prints). */
export interface EvaluationHeadline {
  questions: number;
  rollouts: number;
  meanPassAt1: number;
  bestPassAt1: { rollout: number; passAt1: number };
  passAtAllRollouts: number;
  perRolloutPassAt1: number[];
  unparsedVerdicts: number;
  skippedLines: number;
  /** What the evaluated runs cost: altogether, per rollout (per run) and per correct answer; absent when no run had a price. */
  cost?: CostFigures;
}

export interface WriteEvaluationOutput {
  reportPath: string;
  headline: EvaluationHeadline;
  /** report.html, next to report.json (absent when it could not be rendered, or from a worker before it wrote one). */
  htmlPath?: string;
  /** Why report.html could not be rendered (report.json, scored/ and summary.jsonl are written all the same). */
  htmlProblem?: string;
}

/** Result of the `evaluation` workflow. */
export interface EvaluationOutcome extends WriteEvaluationOutput {
  output: string;
  judge: { name: string; model: string; promptHash: string };
  judgeCalls: { made: number; stored: number };
  refused?: string;
}

/** The headline of a report. */
export function headlineOf(report: EvaluationReport): EvaluationHeadline {
  return {
    questions: report.metrics.questions,
    rollouts: report.metrics.rollouts,
    meanPassAt1: report.metrics.meanPassAt1,
    bestPassAt1: report.metrics.bestPassAt1,
    passAtAllRollouts: report.metrics.passAtAllRollouts,
    perRolloutPassAt1: report.metrics.perRollout.map((rollout) => rollout.passAt1),
    unparsedVerdicts: report.unparsedVerdicts.length,
    skippedLines: report.skipped.length,
    ...(report.metrics.cost ? { cost: report.metrics.cost } : {}),
  };
}

/** Failure types of the evaluation. */
export const EvaluationFailureTypes = {
  invalidInput: 'ReactAgent.Evaluation.InvalidInput',
  /** An input, the judge prompt file or the output is a local path outside the worker's data roots (REACT_AGENT_DATA_ROOTS). */
  pathOutsideDataRoots: 'ReactAgent.Evaluation.PathOutsideDataRoots',
  judgeUnreachable: 'ReactAgent.Judge.Unreachable',
  judgeRejected: 'ReactAgent.Judge.RequestRejected',
  judgeServerError: 'ReactAgent.Judge.ServerError',
  judgeRateLimited: 'ReactAgent.Judge.RateLimited',
  judgeBadResponse: 'ReactAgent.Judge.BadResponse',
} as const;

/** Scoring without a judge: exact match and token F1 only. */
export const EXACT_MATCH_JUDGE = 'exact_match';

/** Whether a value names a judge the evaluation knows: gaia, browsecomp, exact_match or an absolute prompt file path. */
export function isJudgeChoice(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    (value === 'gaia' || value === 'browsecomp' || value === EXACT_MATCH_JUDGE || value.startsWith('/'))
  );
}

/**
 * Problems with the workflow's input (empty when valid): its shape against the contract's schema
 * (schemas/evaluation.input.json: types, ranges, unknown fields), and, for fields of the right
 * type, readable paths, an output and a judge.
 */
export function validateEvaluationInput(input: EvaluationWorkflowInput): string[] {
  if (typeof input !== 'object' || input === null || Array.isArray(input))
    return [
      'the input must be a JSON object such as {"paths": ["/abs/dir"], "output": "/abs/out", "judge": "exact_match"}',
    ];
  const problems = validateAgainstSchema(EVALUATION_INPUT_SCHEMA, input, '');
  const shapeOk = (field: string) => !concernsField(problems, field);
  // s3:// paths and outputs (issue 13) used to fail here at once, before any activity, so no evaluation that ran replays differently.
  const malformedS3 = (value: string) => workerLocationProblem(value) === 'malformed-s3';
  if (shapeOk('paths') && (input.paths.length === 0 || input.paths.some(workerLocationProblem))) {
    const malformed = input.paths.find(malformedS3);
    problems.push(
      malformed
        ? `paths: ${JSON.stringify(malformed)} is not a valid s3://bucket/prefix URL`
        : 'paths must be a non-empty list of absolute paths',
    );
  }
  const outputProblem = shapeOk('output') ? workerLocationProblem(input.output) : undefined;
  if (outputProblem)
    problems.push(
      outputProblem === 'malformed-s3'
        ? `output: ${JSON.stringify(input.output)} is not a valid s3://bucket/prefix URL`
        : 'output must be an absolute directory path',
    );
  if (shapeOk('judge') && !isJudgeChoice(input.judge))
    problems.push('judge must be gaia, browsecomp, exact_match or the absolute path of a prompt file');
  return problems;
}
