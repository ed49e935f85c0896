import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type * as Linkedom from 'linkedom' with { 'resolution-mode': 'import' };
import { formatUsd } from '../../src/core/cost-figures';
import { compareEvaluations } from '../../src/domain/evaluation/evaluation-comparison';
import { renderComparisonHtml, renderEvaluationReportHtml } from '../../src/reports/evaluation-html';
import {
  FIXTURE_TERMINATIONS,
  FIXTURE_TOOLS,
  HOSTILE_PREDICTION,
  evaluationReportFixture,
} from '../fixtures/evaluation-report';
import {
  countPixelsNear,
  decodePng,
  dumpPageDom,
  nonWhiteShare,
  pngSize,
  requireChromium,
  screenshotPage,
} from './support/headless-chromium';

// linkedom ships CommonJS at run time but only ESM typings.
const { parseHTML } = require('linkedom') as typeof Linkedom;

/*
 * report.html as a browser draws it: the fixture evaluation (3 rollouts, 5 questions, four
 * terminations, four tools, a <script> prediction) rendered, written to a temporary folder and
 * opened from file:// in headless Chromium, which takes a screenshot and dumps the DOM. The page
 * must show its charts (SVG marks: bars by the data) and its table, and the screenshot must be a
 * real picture of it (its size, and the charts' colours in its pixels). Chromium must be
 * installed: without it the test fails saying how to install it.
 */

const WIDTH = 1280;
const HEIGHT = 2400;
/** Bar colours of the charts (drawn opaque): terminations, and the rollout-accuracy bars. */
const TERMINATION_ORANGE = '#f58518';
const ROLLOUT_BLUE = '#4c78a8';

let folder: string;
let reportPath: string;

beforeAll(async () => {
  folder = mkdtempSync(join(tmpdir(), 'evaluation-report-html-'));
  reportPath = join(folder, 'report.html');
  writeFileSync(reportPath, await renderEvaluationReportHtml(evaluationReportFixture()));
});

afterAll(() => {
  if (folder) rmSync(folder, { recursive: true, force: true });
});

describe('report.html in headless Chromium', () => {
  test('Chromium is installed', () => {
    expect(existsSync(requireChromium())).toBe(true);
  });

  test('the screenshot is the page drawn: right size, not blank, the charts in colour', async () => {
    const png = join(folder, 'report.png');
    await screenshotPage(pathToFileURL(reportPath).href, png, { width: WIDTH, height: HEIGHT });
    expect(existsSync(png)).toBe(true);
    const bytes = readFileSync(png);
    expect(pngSize(bytes)).toEqual({ width: WIDTH, height: HEIGHT });
    // a blank 1280x2400 page compresses to a few KB; text, tables and charts do not
    expect(statSync(png).size).toBeGreaterThan(40_000);
    const image = decodePng(bytes);
    expect(nonWhiteShare(image)).toBeGreaterThan(0.03);
    // the termination bars (12, 1, 1, 1 runs) and the three rollout bars are painted
    expect(countPixelsNear(image, TERMINATION_ORANGE)).toBeGreaterThan(1_000);
    expect(countPixelsNear(image, ROLLOUT_BLUE)).toBeGreaterThan(5_000);
    if (process.env.REPORT_SCREENSHOT) writeFileSync(process.env.REPORT_SCREENSHOT, bytes);
  });

  test('the rendered DOM has the charts with their marks and the per-question table', async () => {
    const dom = await dumpPageDom(pathToFileURL(reportPath).href, { width: WIDTH, height: HEIGHT });
    const { document } = parseHTML(dom);
    const charts = [...document.querySelectorAll('figure.chart[data-chart]')].map((figure) =>
      figure.getAttribute('data-chart'),
    );
    expect(charts).toEqual([
      'rollout-accuracy',
      'unbiased-pass-at-k',
      'terminations',
      'model-calls',
      'tool-calls',
      'tokens',
      'durations',
      'answer-lengths',
      'tool-usage',
    ]);
    for (const chart of charts) {
      expect(document.querySelectorAll(`figure[data-chart="${chart}"] svg g.role-mark`).length).toBeGreaterThan(0);
    }
    const bars = (chart: string) => document.querySelectorAll(`figure[data-chart="${chart}"] g.mark-rect path`).length;
    expect(bars('terminations')).toBe(Object.keys(FIXTURE_TERMINATIONS).length);
    expect(bars('rollout-accuracy')).toBe(3);
    expect(bars('tool-usage')).toBe(FIXTURE_TOOLS.length * 2);
    for (const histogram of ['model-calls', 'tool-calls', 'tokens', 'durations', 'answer-lengths'])
      expect(bars(histogram)).toBeGreaterThan(3);

    const rows = document.querySelectorAll('table.questions tbody tr.question-row');
    expect(rows).toHaveLength(5);
    for (const row of rows) expect(row.querySelectorAll('td.rollout-cell')).toHaveLength(3);
    expect(document.querySelectorAll('a.run-link')).toHaveLength(15);
    // the <script> prediction is text in the page, and no script ran or exists
    expect(document.querySelectorAll('script, img')).toHaveLength(0);
    expect([...document.querySelectorAll('.prediction')].map((element) => element.textContent)).toContain(
      HOSTILE_PREDICTION,
    );
    expect(document.querySelector('title')?.textContent).toContain('Evaluation report');
    // Cost per rollout and per correct answer (issue 19): three figures a rollout, and the headline's.
    const fixture = evaluationReportFixture();
    expect(
      [...document.querySelectorAll('table.per-rollout tr[data-rollout="1"] td.cost')].map((cell) => cell.textContent),
    ).toEqual([
      formatUsd(fixture.metrics.perRollout[0]?.cost?.totalUsd),
      formatUsd(fixture.metrics.perRollout[0]?.cost?.perRolloutUsd),
      formatUsd(fixture.metrics.perRollout[0]?.cost?.perCorrectAnswerUsd),
    ]);
    expect(document.querySelector('tr[data-metric="cost per correct answer"] td.number')?.textContent).toBe(
      formatUsd(fixture.metrics.cost?.perCorrectAnswerUsd),
    );
    expect(fixture.metrics.cost?.perCorrectAnswerUsd).toBeGreaterThan(0);
  });

  test('the eval compare page renders too, with its charts and flipped questions', async () => {
    const candidate = evaluationReportFixture();
    for (const verdict of candidate.questions[3]!.rollouts.slice(0, 2)) verdict.isCorrect = true;
    const comparisonPath = join(folder, 'comparison.html');
    writeFileSync(comparisonPath, await renderComparisonHtml(compareEvaluations(evaluationReportFixture(), candidate)));
    const { document } = parseHTML(await dumpPageDom(pathToFileURL(comparisonPath).href));
    expect(document.querySelectorAll('figure[data-chart="metric-comparison"] g.mark-rect path').length).toBeGreaterThan(
      0,
    );
    expect(
      document.querySelectorAll('figure[data-chart="termination-shifts"] g.mark-rect path').length,
    ).toBeGreaterThan(0);
    expect(document.querySelectorAll('table[data-flip="wrong-to-right"] tr.flipped-row')).toHaveLength(1);
  });
});
