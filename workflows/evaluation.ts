import { ApplicationFailure, condition, patched, proxyActivities } from '@temporalio/workflow';
import type { EvaluationActivities } from '../activities/evaluation-activities';
import {
  DEFAULT_EVALUATION_CONCURRENCY,
  DEFAULT_JUDGE_ATTEMPTS,
  DEFAULT_RUNS_PER_JUDGE_ACTIVITY,
  EvaluationFailureTypes,
  EXACT_MATCH_JUDGE,
  judgeRanges,
  validateEvaluationInput,
  type EvaluationOutcome,
  type EvaluationWorkflowInput,
} from '../src/core/evaluation/evaluation-contract';
import { InputPatches } from './patches';
import { forEachAtMost } from '../src/core/task-slots';

/** Reading the rollout files and writing the report: file work, retried a few times. */
const files = proxyActivities<Pick<EvaluationActivities, 'prepareEvaluation' | 'writeEvaluation'>>({
  startToCloseTimeout: '30 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/**
 * An evaluation (issue 12; docs/architecture.md): an activity reads and dedupes the rollout files
 * and stores the runs' facts by hash (no transcripts in history); judge activities judge
 * `runsPerActivity` runs each, at most `concurrency` at a time, with retries; verdicts are kept in
 * the verdict store, so a retried activity or a second evaluation of the same runs makes no judge
 * call for what was judged; the last activity writes report.json, scored/ and summary.jsonl.
 * History: a few events per judge activity, whatever the transcripts' size.
 */
export async function evaluation(input: EvaluationWorkflowInput): Promise<EvaluationOutcome> {
  const problems = validateEvaluationInput(input);
  // Asked only when the input has problems, so valid evaluations' histories carry no marker.
  if (problems.length && patched(InputPatches.contractSchema)) {
    throw ApplicationFailure.create({
      type: EvaluationFailureTypes.invalidInput,
      message: `Invalid evaluation input: ${problems.join('; ')}.`,
      nonRetryable: true,
    });
  }
  const judging = proxyActivities<Pick<EvaluationActivities, 'judgeRuns'>>({
    startToCloseTimeout: '30 minutes',
    heartbeatTimeout: '2 minutes',
    retry: {
      initialInterval: '1 second',
      maximumInterval: '30 seconds',
      maximumAttempts: input.judgeAttempts ?? DEFAULT_JUDGE_ATTEMPTS,
    },
  });
  const prepared = await files.prepareEvaluation({
    paths: input.paths,
    judge: input.judge,
    output: input.output,
    ...(input.batchId ? { batchId: input.batchId } : {}),
  });
  const judgeCalls = { made: 0, stored: 0 };
  if (!prepared.refused && input.judge !== EXACT_MATCH_JUDGE) {
    const size = input.runsPerActivity ?? DEFAULT_RUNS_PER_JUDGE_ACTIVITY;
    const concurrency = input.concurrency ?? DEFAULT_EVALUATION_CONCURRENCY;
    // Through condition, as the hand-kept counter it replaced waited: the judges start where they always did.
    await forEachAtMost(
      judgeRanges(prepared.runs, size),
      concurrency,
      (range) =>
        judging.judgeRuns({ input: prepared.input, ...range }).then((judged) => {
          judgeCalls.made += judged.made;
          judgeCalls.stored += judged.stored;
        }),
      { waitUntil: condition },
    );
  }
  const written = await files.writeEvaluation({
    input: prepared.input,
    output: input.output,
    createdAt: new Date().toISOString(),
    judgeCalls,
    ...(prepared.refused ? { refused: prepared.refused } : {}),
    ...(input.webUiBase ? { webUiBase: input.webUiBase } : {}),
  });
  return {
    ...written,
    output: input.output,
    judge: prepared.judge,
    judgeCalls,
    ...(prepared.refused ? { refused: prepared.refused } : {}),
  };
}
