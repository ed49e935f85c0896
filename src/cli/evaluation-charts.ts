import type { Distribution } from '../core/evaluation/evaluation-report';
import type { VegaLiteSpec } from './vega-lite-svg';

/**
 * The Vega-Lite specifications of report.html's and the comparison page's charts. Data is inline
 * (`data.values`), sizes are fixed, and nothing is interactive: the charts are rendered to static
 * SVG in Node by {@link renderVegaLiteSvg}.
 */

const FONT = 'system-ui, -apple-system, Segoe UI, Roboto, Helvetica, Arial, sans-serif';

const CONFIG = {
  font: FONT,
  view: { stroke: null },
  axis: { labelFontSize: 11, titleFontSize: 12, gridColor: '#eceff4' },
  legend: { labelFontSize: 11, titleFontSize: 12, orient: 'top' },
} as const;

/** The two groups histograms and tool usage compare: every run, and runs that solved their question. */
export const ALL_RUNS = 'all runs';
/** See {@link ALL_RUNS}. */
export const SOLVED_RUNS = 'solved';

const GROUP_COLOURS = { domain: [ALL_RUNS, SOLVED_RUNS], range: ['#4c78a8', '#54a24b'] };

/** Bars of each rollout's pass@1, with a dashed rule at the mean pass@1 over the rollouts. */
export function rolloutAccuracySpec(rollouts: Array<{ rollout: number; passAt1: number }>, meanPassAt1: number): VegaLiteSpec {
  return {
    width: Math.max(160, 60 * rollouts.length),
    height: 200,
    config: CONFIG,
    layer: [
      {
        data: { values: rollouts.map((row) => ({ rollout: `rollout ${row.rollout}`, passAt1: row.passAt1 })) },
        mark: { type: 'bar', color: '#4c78a8' },
        encoding: {
          x: { field: 'rollout', type: 'nominal', title: null, sort: null, axis: { labelAngle: 0 } },
          y: { field: 'passAt1', type: 'quantitative', title: 'pass@1', scale: { domain: [0, 1] }, axis: { format: '.0%' } },
        },
      },
      {
        data: { values: [{ mean: meanPassAt1 }] },
        mark: { type: 'rule', color: '#e45756', strokeDash: [6, 4], strokeWidth: 2 },
        encoding: { y: { field: 'mean', type: 'quantitative' } },
      },
    ],
  };
}

/** The unbiased pass@k estimate for each k, as a line with points. */
export function unbiasedPassAtKSpec(points: Array<{ k: number; value: number }>): VegaLiteSpec {
  return {
    width: Math.max(200, 60 * points.length),
    height: 200,
    config: CONFIG,
    data: { values: points },
    layer: [
      { mark: { type: 'line', color: '#4c78a8' } },
      { mark: { type: 'point', filled: true, size: 60, color: '#4c78a8' } },
      { mark: { type: 'text', dy: -10, fontSize: 11 }, encoding: { text: { field: 'value', type: 'quantitative', format: '.1%' } } },
    ],
    encoding: {
      x: { field: 'k', type: 'ordinal', title: 'k', axis: { labelAngle: 0 } },
      y: { field: 'value', type: 'quantitative', title: 'unbiased pass@k', scale: { domain: [0, 1] }, axis: { format: '.0%' } },
    },
  };
}

/** Horizontal bars of run counts by termination, each labelled with its count. */
export function terminationsSpec(terminations: Array<{ termination: string; runs: number }>): VegaLiteSpec {
  return {
    width: 420,
    height: { step: 24 },
    config: CONFIG,
    data: { values: terminations },
    encoding: {
      y: { field: 'termination', type: 'nominal', title: null, sort: '-x' },
      x: { field: 'runs', type: 'quantitative', title: 'runs', axis: { tickMinStep: 1 } },
    },
    layer: [
      { mark: { type: 'bar', color: '#f58518' } },
      { mark: { type: 'text', align: 'left', dx: 3, fontSize: 11 }, encoding: { text: { field: 'runs', type: 'quantitative' } } },
    ],
  };
}

/**
 * A histogram of one quantity over runs: every run's value, and the solved runs' values over it
 * (not stacked), in bins Vega-Lite chooses (`maxbins` 20; whole steps when `wholeNumbers`).
 */
export function histogramSpec(
  title: string,
  all: Distribution,
  solved: Distribution,
  options: { scale?: number; wholeNumbers?: boolean } = {},
): VegaLiteSpec {
  const scale = options.scale ?? 1;
  const values = [
    ...all.values.map((value) => ({ value: value / scale, group: ALL_RUNS })),
    ...solved.values.map((value) => ({ value: value / scale, group: SOLVED_RUNS })),
  ];
  return {
    width: 300,
    height: 170,
    config: CONFIG,
    data: { values },
    mark: { type: 'bar', opacity: 0.8, binSpacing: 1 },
    encoding: {
      x: {
        field: 'value',
        type: 'quantitative',
        bin: options.wholeNumbers ? { maxbins: 20, minstep: 1 } : { maxbins: 20 },
        title,
      },
      y: { aggregate: 'count', type: 'quantitative', title: 'runs', stack: null, axis: { tickMinStep: 1 } },
      color: { field: 'group', type: 'nominal', title: null, scale: GROUP_COLOURS },
      order: { field: 'group', sort: 'ascending' },
    },
  };
}

/** Grouped horizontal bars: mean tool calls per question by tool, over all runs and over solved ones. */
export function toolUsageSpec(rows: Array<{ tool: string; group: string; callsPerQuestion: number }>): VegaLiteSpec {
  return {
    width: 420,
    height: { step: 14 },
    config: CONFIG,
    data: { values: rows },
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'tool', type: 'nominal', title: null },
      yOffset: { field: 'group', type: 'nominal', scale: { domain: GROUP_COLOURS.domain } },
      x: { field: 'callsPerQuestion', type: 'quantitative', title: 'tool calls per question (mean over runs)' },
      color: { field: 'group', type: 'nominal', title: null, scale: GROUP_COLOURS },
    },
  };
}

/** Grouped bars of the same named values in evaluation A and B (shares, 0..1, or frequencies). */
export function comparisonBarsSpec(
  rows: Array<{ name: string; evaluation: 'A' | 'B'; value: number }>,
  valueTitle: string,
): VegaLiteSpec {
  return {
    width: 460,
    height: { step: 16 },
    config: CONFIG,
    data: { values: rows },
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'name', type: 'nominal', title: null, sort: null },
      yOffset: { field: 'evaluation', type: 'nominal', scale: { domain: ['A', 'B'] } },
      x: { field: 'value', type: 'quantitative', title: valueTitle, scale: { domain: [0, 1] }, axis: { format: '.0%' } },
      color: {
        field: 'evaluation',
        type: 'nominal',
        title: null,
        scale: { domain: ['A', 'B'], range: ['#9ecae9', '#4c78a8'] },
        legend: { labelExpr: "datum.label == 'A' ? 'A (baseline)' : 'B (candidate)'" },
      },
    },
  };
}
