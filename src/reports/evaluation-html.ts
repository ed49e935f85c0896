import type { CacheFigures } from '../core/cache-figures';
import { formatUsd, type CostFigures } from '../core/cost-figures';
import type {
  EvaluationComparison,
  FlippedQuestion,
  QuestionOutcome,
} from '../domain/evaluation/evaluation-comparison';
import type {
  Distribution,
  EvaluationReport,
  QuestionRow,
  RolloutVerdict,
  TrajectoryStatistics,
} from '../core/evaluation/evaluation-report';
import {
  ALL_RUNS,
  SOLVED_RUNS,
  comparisonBarsSpec,
  histogramSpec,
  rolloutAccuracySpec,
  terminationsSpec,
  toolUsageSpec,
  unbiasedPassAtKSpec,
} from './evaluation-charts';
import {
  chartFigure,
  emptyChart,
  escapeHtml,
  formatNumber,
  formatPercent,
  formatPercentagePoints,
  formatSignedCount,
  htmlPage,
  webUiRunLink,
} from './html-document';
import { renderVegaLiteSvg, type VegaLiteSpec } from './vega-lite-svg';

/*
 * report.html and the `eval compare` page: one self-contained HTML file each, opening offline.
 * Charts are Vega-Lite rendered to inline SVG in Node; every text from the evaluation (questions,
 * references, predictions, judgements, tool and termination names, paths) is escaped.
 */

async function chart(name: string, caption: string, spec: VegaLiteSpec): Promise<string> {
  return chartFigure(name, caption, await renderVegaLiteSvg(spec));
}

function describeSource(source: EvaluationReport['source']): string {
  const batch = source.batchId ? ` · batch <code>${escapeHtml(source.batchId)}</code>` : '';
  const paths = source.paths.map((path) => `<code>${escapeHtml(path)}</code>`).join(', ');
  return `${paths || 'no files'}${batch}`;
}

function describeMethod(method: EvaluationReport['method'], judge: EvaluationReport['judge']): string {
  if (method === 'exact_match') return 'exact match and token F1 against the reference answer (no model)';
  if (!judge) return 'LLM judge';
  return `LLM judge <code>${escapeHtml(judge.name)}</code> with model <code>${escapeHtml(judge.model)}</code> (prompt <code>${escapeHtml(judge.promptHash.slice(0, 12))}</code>)`;
}

function runsIn(terminations: Record<string, number>): number {
  return Object.values(terminations).reduce((sum, count) => sum + count, 0);
}

/** Rollout numbers seen in the report, ascending. */
function rolloutNumbers(report: EvaluationReport): number[] {
  const numbers = new Set(report.metrics.perRollout.map((row) => row.rollout));
  for (const row of report.questions) for (const verdict of row.rollouts) numbers.add(verdict.rollout);
  return [...numbers].sort((x, y) => x - y);
}

function unbiasedPoints(report: EvaluationReport): Array<{ k: number; value: number }> {
  return Object.entries(report.metrics.unbiasedPassAtK)
    .map(([k, value]) => ({ k: Number(k), value }))
    .filter((point) => Number.isFinite(point.k))
    .sort((x, y) => x.k - y.k);
}

/** ", 2 of them without a price" when some runs had none. */
function pricedNote(cost: CostFigures): string {
  const unpriced = cost.runs - cost.pricedRuns;
  return unpriced > 0 ? `, ${unpriced} of them without a price` : '';
}

/** The headline rows of prompt caching (issue 31): the hit rate, and what it saved when the runs had a price; none when no run reported cache tokens. */
function cacheRows(cache: CacheFigures | undefined): string[][] {
  if (!cache) return [];
  const over =
    cache.cachedRuns < cache.runs ? ` (the ${cache.cachedRuns} of ${cache.runs} runs that reported a cache)` : '';
  return [
    [
      'prompt cache hit rate',
      `${cache.cachedPromptTokens.toLocaleString('en-US')} of ${cache.promptTokens.toLocaleString('en-US')} prompt tokens read from the cache${over}`,
      formatPercent(cache.hitRate),
    ],
    ...(cache.savedUsd !== undefined
      ? [
          [
            'saved by caching',
            'the cost with every prompt token at the input price and no cache write, less the cost charged (negative: writes cost more than reads saved)',
            formatUsd(cache.savedUsd),
          ],
        ]
      : []),
  ];
}

async function accuracySection(report: EvaluationReport): Promise<string> {
  const metrics = report.metrics;
  const k = metrics.rollouts;
  const points = unbiasedPoints(report);
  const headline = [
    [
      'mean pass@1',
      `mean over the ${k} rollout${k === 1 ? '' : 's'} of each rollout's pass@1`,
      formatPercent(metrics.meanPassAt1),
    ],
    ['best pass@1', `rollout ${metrics.bestPassAt1.rollout}`, formatPercent(metrics.bestPassAt1.passAt1)],
    [
      `pass@${k} (any of ${k})`,
      `share of questions answered correctly by at least one of the ${k} rollouts`,
      formatPercent(metrics.passAtAllRollouts),
    ],
    ...points.map((point) => [
      `unbiased pass@${point.k}`,
      'unbiased estimator (Chen et al. 2021)',
      formatPercent(point.value),
    ]),
    // What the runs cost, at the workers' prices (their lines' usage.costUsd): "—" when no run had a price, never $0.
    [
      'cost',
      metrics.cost
        ? `all ${metrics.cost.runs} runs${pricedNote(metrics.cost)}`
        : 'no run had a price (REACT_AGENT_MODEL_PRICES)',
      formatUsd(metrics.cost?.totalUsd),
    ],
    ['cost per rollout', 'what one run of one question cost on average', formatUsd(metrics.cost?.perRolloutUsd)],
    [
      'cost per correct answer',
      metrics.cost ? `all runs' cost over their ${metrics.cost.correct ?? 0} correct answers` : 'no run had a price',
      formatUsd(metrics.cost?.perCorrectAnswerUsd),
    ],
    ...cacheRows(metrics.cache),
  ];
  const headlineRows = headline
    .map(
      ([name, what, value]) =>
        `<tr data-metric="${escapeHtml(name)}"><th scope="row">${escapeHtml(name)}</th><td class="number">${escapeHtml(value)}</td><td class="small">${escapeHtml(what)}</td></tr>`,
    )
    .join('\n');
  const hasExactMatch = metrics.perRollout.some((row) => row.exactMatch !== undefined);
  const hasF1 = metrics.perRollout.some((row) => row.f1 !== undefined);
  const hasCost = metrics.perRollout.some((row) => row.cost !== undefined);
  const hasCache = metrics.perRollout.some((row) => row.cache !== undefined);
  const hasCacheSaving = metrics.perRollout.some((row) => row.cache?.savedUsd !== undefined);
  const perRolloutRows = metrics.perRollout
    .map(
      (row) =>
        `<tr data-rollout="${row.rollout}"><td class="number">${row.rollout}</td><td class="number">${row.questions}</td><td class="number">${row.correct}</td><td class="number">${formatPercent(row.passAt1)}</td>${
          hasExactMatch ? `<td class="number">${formatPercent(row.exactMatch)}</td>` : ''
        }${hasF1 ? `<td class="number">${formatPercent(row.f1)}</td>` : ''}${
          hasCost
            ? `<td class="number cost">${formatUsd(row.cost?.totalUsd)}</td><td class="number cost">${formatUsd(row.cost?.perRolloutUsd)}</td><td class="number cost">${formatUsd(row.cost?.perCorrectAnswerUsd)}</td>`
            : ''
        }${hasCache ? `<td class="number cache">${formatPercent(row.cache?.hitRate)}</td>` : ''}${
          hasCacheSaving ? `<td class="number cache">${formatUsd(row.cache?.savedUsd)}</td>` : ''
        }</tr>`,
    )
    .join('\n');
  const charts = [
    metrics.perRollout.length > 0
      ? await chart(
          'rollout-accuracy',
          'pass@1 by rollout (dashed: mean pass@1)',
          rolloutAccuracySpec(metrics.perRollout, metrics.meanPassAt1),
        )
      : emptyChart('rollout-accuracy', 'pass@1 by rollout', 'No rollout was scored.'),
    points.length > 0
      ? await chart('unbiased-pass-at-k', 'unbiased pass@k by k', unbiasedPassAtKSpec(points))
      : emptyChart('unbiased-pass-at-k', 'unbiased pass@k by k', 'No estimate (no rollouts).'),
  ];
  return `<section id="accuracy">
<h2>Accuracy</h2>
<p class="meta">${metrics.questions} unique question${metrics.questions === 1 ? '' : 's'} (the denominator of every share), ${k} rollout${k === 1 ? '' : 's'}.</p>
<table class="metrics">
<thead><tr><th>metric</th><th class="number">value</th><th>what it is</th></tr></thead>
<tbody>
${headlineRows}
</tbody>
</table>
<h3>Per rollout</h3>
<table class="per-rollout">
<thead><tr><th class="number">rollout</th><th class="number">questions</th><th class="number">correct</th><th class="number">pass@1</th>${
    hasExactMatch ? '<th class="number">exact match</th>' : ''
  }${hasF1 ? '<th class="number">F1</th>' : ''}${hasCost ? '<th class="number">cost</th><th class="number">per rollout</th><th class="number">per correct answer</th>' : ''}${
    hasCache ? '<th class="number">cache hit rate</th>' : ''
  }${hasCacheSaving ? '<th class="number">saved by caching</th>' : ''}</tr></thead>
<tbody>
${perRolloutRows}
</tbody>
</table>
<div class="charts">
${charts.join('\n')}
</div>
</section>`;
}

async function terminationsSection(all: TrajectoryStatistics, solved: TrajectoryStatistics): Promise<string> {
  const runs = all.runs ?? runsIn(all.terminations);
  const shareOf = (termination: string, count: number) =>
    all.terminationFrequencies?.[termination] ?? (runs === 0 ? undefined : count / runs);
  const entries = Object.entries(all.terminations).sort(([, x], [, y]) => y - x);
  const rows = entries
    .map(
      ([termination, count]) =>
        `<tr data-termination="${escapeHtml(termination)}"><td><code>${escapeHtml(termination)}</code></td><td class="number">${count}</td><td class="number">${formatPercent(shareOf(termination, count))}</td><td class="number">${solved.terminations[termination] ?? 0}</td></tr>`,
    )
    .join('\n');
  const figure =
    entries.length > 0
      ? await chart(
          'terminations',
          'runs by termination',
          terminationsSpec(entries.map(([termination, count]) => ({ termination, runs: count }))),
        )
      : emptyChart('terminations', 'runs by termination', 'No runs.');
  return `<section id="terminations">
<h2>Termination reasons</h2>
<div class="charts">
<table class="terminations">
<thead><tr><th>termination</th><th class="number">runs</th><th class="number">share of runs</th><th class="number">solved runs</th></tr></thead>
<tbody>
${rows}
</tbody>
<tfoot><tr><th>all</th><td class="number">${runs}</td><td class="number">${runs === 0 ? '–' : '100.0%'}</td><td class="number">${solved.runs ?? runsIn(solved.terminations)}</td></tr></tfoot>
</table>
${figure}
</div>
</section>`;
}

const DISTRIBUTIONS: Array<{
  key: 'modelCalls' | 'toolCalls' | 'tokens' | 'durationsMs' | 'answerLengths';
  name: string;
  title: string;
  scale?: number;
  wholeNumbers?: boolean;
  decimals: number;
}> = [
  { key: 'modelCalls', name: 'model-calls', title: 'model calls per run', wholeNumbers: true, decimals: 1 },
  { key: 'toolCalls', name: 'tool-calls', title: 'tool calls per run', wholeNumbers: true, decimals: 1 },
  { key: 'tokens', name: 'tokens', title: 'tokens per run', decimals: 0 },
  { key: 'durationsMs', name: 'durations', title: 'run duration (seconds)', scale: 1000, decimals: 1 },
  { key: 'answerLengths', name: 'answer-lengths', title: 'answer length (characters)', decimals: 0 },
];

const EMPTY_DISTRIBUTION: Distribution = { count: 0, mean: 0, median: 0, min: 0, max: 0, values: [] };

function distributionCells(distribution: Distribution, scale: number, decimals: number): string {
  if (distribution.count === 0)
    return '<td class="number">0</td><td class="number">–</td><td class="number">–</td><td class="number">–</td><td class="number">–</td>';
  return [
    distribution.count,
    distribution.mean / scale,
    distribution.median / scale,
    distribution.min / scale,
    distribution.max / scale,
  ]
    .map((value, index) => `<td class="number">${formatNumber(value, index === 0 ? 0 : decimals)}</td>`)
    .join('');
}

async function trajectoriesSection(all: TrajectoryStatistics, solved: TrajectoryStatistics): Promise<string> {
  const rows: string[] = [];
  const figures: string[] = [];
  for (const quantity of DISTRIBUTIONS) {
    const allValues = all[quantity.key];
    const solvedValues = solved[quantity.key] ?? EMPTY_DISTRIBUTION;
    // tool calls per run is optional in report.json (older reports lack it)
    if (allValues === undefined) continue;
    const scale = quantity.scale ?? 1;
    for (const [group, distribution] of [
      [ALL_RUNS, allValues],
      [SOLVED_RUNS, solvedValues],
    ] as const) {
      rows.push(
        `<tr data-quantity="${quantity.name}" data-group="${group}"><th scope="row">${escapeHtml(quantity.title)}</th><td>${group}</td>${distributionCells(
          distribution,
          scale,
          quantity.decimals,
        )}</tr>`,
      );
    }
    figures.push(
      allValues.values.length > 0
        ? await chart(
            quantity.name,
            `${quantity.title}: histogram`,
            histogramSpec(quantity.title, allValues, solvedValues, { scale, wholeNumbers: quantity.wholeNumbers }),
          )
        : emptyChart(quantity.name, `${quantity.title}: histogram`, 'No runs recorded this.'),
    );
  }
  return `<section id="trajectories">
<h2>Trajectories</h2>
<p class="meta">Over every run, and over the runs that solved their question.</p>
<div class="charts">
${figures.join('\n')}
</div>
<table class="distributions">
<thead><tr><th>quantity</th><th>runs</th><th class="number">count</th><th class="number">mean</th><th class="number">median</th><th class="number">min</th><th class="number">max</th></tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</section>`;
}

async function toolsSection(all: TrajectoryStatistics, solved: TrajectoryStatistics): Promise<string> {
  const tools = [
    ...new Set([...Object.keys(all.toolCallsPerQuestion), ...Object.keys(solved.toolCallsPerQuestion)]),
  ].sort();
  const rows = tools
    .map(
      (tool) =>
        `<tr data-tool="${escapeHtml(tool)}"><td><code>${escapeHtml(tool)}</code></td><td class="number">${formatNumber(
          all.toolCallsPerQuestion[tool] ?? 0,
          2,
        )}</td><td class="number">${formatNumber(solved.toolCallsPerQuestion[tool] ?? 0, 2)}</td></tr>`,
    )
    .join('\n');
  const chartRows = tools.flatMap((tool) => [
    { name: tool, group: ALL_RUNS, value: all.toolCallsPerQuestion[tool] ?? 0 },
    { name: tool, group: SOLVED_RUNS, value: solved.toolCallsPerQuestion[tool] ?? 0 },
  ]);
  const figure =
    tools.length > 0
      ? await chart('tool-usage', 'tool calls per question by tool', toolUsageSpec(chartRows))
      : emptyChart('tool-usage', 'tool calls per question by tool', 'No tool was called.');
  return `<section id="tools">
<h2>Tool usage</h2>
<div class="charts">
<table class="tools">
<thead><tr><th>tool</th><th class="number">calls per question (all runs)</th><th class="number">calls per question (solved)</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${figure}
</div>
</section>`;
}

/** A muted "(no answer)" after an empty prediction, so an empty cell is not mistaken for a rendering fault. */
function noAnswer(prediction: string): string {
  return prediction.trim() === '' ? '<span class="small no-answer">(no answer)</span>' : '';
}

function verdictCell(
  verdict: RolloutVerdict | undefined,
  method: EvaluationReport['method'],
  webUiBase: string | undefined,
): string {
  if (!verdict) return '<td class="rollout-cell"><span class="verdict missing">not answered</span></td>';
  const badge = verdict.isCorrect
    ? '<span class="verdict correct">correct</span>'
    : `<span class="verdict incorrect">${verdict.unparsed ? 'incorrect (verdict unparsed)' : 'incorrect'}</span>`;
  const scores = [
    verdict.exactMatch !== undefined ? `EM ${formatNumber(verdict.exactMatch, 2)}` : undefined,
    verdict.f1 !== undefined ? `F1 ${formatNumber(verdict.f1, 2)}` : undefined,
  ].filter((part): part is string => part !== undefined);
  const judgement =
    method === 'judge' && verdict.judgement && verdict.judgement !== 'exact_match'
      ? `<details class="judgement"><summary class="small">judge's verdict</summary><div class="text small">${escapeHtml(verdict.judgement)}</div></details>`
      : '';
  const link = webUiRunLink(webUiBase, verdict.runId);
  const runLink = link
    ? ` · <a class="run-link" href="${escapeHtml(link)}" title="this run in the Temporal Web UI">Web UI ↗</a>`
    : '';
  return `<td class="rollout-cell" data-rollout="${verdict.rollout}" data-correct="${verdict.isCorrect}">${badge} <span class="small"><code>${escapeHtml(
    verdict.termination,
  )}</code>${scores.length > 0 ? ` · ${scores.join(' · ')}` : ''}${runLink}</span>
<div class="text prediction">${escapeHtml(verdict.prediction)}</div>${noAnswer(verdict.prediction)}${judgement}</td>`;
}

function questionsSection(report: EvaluationReport): string {
  const rollouts = rolloutNumbers(report);
  const rows = report.questions.map((row: QuestionRow, index) => {
    const cells = rollouts.map((rollout) =>
      verdictCell(
        row.rollouts.find((verdict) => verdict.rollout === rollout),
        report.method,
        report.webUiBase,
      ),
    );
    const correct = row.rollouts.filter((verdict) => verdict.isCorrect).length;
    return `<tr class="question-row" data-question="${index + 1}"><td class="number">${index + 1}</td><td><div class="text question">${escapeHtml(
      row.question,
    )}</div></td><td><div class="text reference">${escapeHtml(row.reference)}</div></td><td class="number">${correct}/${row.rollouts.length}</td>${cells.join('')}</tr>`;
  });
  const rolloutHeads = rollouts.map((rollout) => `<th>rollout ${rollout}</th>`).join('');
  const columns = `<colgroup><col style="width:3em"><col><col style="width:12%"><col style="width:5em">${rollouts.map(() => '<col>').join('')}</colgroup>`;
  return `<section id="questions">
<h2>Questions</h2>
<table class="questions">
${columns}
<thead><tr><th class="number">#</th><th>question</th><th>reference</th><th class="number">correct</th>${rolloutHeads}</tr></thead>
<tbody>
${rows.join('\n')}
</tbody>
</table>
</section>`;
}

function problemsSection(report: EvaluationReport): string {
  const duplicates = (report.duplicates ?? []).filter((entry) => entry.lines > 0);
  const missingRuns = report.missingRuns ?? [];
  if (
    report.skipped.length === 0 &&
    report.unparsedVerdicts.length === 0 &&
    duplicates.length === 0 &&
    missingRuns.length === 0
  )
    return '';
  const duplicateList =
    duplicates.length === 0
      ? ''
      : `<h3>Duplicate lines dropped (${duplicates.reduce((sum, entry) => sum + entry.lines, 0)})</h3>
<p class="note">A question answered twice in one rollout file (after a resume) counts once: the later line that is not an error.</p>
<table class="duplicates"><thead><tr><th class="number">rollout</th><th class="number">lines dropped</th></tr></thead><tbody>
${duplicates.map((entry) => `<tr><td class="number">${entry.rollout}</td><td class="number">${entry.lines}</td></tr>`).join('\n')}
</tbody></table>`;
  const missingList =
    missingRuns.length === 0
      ? ''
      : `<h3>Questions missing from a rollout (${missingRuns.length}), counted as not correct there</h3>
<table class="missing-runs"><thead><tr><th>question</th><th class="number">rollout</th></tr></thead><tbody>
${missingRuns.map((entry) => `<tr><td><div class="text">${escapeHtml(entry.question)}</div></td><td class="number">${entry.rollout}</td></tr>`).join('\n')}
</tbody></table>`;
  const skipped =
    report.skipped.length === 0
      ? ''
      : `<h3>Skipped lines (${report.skipped.length})</h3>
<table class="skipped"><thead><tr><th>file</th><th class="number">line</th><th>reason</th></tr></thead><tbody>
${report.skipped.map((entry) => `<tr><td><code>${escapeHtml(entry.file)}</code></td><td class="number">${entry.line}</td><td>${escapeHtml(entry.reason)}</td></tr>`).join('\n')}
</tbody></table>`;
  const unparsed =
    report.unparsedVerdicts.length === 0
      ? ''
      : `<h3>Verdicts that did not parse (${report.unparsedVerdicts.length}), counted as incorrect</h3>
<table class="unparsed"><thead><tr><th>question</th><th class="number">rollout</th><th>judge's text</th></tr></thead><tbody>
${report.unparsedVerdicts
  .map(
    (entry) =>
      `<tr><td><div class="text">${escapeHtml(entry.question)}</div></td><td class="number">${entry.rollout}</td><td><div class="text">${escapeHtml(entry.text)}</div></td></tr>`,
  )
  .join('\n')}
</tbody></table>`;
  return `<section id="problems">
<h2>Left out or doubtful</h2>
${skipped}
${duplicateList}
${missingList}
${unparsed}
</section>`;
}

/**
 * report.html: one self-contained page (inline style and SVG, no scripts, no network) showing an
 * evaluation: the named accuracy metrics (mean pass@1, best pass@1, pass@k any of k, unbiased
 * pass@k) with per-rollout accuracy, termination reasons, histograms of model calls, tokens,
 * durations and answer lengths, tool usage, the per-question table (question, reference, each
 * rollout's prediction and verdict, a Web UI link to the run when `webUiBase` and its `runId` are
 * known), and skipped lines and unparsed verdicts. Every text from the report is escaped.
 * Async because vega renders charts asynchronously.
 */
export async function renderEvaluationReportHtml(report: EvaluationReport): Promise<string> {
  const { all, solved } = report.statistics;
  const sections = [
    await accuracySection(report),
    await terminationsSection(all, solved),
    await trajectoriesSection(all, solved),
    await toolsSection(all, solved),
    questionsSection(report),
    problemsSection(report),
  ];
  const header = `<header>
<h1>Evaluation report</h1>
<p class="meta">Created <time datetime="${escapeHtml(report.createdAt)}">${escapeHtml(report.createdAt)}</time> · scored by ${describeMethod(report.method, report.judge)}</p>
<p class="meta">Source: ${describeSource(report.source)}</p>
${
  report.judgeCalls
    ? `<p class="meta judge-calls">Judge calls: ${report.judgeCalls.made} made, ${report.judgeCalls.stored} verdict${report.judgeCalls.stored === 1 ? '' : 's'} already stored.</p>`
    : ''
}${report.notes && report.notes.length > 0 ? `<ul class="notes">${report.notes.map((note) => `<li>${escapeHtml(note)}</li>`).join('')}</ul>` : ''}
</header>`;
  const title = `Evaluation report${report.source.batchId ? ` — ${report.source.batchId}` : ''} (${report.createdAt})`;
  return htmlPage(title, [header, ...sections].filter((part) => part !== '').join('\n'));
}

const COUNT_METRICS = new Set(['questions', 'rollouts']);

function metricValue(name: string, value: number | undefined): string {
  if (value === undefined) return '–';
  return COUNT_METRICS.has(name) ? formatNumber(value, 0) : formatPercent(value);
}

function metricDelta(name: string, delta: number | undefined): string {
  if (delta === undefined) return '–';
  return COUNT_METRICS.has(name) ? formatSignedCount(delta) : formatPercentagePoints(delta);
}

function deltaClass(delta: number | undefined): string {
  if (delta === undefined || Math.abs(delta) < 1e-9) return '';
  return delta > 0 ? ' positive' : ' negative';
}

function comparedSide(label: string, side: EvaluationComparison['a']): string {
  return `<tr><th scope="row">${label}</th><td>${escapeHtml(side.createdAt)}</td><td>${describeMethod(side.method, side.judge)}</td><td class="number">${side.rollouts}</td><td class="number">${side.questions}</td><td>${describeSource(side.source)}</td></tr>`;
}

function outcomeCell(outcome: QuestionOutcome): string {
  const predictions = outcome.predictions
    .map(
      (prediction, index) =>
        `<li><span class="small">rollout ${index + 1}:</span> <span class="text prediction">${escapeHtml(prediction)}</span>${noAnswer(prediction)}</li>`,
    )
    .join('');
  return `<td><span class="verdict ${outcome.right ? 'correct' : 'incorrect'}">${outcome.correctRollouts}/${outcome.rollouts} correct</span><ul class="predictions">${predictions}</ul></td>`;
}

function flippedTable(name: string, title: string, entries: FlippedQuestion[], none: string): string {
  if (entries.length === 0) return `<h3>${escapeHtml(title)} (0)</h3><p class="note">${escapeHtml(none)}</p>`;
  const rows = entries
    .map(
      (entry) =>
        `<tr class="flipped-row"><td><div class="text question">${escapeHtml(entry.question)}</div></td><td><div class="text reference">${escapeHtml(
          entry.reference,
        )}</div></td>${outcomeCell(entry.a)}${outcomeCell(entry.b)}</tr>`,
    )
    .join('\n');
  return `<h3>${escapeHtml(title)} (${entries.length})</h3>
<table class="questions flipped" data-flip="${name}">
<colgroup><col><col style="width:14%"><col><col></colgroup>
<thead><tr><th>question</th><th>reference</th><th>A (baseline)</th><th>B (candidate)</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>`;
}

function questionList(title: string, questions: string[]): string {
  if (questions.length === 0) return '';
  return `<h3>${escapeHtml(title)} (${questions.length})</h3><ul class="only-in">${questions.map((question) => `<li><span class="text">${escapeHtml(question)}</span></li>`).join('')}</ul>`;
}

/**
 * The `eval compare` page: one self-contained HTML file comparing evaluation A (baseline) with
 * B (candidate): both sides described, every named metric with its delta (b − a; shares in
 * percentage points), the questions that flipped right→wrong and wrong→right (and those whose
 * share of correct rollouts changed without flipping), termination shifts, and the questions only
 * one side has. Charts are Vega-Lite rendered to inline SVG; every text is escaped. Async because
 * vega renders charts asynchronously.
 */
export async function renderComparisonHtml(comparison: EvaluationComparison): Promise<string> {
  const metricRows = comparison.metrics
    .map(
      (metric) =>
        `<tr data-metric="${escapeHtml(metric.name)}"><td><code>${escapeHtml(metric.name)}</code></td><td class="number">${metricValue(
          metric.name,
          metric.a,
        )}</td><td class="number">${metricValue(metric.name, metric.b)}</td><td class="number delta${deltaClass(metric.delta)}">${metricDelta(metric.name, metric.delta)}</td></tr>`,
    )
    .join('\n');
  const chartedMetrics = comparison.metrics.filter(
    (metric) => !COUNT_METRICS.has(metric.name) && !/^round\d+_/.test(metric.name),
  );
  const metricBars = chartedMetrics.flatMap((metric) => [
    ...(metric.a !== undefined ? [{ name: metric.name, group: 'A', value: metric.a }] : []),
    ...(metric.b !== undefined ? [{ name: metric.name, group: 'B', value: metric.b }] : []),
  ]);
  const metricsFigure =
    metricBars.length > 0
      ? await chart(
          'metric-comparison',
          'headline metrics, A and B',
          comparisonBarsSpec(metricBars, 'share of questions'),
        )
      : emptyChart('metric-comparison', 'headline metrics, A and B', 'No metrics to compare.');

  const shiftRows = comparison.terminationShifts
    .map(
      (shift) =>
        `<tr data-termination="${escapeHtml(shift.termination)}"><td><code>${escapeHtml(shift.termination)}</code></td><td class="number">${shift.a} (${formatPercent(
          shift.aFrequency,
        )})</td><td class="number">${shift.b} (${formatPercent(shift.bFrequency)})</td><td class="number delta">${formatSignedCount(
          shift.delta,
        )}</td><td class="number delta">${formatPercentagePoints(shift.frequencyDelta)}</td></tr>`,
    )
    .join('\n');
  const shiftBars = comparison.terminationShifts.flatMap((shift) => [
    { name: shift.termination, group: 'A', value: shift.aFrequency },
    { name: shift.termination, group: 'B', value: shift.bFrequency },
  ]);
  const shiftsFigure =
    shiftBars.length > 0
      ? await chart(
          'termination-shifts',
          'share of runs by termination, A and B',
          comparisonBarsSpec(shiftBars, 'share of runs'),
        )
      : emptyChart('termination-shifts', 'share of runs by termination, A and B', 'No runs on either side.');

  const body = `<header>
<h1>Evaluation comparison</h1>
<p class="meta">A is the baseline, B the candidate; every delta is B − A. ${comparison.commonQuestions} question${
    comparison.commonQuestions === 1 ? '' : 's'
  } in both. A question is right when most of its rollouts are correct.</p>
<table class="sides">
<thead><tr><th></th><th>created</th><th>scored by</th><th class="number">rollouts</th><th class="number">questions</th><th>source</th></tr></thead>
<tbody>
${comparedSide('A', comparison.a)}
${comparedSide('B', comparison.b)}
</tbody>
</table>
</header>
<section id="metric-deltas">
<h2>Metrics</h2>
<div class="charts">
<table class="metric-deltas">
<thead><tr><th>metric</th><th class="number">A</th><th class="number">B</th><th class="number">B − A</th></tr></thead>
<tbody>
${metricRows}
</tbody>
</table>
${metricsFigure}
</div>
</section>
<section id="flipped">
<h2>Questions that flipped</h2>
${flippedTable('right-to-wrong', 'Right → wrong (regressions)', comparison.rightToWrong, 'No question went from right to wrong.')}
${flippedTable('wrong-to-right', 'Wrong → right (improvements)', comparison.wrongToRight, 'No question went from wrong to right.')}
${flippedTable('share-changed', 'Share of correct rollouts changed, same side', comparison.shareChanged, 'No other question changed its share of correct rollouts.')}
${questionList('Only in A', comparison.onlyInA)}
${questionList('Only in B', comparison.onlyInB)}
</section>
<section id="termination-shifts">
<h2>Termination shifts</h2>
<div class="charts">
<table class="termination-shifts">
<thead><tr><th>termination</th><th class="number">A runs (share)</th><th class="number">B runs (share)</th><th class="number">B − A runs</th><th class="number">B − A share</th></tr></thead>
<tbody>
${shiftRows}
</tbody>
</table>
${shiftsFigure}
</div>
</section>`;
  return htmlPage(`Evaluation comparison (${comparison.a.createdAt} → ${comparison.b.createdAt})`, body);
}
