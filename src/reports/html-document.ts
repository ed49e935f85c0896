/**
 * Small pieces shared by the CLI's self-contained HTML pages (report.html, the comparison page):
 * escaping, number formats, the page shell with its inline style and a Content-Security-Policy
 * that forbids scripts and every network load, and chart figures.
 */

/** `text` with the five HTML-significant characters escaped: safe in element content and quoted attributes. */
export function escapeHtml(text: unknown): string {
  return String(text ?? '')
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/** A share (0..1) as a percentage with one decimal, e.g. `66.7%`; an en dash when absent. */
export function formatPercent(share: number | undefined): string {
  if (share === undefined || !Number.isFinite(share)) return '–';
  return `${(share * 100).toFixed(1)}%`;
}

/** A difference of shares in percentage points with its sign, e.g. `+3.3 pp`, `−10.0 pp`, `±0.0 pp`. */
export function formatPercentagePoints(delta: number | undefined): string {
  if (delta === undefined || !Number.isFinite(delta)) return '–';
  const points = delta * 100;
  if (Math.abs(points) < 0.05) return '±0.0 pp';
  return `${points > 0 ? '+' : '−'}${Math.abs(points).toFixed(1)} pp`;
}

/** A signed whole-number difference, e.g. `+2`, `−1`, `±0`. */
export function formatSignedCount(delta: number): string {
  if (delta === 0) return '±0';
  return `${delta > 0 ? '+' : '−'}${Math.abs(delta)}`;
}

/** A number with at most `decimals` decimals and thousands separators, e.g. `12,345.5`. */
export function formatNumber(value: number | undefined, decimals = 1): string {
  if (value === undefined || !Number.isFinite(value)) return '–';
  return value.toLocaleString('en-US', { maximumFractionDigits: decimals });
}

/**
 * The link to a run in the Temporal Web UI, `${webUiBase}/workflows/${encodeURIComponent(runId)}`,
 * when both are known and the base is an http(s) address; undefined otherwise.
 */
export function webUiRunLink(webUiBase: string | undefined, runId: string | undefined): string | undefined {
  if (!webUiBase || !runId || !/^https?:\/\//i.test(webUiBase)) return undefined;
  return `${webUiBase.replace(/\/+$/, '')}/workflows/${encodeURIComponent(runId)}`;
}

/** A chart as a figure: its caption and its inline SVG (from {@link renderVegaLiteSvg}). */
export function chartFigure(name: string, caption: string, svg: string): string {
  return `<figure class="chart" id="chart-${escapeHtml(name)}" data-chart="${escapeHtml(name)}">
<figcaption>${escapeHtml(caption)}</figcaption>
${svg}
</figure>`;
}

/** A paragraph saying a chart has nothing to show, in place of the chart. */
export function emptyChart(name: string, caption: string, why: string): string {
  return `<figure class="chart empty" id="chart-${escapeHtml(name)}" data-chart="${escapeHtml(name)}">
<figcaption>${escapeHtml(caption)}</figcaption>
<p class="note">${escapeHtml(why)}</p>
</figure>`;
}

const STYLE = `
:root { color-scheme: light; --ink: #1d2330; --muted: #5b6475; --line: #d9dde5; --good: #1a7f37; --bad: #c62828; --soft: #f5f7fa; }
* { box-sizing: border-box; }
body { margin: 0; padding: 24px 32px 48px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: var(--ink); background: #fff; }
h1 { font-size: 24px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 32px 0 8px; padding-bottom: 4px; border-bottom: 1px solid var(--line); }
h3 { font-size: 15px; margin: 16px 0 6px; }
.meta { color: var(--muted); margin: 2px 0; }
.note { color: var(--muted); }
code { font: 12px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: var(--soft); padding: 0 3px; border-radius: 3px; }
table { border-collapse: collapse; margin: 8px 0 12px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--soft); font-weight: 600; }
td.number, th.number { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
.charts { display: flex; flex-wrap: wrap; gap: 16px 32px; align-items: flex-start; }
figure.chart { margin: 8px 0; }
figure.chart figcaption { font-weight: 600; margin-bottom: 4px; }
figure.chart svg { display: block; max-width: 100%; height: auto; }
.text { white-space: pre-wrap; overflow-wrap: anywhere; max-height: 12em; overflow: auto; }
table.questions { width: 100%; table-layout: fixed; }
table.questions td { font-size: 13px; }
.verdict { display: inline-block; font-weight: 600; padding: 0 6px; border-radius: 10px; font-size: 12px; }
.verdict.correct { color: #fff; background: var(--good); }
.verdict.incorrect { color: #fff; background: var(--bad); }
.verdict.missing { color: var(--muted); background: var(--soft); }
.small { font-size: 12px; color: var(--muted); }
.positive { color: var(--good); }
.negative { color: var(--bad); }
`;

/**
 * A whole self-contained page: inline style, no scripts, and a Content-Security-Policy that
 * blocks scripts and every load from anywhere (the page opens offline and stays inert even if a
 * prediction slipped markup past the escaping).
 */
export function htmlPage(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>${STYLE}</style>
</head>
<body>
${body}
</body>
</html>
`;
}
