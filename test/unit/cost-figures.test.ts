import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import type * as Linkedom from 'linkedom' with { 'resolution-mode': 'import' };
import { describeBatchSummary, renderBatchProgress } from '../../src/cli/batch-follow';
import { headlineTable } from '../../src/cli/evaluation-text';
import type { BatchSummary } from '../../src/core/batch-contract';
import {
  batchCost,
  batchProgress,
  emptyBatchCounts,
  recordFinished,
  recordStarted,
  summaryPerRollout,
} from '../../src/core/batch-progress';
import { costFigures, costFiguresOfTotal, describeCost, formatUsd } from '../../src/core/cost-figures';
import { headlineOf } from '../../src/core/evaluation/evaluation-contract';
import type { EvaluationRun } from '../../src/core/evaluation/evaluation-runs';
import {
  buildEvaluationReport,
  exactMatchVerdict,
  runKey,
  type RunVerdict,
} from '../../src/domain/evaluation/evaluation-scoring';
import { runOfLine } from '../../src/storage/evaluation-input';
import { renderEvaluationReportHtml } from '../../src/reports/evaluation-html';

// linkedom ships CommonJS at run time but only ESM typings.
const { parseHTML } = require('linkedom') as typeof Linkedom;

/* Issue 19: cost per rollout (one run of one question) and per correct answer, in the batch summary and the evaluation report. */

const close = (actual: number | undefined, expected: number, what = '') =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-12, `${what} ${actual} ≠ ${expected}`);

/** A one-rollout batch's summary with these figures. */
function batchSummary(
  figures: Pick<BatchSummary, 'questions' | 'lines' | 'perRollout'> & Partial<BatchSummary>,
): BatchSummary {
  return {
    batchId: 'b',
    output: '/out',
    input: 'sha256:x',
    rollouts: 1,
    cancelled: false,
    startedAt: '',
    endedAt: '',
    durationMs: 1000,
    continuedAsNew: 0,
    ...figures,
  } as BatchSummary;
}

describe('the arithmetic', () => {
  test('total, per rollout over every run, per correct answer over the correct ones', () => {
    const figures = costFigures([0.5, 0.25, 0.25, 1], 2);
    assert.deepEqual(figures, {
      totalUsd: 2,
      runs: 4,
      pricedRuns: 4,
      perRolloutUsd: 0.5,
      correct: 2,
      perCorrectAnswerUsd: 1,
    });
  });

  test('a run without a price adds nothing but still counts as a rollout; no priced run, no figures', () => {
    assert.deepEqual(costFigures([0.25, undefined, 0.5]), {
      totalUsd: 0.75,
      runs: 3,
      pricedRuns: 2,
      perRolloutUsd: 0.25,
    });
    assert.equal(costFigures([undefined, undefined], 1), undefined, 'absent, not zero');
    assert.equal(costFigures([]), undefined);
  });

  test('no correct answer: no cost per correct answer (not infinity, not 0); unknown correctness: none either', () => {
    const none = costFigures([0.1, 0.1], 0);
    assert.equal(none?.correct, 0);
    assert.equal(none && 'perCorrectAnswerUsd' in none, false);
    assert.equal(costFigures([0.1])?.correct, undefined);
  });

  test('a free model (price 0) costs $0, which is a figure', () => {
    assert.deepEqual(costFigures([0, 0], 1), {
      totalUsd: 0,
      runs: 2,
      pricedRuns: 2,
      perRolloutUsd: 0,
      correct: 1,
      perCorrectAnswerUsd: 0,
    });
  });

  test('from a batch’s summed cost and count', () => {
    assert.deepEqual(costFiguresOfTotal(0.9, 3), { totalUsd: 0.9, runs: 3, pricedRuns: 3, perRolloutUsd: 0.3 });
    assert.equal(costFiguresOfTotal(undefined, 3), undefined);
    assert.equal(costFiguresOfTotal(0.9, 0), undefined, 'no run returned');
  });
});

describe('the formatting', () => {
  test('dollars: — without a price, $0 for nothing, two decimals from $1, four significant digits below', () => {
    assert.equal(formatUsd(undefined), '—');
    assert.equal(formatUsd(Number.NaN), '—');
    assert.equal(formatUsd(0), '$0');
    assert.equal(formatUsd(12.345), '$12.35');
    assert.equal(formatUsd(1), '$1.00');
    assert.equal(formatUsd(0.12), '$0.1200');
    assert.equal(formatUsd(0.03), '$0.03000');
    assert.equal(formatUsd(0.0000042), '$0.000004200');
  });

  test('one line', () => {
    assert.equal(describeCost(undefined), '—');
    assert.equal(
      describeCost(costFigures([0.06, 0.06], 1)),
      '$0.1200 in all · $0.06000 per rollout · $0.1200 per correct answer',
    );
    assert.equal(
      describeCost(costFigures([0.06, 0.06], 0)),
      '$0.1200 in all · $0.06000 per rollout · — per correct answer',
    );
    assert.equal(
      describeCost(costFigures([0.06, 0.06])),
      '$0.1200 in all · $0.06000 per rollout',
      'no evaluation: correctness unknown',
    );
    assert.equal(
      describeCost(costFigures([0.06, undefined])),
      '$0.06000 in all · $0.03000 per rollout · 1 of 2 runs without a price',
    );
  });
});

describe('the batch summary', () => {
  const usage = (costUsd?: number) => ({
    promptTokens: 10,
    completionTokens: 1,
    totalTokens: 11,
    ...(costUsd !== undefined ? { costUsd } : {}),
  });

  test('per rollout from its runs’ summed cost; the batch’s over every rollout; progress shows the cost so far', () => {
    const counts = emptyBatchCounts(2);
    for (const [rollout, cost] of [
      [1, 0.1],
      [1, 0.3],
      [2, 0.2],
      [2, 0.2],
    ] as const) {
      recordStarted(counts, rollout);
      recordFinished(counts, rollout, { termination: 'answer', usage: usage(cost), durationMs: 1000 });
    }
    recordStarted(counts, 2);
    recordFinished(counts, 2, { failed: true });
    const perRollout = summaryPerRollout(counts, 3);
    close(perRollout[0]?.cost?.totalUsd, 0.4);
    close(perRollout[0]?.cost?.perRolloutUsd, 0.2);
    assert.equal(perRollout[1]?.cost?.runs, 2, 'a failed run returned no result and no cost');
    close(perRollout[1]?.cost?.perRolloutUsd, 0.2);
    const total = batchCost(perRollout);
    close(total?.totalUsd, 0.8);
    close(total?.perRolloutUsd, 0.2);
    const progress = batchProgress({
      batchId: 'b',
      state: 'running',
      output: '/out',
      questions: 3,
      concurrency: 2,
      counts,
      startedAt: 0,
      now: 60_000,
      continuedAsNew: 0,
    });
    close(progress.perRollout[0]?.costUsd, 0.4);
    assert.match(renderBatchProgress(progress, 60_000), / · \$0\.8000 so far/);
  });

  test('runs without a price: no cost anywhere, and the summary says —', () => {
    const counts = emptyBatchCounts(1);
    recordStarted(counts, 1);
    recordFinished(counts, 1, { termination: 'answer', usage: usage(), durationMs: 1000 });
    const perRollout = summaryPerRollout(counts, 1);
    assert.equal('cost' in (perRollout[0] ?? {}), false);
    assert.equal(batchCost(perRollout), undefined);
    const progress = batchProgress({
      batchId: 'b',
      state: 'running',
      output: '/out',
      questions: 1,
      concurrency: 1,
      counts,
      startedAt: 0,
      now: 60_000,
      continuedAsNew: 0,
    });
    assert.doesNotMatch(renderBatchProgress(progress, 60_000), /so far|\$/);
    const summary = batchSummary({ questions: 1, lines: 1, perRollout });
    assert.match(describeBatchSummary(summary), /\n {2}cost: —$/);
  });

  test('printed: each rollout’s cost, and per correct answer once the batch evaluated itself', () => {
    const counts = emptyBatchCounts(1);
    for (const cost of [0.1, 0.3]) {
      recordStarted(counts, 1);
      recordFinished(counts, 1, { termination: 'answer', usage: usage(cost), durationMs: 1000 });
    }
    const perRollout = summaryPerRollout(counts, 2);
    const summary = batchSummary({ questions: 2, lines: 2, perRollout, cost: batchCost(perRollout) });
    assert.match(
      describeBatchSummary(summary),
      /iter1\.jsonl: answer 2; cost \$0\.4000 in all · \$0\.2000 per rollout\n {2}cost: \$0\.4000 in all · \$0\.2000 per rollout$/,
    );
    const evaluated = {
      ...summary,
      evaluation: { evaluationId: 'b/evaluation', headline: { cost: costFigures([0.1, 0.3], 1) } },
    } as BatchSummary;
    assert.match(
      describeBatchSummary(evaluated),
      /\n {2}cost: \$0\.4000 in all · \$0\.2000 per rollout · \$0\.4000 per correct answer$/,
    );
  });
});

describe('the evaluation report', () => {
  function run(rollout: number, question: string, prediction: string, costUsd?: number): EvaluationRun {
    return {
      rollout,
      question,
      reference: question === 'q1' ? 'Paris' : '4',
      prediction,
      termination: 'answer',
      isError: false,
      modelCalls: 1,
      toolCalls: {},
      file: `iter${rollout}.jsonl`,
      line: 1,
      ...(costUsd !== undefined ? { costUsd } : {}),
    };
  }
  function report(rollouts: EvaluationRun[][]) {
    const verdicts = new Map<string, RunVerdict>();
    for (const runs of rollouts) for (const each of runs) verdicts.set(runKey(each), exactMatchVerdict(each));
    return buildEvaluationReport({
      rollouts,
      verdicts,
      method: 'exact_match',
      createdAt: '2026-12-01T00:00:00.000Z',
      source: { paths: ['/out'] },
    });
  }

  // Rollout 1: both right (0.1 + 0.3); rollout 2: both wrong (0.2 + 0.2). 0.8 USD over 4 runs and 2 correct answers.
  const priced = report([
    [run(1, 'q1', 'Paris', 0.1), run(1, 'q2', '4', 0.3)],
    [run(2, 'q1', 'Lyon', 0.2), run(2, 'q2', '5', 0.2)],
  ]);

  test('per rollout and over all: total, per rollout, per correct answer', () => {
    const [first, second] = priced.metrics.perRollout;
    close(first?.cost?.totalUsd, 0.4);
    close(first?.cost?.perRolloutUsd, 0.2);
    close(first?.cost?.perCorrectAnswerUsd, 0.2);
    close(second?.cost?.totalUsd, 0.4);
    assert.equal(second?.cost?.correct, 0);
    assert.equal(second?.cost?.perCorrectAnswerUsd, undefined, 'nothing correct: no figure');
    close(priced.metrics.cost?.totalUsd, 0.8);
    close(priced.metrics.cost?.perRolloutUsd, 0.2);
    close(priced.metrics.cost?.perCorrectAnswerUsd, 0.4);
    assert.deepEqual(headlineOf(priced).cost, priced.metrics.cost);
  });

  test('without prices the report has no cost (absent, not 0) and the page and table say —', async () => {
    const unpriced = report([[run(1, 'q1', 'Paris'), run(1, 'q2', '4')]]);
    assert.equal('cost' in unpriced.metrics, false);
    assert.equal('cost' in (unpriced.metrics.perRollout[0] ?? {}), false);
    assert.equal('cost' in headlineOf(unpriced), false);
    assert.match(headlineTable(unpriced), /\ncost: —/);
    const document = parseHTML(await renderEvaluationReportHtml(unpriced)).document;
    assert.equal(document.querySelector('tr[data-metric="cost per correct answer"] td.number')?.textContent, '—');
    assert.equal(document.querySelectorAll('table.per-rollout td.cost').length, 0);
  });

  test('report.html and the printed table show the figures', async () => {
    const document = parseHTML(await renderEvaluationReportHtml(priced)).document;
    const metric = (name: string) => document.querySelector(`tr[data-metric="${name}"] td.number`)?.textContent;
    assert.equal(metric('cost'), '$0.8000');
    assert.equal(metric('cost per rollout'), '$0.2000');
    assert.equal(metric('cost per correct answer'), '$0.4000');
    const cells = (rollout: number) =>
      [...document.querySelectorAll(`table.per-rollout tr[data-rollout="${rollout}"] td.cost`)].map(
        (cell) => cell.textContent,
      );
    assert.deepEqual(cells(1), ['$0.4000', '$0.2000', '$0.2000']);
    assert.deepEqual(cells(2), ['$0.4000', '$0.2000', '—']);
    const text = headlineTable(priced);
    assert.match(
      text,
      /\ncost: \$0\.8000 in all · \$0\.2000 per rollout · \$0\.4000 per correct answer\n {2}rollout 1: \$0\.4000 in all · \$0\.2000 per rollout · \$0\.2000 per correct answer\n {2}rollout 2: \$0\.4000 in all · \$0\.2000 per rollout · — per correct answer/,
    );
  });

  test("a line's usage.costUsd is the run's cost; a line without one has none", () => {
    const where = { file: 'iter1.jsonl', line: 1, rollout: 1 };
    const line = {
      question: 'q',
      answer: 'a',
      prediction: 'a',
      termination: 'answer',
      usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, costUsd: 0.25 },
    };
    assert.equal((runOfLine(line, where) as EvaluationRun).costUsd, 0.25);
    assert.equal('costUsd' in (runOfLine({ ...line, usage: { totalTokens: 2 } }, where) as EvaluationRun), false);
  });
});
