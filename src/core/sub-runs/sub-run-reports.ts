import { addUsage } from '../messages';
import type { ResearchRunResult } from '../run-result';
import type { RunState } from '../run-state';
import type { Termination } from '../termination';
import type { SubRunRecord } from './sub-run-record';
import { preview } from '../text';

/** What came back from one sub-run: its result, or why there is none (it could not start, or failed as a workflow). */
export type SubRunOutcome =
  | { workflowId: string; question: string; result: ResearchRunResult }
  | { workflowId: string; question: string; failure: string };

/** Longest question kept in a {@link SubRunRecord}. */
const RECORD_QUESTION_CHARACTERS = 200;

/** A sub-run's record from its outcome. */
export function subRunRecord(outcome: SubRunOutcome): SubRunRecord {
  const question = preview(outcome.question, RECORD_QUESTION_CHARACTERS);
  if ('failure' in outcome)
    return {
      workflowId: outcome.workflowId,
      question,
      termination: 'error',
      modelCalls: 0,
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      durationMs: 0,
      error: preview(outcome.failure, 500),
    };
  const { result } = outcome;
  return {
    workflowId: outcome.workflowId,
    question,
    termination: result.termination,
    modelCalls: result.iterations + (result.subRuns?.modelCalls ?? 0),
    usage: result.usage,
    durationMs: result.durationMs,
    ...(result.error ? { error: preview(result.error, 500) } : {}),
  };
}

/** The parent's state once these sub-runs ended: their model calls in `subRuns`, their tokens and cost in `usage`. */
export function withSubRuns(state: RunState, records: SubRunRecord[]): RunState {
  const before = state.subRuns ?? { modelCalls: 0, runs: [] };
  return {
    ...state,
    usage: records.reduce((usage, record) => addUsage(usage, record.usage), state.usage),
    subRuns: {
      modelCalls: before.modelCalls + records.reduce((calls, record) => calls + record.modelCalls, 0),
      runs: [...before.runs, ...records],
    },
  };
}

/** How each termination reads in the observation. */
const ENDED: Record<Termination, string> = {
  answer: 'answered',
  max_calls: 'ran out of model calls; its best answer',
  timeout: 'ran out of time; its best answer',
  token_limit: 'reached its token limit; its best answer',
  cost_limit: 'reached its cost budget; its best answer',
  cancelled: 'was cancelled; its answer so far',
  stuck: 'got stuck; its best answer',
  error: 'failed',
};

/**
 * The `delegate` call's observation: for each task, in order, its question, its run id, how it
 * ended with its calls and tokens, and its answer (or its best partial answer, or why it failed).
 * Answers longer than their share of `maxCharacters` are cut with a pointer to the whole one.
 */
export function delegationObservation(outcomes: SubRunOutcome[], maxCharacters: number): string {
  const share = Math.max(500, Math.floor(maxCharacters / Math.max(1, outcomes.length)) - 300);
  const parts = outcomes.map((outcome, index) => {
    const record = subRunRecord(outcome);
    const head =
      `[${index + 1}] ${record.question}\n` +
      `run ${record.workflowId}: ${ENDED[record.termination]}` +
      ('result' in outcome
        ? ` (${record.modelCalls} model call${record.modelCalls === 1 ? '' : 's'}, ${record.usage.totalTokens} tokens)`
        : '');
    if ('failure' in outcome) return `${head}: ${record.error}`;
    const prediction = outcome.result.prediction;
    const answer =
      prediction.length <= share
        ? prediction
        : `${prediction.slice(0, share)}… [cut at ${share} of ${prediction.length} characters; ` +
          `the whole answer: react-agent result ${record.workflowId}]`;
    return `${head}:\n${answer}`;
  });
  return `Reports of ${outcomes.length} sub-run${outcomes.length === 1 ? '' : 's'}:\n\n${parts.join('\n\n')}`;
}
