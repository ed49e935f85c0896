import { describe, expect, test } from '@jest/globals';
import type * as Linkedom from 'linkedom' with { 'resolution-mode': 'import' };
import { compareEvaluations } from '../../src/domain/evaluation/evaluation-comparison';
import type { EvaluationReport } from '../../src/core/evaluation/evaluation-report';
import type { EvaluationRun } from '../../src/core/evaluation/evaluation-runs';
import { headlineTable } from '../../src/cli/evaluation-text';
import { buildEvaluationReport, exactMatchVerdict, runKey } from '../../src/domain/evaluation/evaluation-scoring';
import { renderComparisonHtml, renderEvaluationReportHtml } from '../../src/reports/evaluation-html';
import { escapeHtml, formatPercent as formatPercentOf, webUiRunLink } from '../../src/reports/html-document';
import {
  FIXTURE_TERMINATIONS,
  FIXTURE_TOOLS,
  HOSTILE_PREDICTION,
  HOSTILE_TOOL,
  evaluationReportFixture,
} from '../fixtures/evaluation-report';

// linkedom ships CommonJS at run time but only ESM typings.
const { parseHTML } = require('linkedom') as typeof Linkedom;

/*
 * report.html and the comparison page without a browser: what the HTML says and that nothing
 * from the evaluation reaches it as markup. The browser test (test/integration/
 * evaluation-report-html.test.ts) checks the page as Chromium draws it.
 */

const WEB_UI = 'http://localhost:8233/namespaces/default';

function documentOf(html: string) {
  return parseHTML(html).document;
}

/** Marks (bars: paths in a rect-mark group) inside a chart figure. */
function barCount(document: ReturnType<typeof documentOf>, chart: string): number {
  return document.querySelectorAll(`figure[data-chart="${chart}"] g.mark-rect path`).length;
}

/** The fixture with B's changes: question 4 now right twice, question 2 wrong twice, more timeouts. */
function candidateReport(): EvaluationReport {
  const report = evaluationReportFixture();
  const byQuestion = (index: number) => report.questions[index]!;
  for (const verdict of byQuestion(3).rollouts.slice(0, 2))
    Object.assign(verdict, { isCorrect: true, prediction: 'Two: Phobos & Deimos' });
  for (const verdict of byQuestion(1).rollouts.slice(0, 2))
    Object.assign(verdict, { isCorrect: false, prediction: '<script>alert("b")</script>', termination: 'timeout' });
  report.createdAt = '2026-12-02T06:30:00.000Z';
  report.metrics.meanPassAt1 = 0.6;
  report.statistics.all.terminations = { answer: 10, timeout: 3, max_calls: 1, token_limit: 1 };
  report.questions.push({ question: 'Only in <B>?', reference: 'yes', rollouts: [] });
  return report;
}

describe('report.html (renderEvaluationReportHtml)', () => {
  let html: string;
  let document: ReturnType<typeof documentOf>;

  test('renders a whole, self-contained page', async () => {
    html = await renderEvaluationReportHtml(evaluationReportFixture());
    document = documentOf(html);
    expect(html.startsWith('<!doctype html>')).toBe(true);
    const policy = document.querySelector('meta[http-equiv="Content-Security-Policy"]')?.getAttribute('content');
    expect(policy).toContain("default-src 'none'");
    // nothing to fetch: no scripts, stylesheets, images, frames or fonts from anywhere
    expect(document.querySelectorAll('script, link, img, iframe, object, embed').length).toBe(0);
    expect(document.querySelectorAll('[src]').length).toBe(0);
    expect(html).not.toMatch(/url\(\s*['"]?https?:/i);
    expect(html).not.toMatch(/@import/i);
  });

  test('escapes every text from the evaluation: a <script> prediction and a markup tool name stay text', () => {
    expect(html.toLowerCase()).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).not.toContain('<b onmouseover');
    expect(document.querySelectorAll('[onerror], [onmouseover], [onclick], [onload]').length).toBe(0);
    const predictions = [...document.querySelectorAll('.prediction')].map((element) => element.textContent);
    expect(predictions).toContain(HOSTILE_PREDICTION);
    const tools = [...document.querySelectorAll('table.tools tr[data-tool]')].map((row) =>
      row.getAttribute('data-tool'),
    );
    expect(tools).toEqual(FIXTURE_TOOLS);
    expect(tools).toContain(HOSTILE_TOOL);
    // the skipped line's reason has markup-like text too
    expect(document.querySelector('table.skipped')?.textContent).toContain('error line: <upstream 502>');
  });

  test("says how it was scored, what the judge cost and the report's notes; lists duplicate lines", () => {
    const header = document.querySelector('header')?.textContent ?? '';
    expect(header).toContain('LLM judge gaia with model judge-model');
    expect(document.querySelector('.judge-calls')?.textContent).toBe(
      'Judge calls: 12 made, 3 verdicts already stored.',
    );
    expect(document.querySelector('ul.notes li')?.textContent).toBe(
      'The judge <gaia> was asked twice for one verdict & it did not parse.',
    );
    expect(document.querySelector('ul.notes gaia')).toBeNull();
    expect([...document.querySelectorAll('table.duplicates tbody tr')].map((row) => row.textContent)).toEqual(['21']);
  });

  test('names each metric as the report does, with its value', () => {
    const metric = (name: string) => document.querySelector(`tr[data-metric="${name}"] td.number`)?.textContent;
    expect(metric('mean pass@1')).toBe('53.3%');
    expect(metric('best pass@1')).toBe('60.0%');
    expect(document.querySelector('tr[data-metric="best pass@1"]')?.textContent).toContain('rollout 1');
    expect(metric('pass@3 (any of 3)')).toBe('80.0%');
    expect(metric('unbiased pass@1')).toBe('53.3%');
    expect(metric('unbiased pass@2')).toBe('73.3%');
    expect(metric('unbiased pass@3')).toBe('80.0%');
    expect(
      [...document.querySelectorAll('table.per-rollout tbody tr')].map((row) => row.getAttribute('data-rollout')),
    ).toEqual(['1', '2', '3']);
    // "pass@k" alone never names the mean
    expect(html).not.toMatch(/>pass@3<\/th>\s*<td class="number">53\.3%/);
  });

  test('draws every chart as inline SVG with marks, bars by the data', () => {
    for (const chart of [
      'rollout-accuracy',
      'unbiased-pass-at-k',
      'terminations',
      'model-calls',
      'tool-calls',
      'tokens',
      'durations',
      'answer-lengths',
      'tool-usage',
    ]) {
      const svg = document.querySelector(`figure[data-chart="${chart}"] svg`);
      expect(svg).not.toBeNull();
      expect(svg?.querySelectorAll('g.role-mark').length).toBeGreaterThan(0);
    }
    expect(barCount(document, 'rollout-accuracy')).toBe(3);
    expect(barCount(document, 'terminations')).toBe(Object.keys(FIXTURE_TERMINATIONS).length);
    expect(barCount(document, 'tool-usage')).toBe(FIXTURE_TOOLS.length * 2);
    expect(barCount(document, 'model-calls')).toBeGreaterThan(3);
    expect(document.querySelectorAll('figure[data-chart="unbiased-pass-at-k"] g.mark-symbol path').length).toBe(3);
    const labels = [...document.querySelectorAll('figure[data-chart="terminations"] text')].map(
      (text) => text.textContent,
    );
    for (const termination of Object.keys(FIXTURE_TERMINATIONS)) expect(labels).toContain(termination);
  });

  test('lists terminations with counts and shares, and the trajectory distributions', () => {
    const termination = (name: string) =>
      [...document.querySelectorAll(`tr[data-termination="${name}"] td`)].map((cell) => cell.textContent);
    expect(termination('answer')).toEqual(['answer', '12', '80.0%', '8']);
    expect(termination('timeout')).toEqual(['timeout', '1', '6.7%', '0']);
    const modelCalls = [...document.querySelectorAll('tr[data-quantity="model-calls"][data-group="all runs"] td')].map(
      (cell) => cell.textContent,
    );
    expect(modelCalls).toEqual(['all runs', '15', '17.9', '5', '1', '100']);
    const toolCalls = [...document.querySelectorAll('tr[data-quantity="tool-calls"][data-group="solved"] td')].map(
      (cell) => cell.textContent,
    );
    expect(toolCalls.slice(0, 2)).toEqual(['solved', '8']);
    const durations = [...document.querySelectorAll('tr[data-quantity="durations"][data-group="solved"] td')].map(
      (cell) => cell.textContent,
    );
    expect(durations[0]).toBe('solved');
    expect(durations[1]).toBe('8');
  });

  test('has one row per question with each rollout’s prediction, verdict and Web UI link', () => {
    const rows = [...document.querySelectorAll('table.questions tbody tr.question-row')];
    expect(rows).toHaveLength(5);
    const first = rows[0]!;
    expect(first.querySelector('.question')?.textContent).toBe(
      'Which company sold more cars in 2024, BYD or Tesla, and by how much?',
    );
    expect(first.querySelector('.reference')?.textContent).toBe('BYD, by about 2.5 million');
    const cells = [...first.querySelectorAll('td.rollout-cell')];
    expect(cells.map((cell) => cell.getAttribute('data-correct'))).toEqual(['true', 'false', 'true']);
    expect(cells[1]?.querySelector('.verdict')?.textContent).toBe('incorrect');
    expect(cells[1]?.textContent).toContain('max_calls');
    expect(cells[1]?.querySelector('.prediction')?.textContent).toBe('Tesla');
    expect(cells[1]?.querySelector('a.run-link')?.getAttribute('href')).toBe(
      `${WEB_UI}/workflows/${encodeURIComponent('nightly-2026-12-01/q0-r2')}`,
    );
    expect(document.querySelectorAll('a.run-link')).toHaveLength(15);
    // an empty prediction says so
    expect(rows[2]!.querySelectorAll('td.rollout-cell')[2]?.querySelector('.no-answer')?.textContent).toBe(
      '(no answer)',
    );
    expect(rows[0]!.querySelector('.no-answer')).toBeNull();
    // the unparsed verdict is marked, and listed
    expect(rows[2]!.querySelector('td.rollout-cell .verdict')?.textContent).toBe('incorrect (verdict unparsed)');
    expect(document.querySelector('table.unparsed')?.textContent).toContain('I think maybe?');
    expect(document.querySelector('table.questions')?.textContent).toContain(
      'Who wrote "The Left Hand of Darkness" & when?',
    );
  });

  test('links runs only when the Web UI base and the run id are known (and the base is http/https)', async () => {
    const withoutBase = documentOf(await renderEvaluationReportHtml(evaluationReportFixture({})));
    expect(withoutBase.querySelectorAll('a.run-link')).toHaveLength(0);
    expect(webUiRunLink('javascript:alert(1)//', 'run')).toBeUndefined();
    expect(webUiRunLink(WEB_UI, undefined)).toBeUndefined();
    expect(webUiRunLink(`${WEB_UI}/`, 'a b/c')).toBe(`${WEB_UI}/workflows/a%20b%2Fc`);
    const noIds = evaluationReportFixture();
    for (const row of noIds.questions) for (const verdict of row.rollouts) delete verdict.runId;
    expect(documentOf(await renderEvaluationReportHtml(noIds)).querySelectorAll('a.run-link')).toHaveLength(0);
  });

  test('an evaluation with no runs, no tools and one rollout still renders, saying so', async () => {
    const empty = evaluationReportFixture({});
    const none = { count: 0, mean: 0, median: 0, min: 0, max: 0, values: [] };
    const nothing = {
      terminations: {},
      toolCallsPerQuestion: {},
      modelCalls: none,
      tokens: none,
      durationsMs: none,
      answerLengths: none,
    };
    empty.method = 'exact_match';
    delete empty.judge;
    empty.metrics = {
      rollouts: 1,
      questions: 0,
      meanPassAt1: 0,
      bestPassAt1: { rollout: 1, passAt1: 0 },
      passAtAllRollouts: 0,
      unbiasedPassAtK: { '1': 0 },
      perRollout: [{ rollout: 1, questions: 0, correct: 0, passAt1: 0, exactMatch: 0, f1: 0 }],
    };
    empty.statistics = { all: nothing, solved: nothing };
    empty.questions = [];
    empty.skipped = [];
    empty.unparsedVerdicts = [];
    empty.duplicates = [{ rollout: 1, lines: 0 }];
    delete empty.judgeCalls;
    delete empty.notes;
    const page = documentOf(await renderEvaluationReportHtml(empty));
    expect(page.querySelector('tr[data-metric="pass@1 (any of 1)"] td.number')?.textContent).toBe('0.0%');
    expect(page.querySelector('figure[data-chart="tokens"]')?.textContent).toContain('No runs recorded this.');
    expect(page.querySelector('figure[data-chart="tool-usage"]')?.textContent).toContain('No tool was called.');
    expect(page.querySelector('header')?.textContent).toContain('exact match and token F1');
    expect(page.querySelector('#problems')).toBeNull();
    expect(page.querySelector('.judge-calls')).toBeNull();
    expect(page.querySelector('table.per-rollout thead')?.textContent).toContain('exact match');
  });

  test('renders what the scorer builds: exact match, rollouts with different questions, missing runs listed', async () => {
    const run = (
      rollout: number,
      question: string,
      prediction: string,
      extra: Partial<EvaluationRun> = {},
    ): EvaluationRun => ({
      rollout,
      question,
      reference: question === 'Capital of France?' ? 'Paris' : '4',
      prediction,
      termination: 'answer',
      isError: false,
      modelCalls: 3,
      toolCalls: { search: 1 },
      tokens: 900,
      durationMs: 4_000,
      file: `iter${rollout}.jsonl`,
      line: 1,
      ...extra,
    });
    const rollouts = [
      [
        run(1, 'Capital of France?', 'Paris'),
        run(1, '2 + 2?', '5', { termination: 'max_calls', toolCalls: { python: 2 } }),
      ],
      [run(2, 'Capital of France?', 'paris.', { runId: 'batch/q0-r2' })],
    ];
    const verdicts = new Map(rollouts.flat().map((entry) => [runKey(entry), exactMatchVerdict(entry)]));
    const report = buildEvaluationReport({
      rollouts,
      verdicts,
      method: 'exact_match',
      createdAt: '2026-12-01T00:00:00.000Z',
      source: { paths: ['iter1.jsonl', 'iter2.jsonl'] },
      webUiBase: WEB_UI,
    });
    const page = documentOf(await renderEvaluationReportHtml(report));
    expect(page.querySelector('tr[data-metric="mean pass@1"] td.number')?.textContent).toBe(
      formatPercentOf(report.metrics.meanPassAt1),
    );
    expect(page.querySelectorAll('tr.question-row')).toHaveLength(2);
    const secondQuestion = page.querySelectorAll('tr.question-row')[1]!;
    expect([...secondQuestion.querySelectorAll('td.rollout-cell .verdict')].map((badge) => badge.textContent)).toEqual([
      'incorrect',
      'not answered',
    ]);
    expect(page.querySelector('table.missing-runs')?.textContent).toContain('2 + 2?');
    expect(page.querySelectorAll('a.run-link')).toHaveLength(1);
    expect(barCount(page, 'terminations')).toBe(2);
  });

  test('prompt caching (issue 31): the hit rate and what it saved beside the cost, per rollout too; none without cache tokens', async () => {
    const run = (rollout: number, question: string, extra: Partial<EvaluationRun>): EvaluationRun => ({
      rollout,
      question,
      reference: 'Paris',
      prediction: 'Paris',
      termination: 'answer',
      isError: false,
      modelCalls: 3,
      toolCalls: {},
      file: `iter${rollout}.jsonl`,
      line: 1,
      ...extra,
    });
    const rollouts = [
      [run(1, 'Q1', { costUsd: 0.1, promptTokens: 1000, cachedPromptTokens: 900, cacheSavedUsd: 0.25 })],
      [run(2, 'Q1', { costUsd: 0.2, promptTokens: 1000, cachedPromptTokens: 100, cacheSavedUsd: -0.01 })],
    ];
    const verdicts = new Map(rollouts.flat().map((entry) => [runKey(entry), exactMatchVerdict(entry)]));
    const build = (runs: EvaluationRun[][]) =>
      buildEvaluationReport({
        rollouts: runs,
        verdicts,
        method: 'exact_match',
        createdAt: '2026-12-01T00:00:00.000Z',
        source: { paths: ['iter1.jsonl', 'iter2.jsonl'] },
      });
    const report = build(rollouts);
    expect(report.metrics.cache).toMatchObject({ runs: 2, cachedRuns: 2, promptTokens: 2000, hitRate: 0.5 });
    expect(report.metrics.cache?.savedUsd).toBeCloseTo(0.24, 12);
    expect(report.metrics.perRollout.map((rollout) => rollout.cache?.hitRate)).toEqual([0.9, 0.1]);
    const page = documentOf(await renderEvaluationReportHtml(report));
    expect(page.querySelector('tr[data-metric="prompt cache hit rate"] td.number')?.textContent).toBe('50.0%');
    expect(page.querySelector('tr[data-metric="saved by caching"] td.number')?.textContent).toBe('$0.2400');
    expect(page.querySelector('table.per-rollout thead')?.textContent).toContain('cache hit rate');
    expect([...page.querySelectorAll('table.per-rollout td.cache')].map((cell) => cell.textContent)).toEqual([
      '90.0%',
      '$0.2500',
      '10.0%',
      '-$0.01000',
    ]);
    expect(headlineTable(report)).toContain(
      'prompt cache: 50% of 2,000 prompt tokens read from the cache · saved $0.2400\n  rollout 1: 90% of 1,000 prompt tokens read from the cache · saved $0.2500\n  rollout 2: 10% of 1,000 prompt tokens read from the cache · cost $0.01000 more',
    );

    const uncached = build(
      rollouts.map((runs) => runs.map(({ cachedPromptTokens: _, cacheSavedUsd: __, ...rest }) => rest)),
    );
    expect(uncached.metrics.cache).toBeUndefined();
    const plain = documentOf(await renderEvaluationReportHtml(uncached));
    expect(plain.querySelector('tr[data-metric="prompt cache hit rate"]')).toBeNull();
    expect(plain.querySelector('table.per-rollout thead')?.textContent).not.toContain('cache');
    expect(headlineTable(uncached)).not.toContain('prompt cache');
  });

  test('escapeHtml escapes the five significant characters', () => {
    expect(escapeHtml(`<a href="x" title='y'>&</a>`)).toBe(
      '&lt;a href=&quot;x&quot; title=&#39;y&#39;&gt;&amp;&lt;/a&gt;',
    );
  });
});

describe('the eval compare page (renderComparisonHtml)', () => {
  test('shows metric deltas, flipped questions, termination shifts, escaped', async () => {
    const comparison = compareEvaluations(evaluationReportFixture(), candidateReport());
    const html = await renderComparisonHtml(comparison);
    const document = documentOf(html);
    expect(html.toLowerCase()).not.toContain('<script');
    expect(document.querySelectorAll('script, link, img, [src]').length).toBe(0);

    const metric = (name: string) =>
      [...document.querySelectorAll(`tr[data-metric="${name}"] td`)].map((cell) => cell.textContent);
    expect(metric('mean_pass_at_1')).toEqual(['mean_pass_at_1', '53.3%', '60.0%', '+6.7 pp']);
    expect(metric('questions')).toEqual(['questions', '5', '5', '±0']);
    expect(document.querySelector('tr[data-metric="mean_pass_at_1"] td.delta')?.getAttribute('class')).toContain(
      'positive',
    );

    const flipped = (name: string) =>
      [...document.querySelectorAll(`table[data-flip="${name}"] tr.flipped-row .question`)].map(
        (cell) => cell.textContent,
      );
    expect(flipped('right-to-wrong')).toEqual(['What is the capital of Australia?']);
    expect(flipped('wrong-to-right')).toEqual(['How many moons does Mars have?']);
    const regression = document.querySelector('table[data-flip="right-to-wrong"] tr.flipped-row');
    expect([...(regression?.querySelectorAll('.verdict') ?? [])].map((badge) => badge.textContent)).toEqual([
      '3/3 correct',
      '1/3 correct',
    ]);
    expect([...(regression?.querySelectorAll('.prediction') ?? [])].map((element) => element.textContent)).toContain(
      '<script>alert("b")</script>',
    );

    const shift = (name: string) =>
      [...document.querySelectorAll(`table.termination-shifts tr[data-termination="${name}"] td`)].map(
        (cell) => cell.textContent,
      );
    expect(shift('timeout')).toEqual(['timeout', '1 (6.7%)', '3 (20.0%)', '+2', '+13.3 pp']);
    expect(shift('answer')).toEqual(['answer', '12 (80.0%)', '10 (66.7%)', '−2', '−13.3 pp']);

    expect(document.querySelector('ul.only-in')?.textContent).toContain('Only in <B>?');
    for (const chart of ['metric-comparison', 'termination-shifts']) {
      expect(barCount(document, chart)).toBeGreaterThan(0);
    }
    expect(barCount(document, 'termination-shifts')).toBe(comparison.terminationShifts.length * 2);
  });
});
