import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import type { EvaluationReport, TrajectoryStatistics } from '../../src/core/evaluation/evaluation-report';
import { differences, evaluationFigures } from '../cluster/support/evaluation-figures';

/*
 * What the cluster tier's chaos test compares between the fault-free evaluation of a batch and
 * the one under faults (test/cluster/support/evaluation-figures.ts): everything the runs decide,
 * nothing that differs between two runs of one batch by nature.
 */

const distribution = (values: number[]) => ({ count: values.length, mean: 1, median: 1, min: 1, max: 1, values });

function statistics(durations: number[]): TrajectoryStatistics {
  return {
    runs: 2,
    terminations: { answer: 2 },
    toolCallsPerQuestion: { lookup: 2 },
    modelCalls: distribution([3, 3]),
    tokens: distribution([100, 120]),
    durationsMs: distribution(durations),
    answerLengths: distribution([5, 9]),
  };
}

function report(batch: string, durations: number[], judgeCalls: { made: number; stored: number }): EvaluationReport {
  return {
    createdAt: new Date().toISOString(),
    source: { paths: [`s3://b/batches/${batch}`], batchId: batch },
    method: 'judge',
    judge: { name: 'gaia', model: 'scripted-model', promptHash: 'sha256:1' },
    metrics: {
      rollouts: 1,
      questions: 2,
      meanPassAt1: 0.5,
      bestPassAt1: { rollout: 1, passAt1: 0.5 },
      passAtAllRollouts: 0.5,
      unbiasedPassAtK: { 1: 0.5 },
      perRollout: [{ rollout: 1, questions: 2, correct: 1, passAt1: 0.5 }],
    },
    statistics: { all: statistics(durations), solved: statistics(durations.slice(0, 1)) },
    questions: [
      {
        question: 'Q0?',
        reference: 'a',
        rollouts: [
          {
            rollout: 1,
            prediction: 'a',
            termination: 'answer',
            isCorrect: true,
            judgement: 'Correct',
            runId: `${batch}/q0-r1`,
          },
        ],
      },
      {
        question: 'Q1?',
        reference: 'b',
        rollouts: [
          {
            rollout: 1,
            prediction: 'c',
            termination: 'answer',
            isCorrect: false,
            judgement: 'Incorrect',
            runId: `${batch}/q1-r1`,
          },
        ],
      },
    ],
    skipped: [],
    unparsedVerdicts: [],
    judgeCalls,
  };
}

test('two evaluations of one batch that did the same: equal, whatever the time, batch id, run ids, durations and stored verdicts', () => {
  const faultFree = report('batch-1', [1_000, 2_000], { made: 2, stored: 0 });
  const underFaults = report('batch-2', [9_000, 30_000], { made: 1, stored: 1 });
  assert.deepEqual(differences(evaluationFigures(faultFree), evaluationFigures(underFaults)), []);
});

test('a different verdict, token count, termination or number of runs: named by its path', () => {
  const reference = report('batch-1', [1_000, 2_000], { made: 2, stored: 0 });
  const other = report('batch-2', [1_000], { made: 2, stored: 0 });
  (other.questions[1]?.rollouts[0] as { isCorrect: boolean }).isCorrect = true;
  other.statistics.all.tokens = distribution([100, 121]);
  other.statistics.all.terminations = { answer: 1, max_calls: 1 };
  other.judgeCalls = { made: 1, stored: 0 };
  assert.deepEqual(differences(evaluationFigures(reference), evaluationFigures(other)), [
    'verdicts: 2 ≠ 1',
    'statistics.all.terminations.answer: 2 ≠ 1',
    'statistics.all.terminations.max_calls: undefined ≠ 1',
    'statistics.all.tokens.values[1]: 120 ≠ 121',
    'statistics.all.durationsMs.count: 2 ≠ 1',
    'questions[1].rollouts[0].isCorrect: false ≠ true',
  ]);
});
