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
export function rolloutAccuracySpec(
  rollouts: Array<{ rollout: number; passAt1: number }>,
  meanPassAt1: number,
): VegaLiteSpec {
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
          y: {
            field: 'passAt1',
            type: 'quantitative',
            title: 'pass@1',
            scale: { domain: [0, 1] },
            axis: { format: '.0%' },
          },
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
      {
        mark: { type: 'text', dy: -10, fontSize: 11 },
        encoding: { text: { field: 'value', type: 'quantitative', format: '.1%' } },
      },
    ],
    encoding: {
      x: { field: 'k', type: 'ordinal', title: 'k', axis: { labelAngle: 0 } },
      y: {
        field: 'value',
        type: 'quantitative',
        title: 'unbiased pass@k',
        scale: { domain: [0, 1] },
        axis: { format: '.0%' },
      },
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
      {
        mark: { type: 'text', align: 'left', dx: 3, fontSize: 11 },
        encoding: { text: { field: 'runs', type: 'quantitative' } },
      },
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

/** One bar of a grouped bar chart: the row it stands in, its group within the row, its length. */
export interface GroupedBar {
  name: string;
  group: string;
  value: number;
}

/**
 * Horizontal bars, one row per name (in the order given) and one bar per group within it, coloured
 * by group; `share` draws values as percentages on a 0..100% axis.
 */
function groupedBarsSpec(
  rows: GroupedBar[],
  groups: { domain: string[]; range: string[]; legendLabelExpression?: string },
  options: { valueTitle: string; share: boolean; width: number; step: number },
): VegaLiteSpec {
  return {
    width: options.width,
    height: { step: options.step },
    config: CONFIG,
    data: { values: rows },
    mark: { type: 'bar' },
    encoding: {
      y: { field: 'name', type: 'nominal', title: null, sort: null },
      yOffset: { field: 'group', type: 'nominal', scale: { domain: groups.domain } },
      x: {
        field: 'value',
        type: 'quantitative',
        title: options.valueTitle,
        ...(options.share ? { scale: { domain: [0, 1] }, axis: { format: '.0%' } } : {}),
      },
      color: {
        field: 'group',
        type: 'nominal',
        title: null,
        scale: { domain: groups.domain, range: groups.range },
        ...(groups.legendLabelExpression ? { legend: { labelExpr: groups.legendLabelExpression } } : {}),
      },
    },
  };
}

/** Grouped bars: mean tool calls per question by tool (`name`), over all runs and over solved ones (`group`). */
export function toolUsageSpec(rows: GroupedBar[]): VegaLiteSpec {
  return groupedBarsSpec(rows, GROUP_COLOURS, {
    valueTitle: 'tool calls per question (mean over runs)',
    share: false,
    width: 420,
    step: 14,
  });
}

/** Grouped bars of the same named shares (0..1) in evaluation A and B (`group` 'A' or 'B'). */
export function comparisonBarsSpec(rows: GroupedBar[], valueTitle: string): VegaLiteSpec {
  return groupedBarsSpec(
    rows,
    {
      domain: ['A', 'B'],
      range: ['#9ecae9', '#4c78a8'],
      legendLabelExpression: "datum.label == 'A' ? 'A (baseline)' : 'B (candidate)'",
    },
    { valueTitle, share: true, width: 460, step: 16 },
  );
}
