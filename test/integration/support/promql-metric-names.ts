import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { AgentMetrics } from '../../../src/core/agent-metrics';

const root = resolve(__dirname, '../../..');
export const DASHBOARD_FILE = resolve(root, 'ops/grafana/react-agent.json');
export const ALERTS_FILE = resolve(root, 'ops/prometheus/alerts.yml');
export const ALERT_TESTS_FILE = resolve(root, 'ops/prometheus/alerts.test.yml');

/** The metric names a PromQL expression reads: the identifiers with the agent's or the Temporal SDK's prefix. */
export function metricNamesIn(expression: string): string[] {
  const withoutStrings = expression.replace(/"(?:[^"\\]|\\.)*"/g, '""');
  return [...new Set(withoutStrings.match(/\b(?:react_agent|temporal)_[a-zA-Z0-9_:]*/g) ?? [])];
}

interface DashboardPanel {
  type: string;
  id: number;
  title: string;
  targets?: Array<{ expr?: string; refId?: string }>;
  panels?: DashboardPanel[];
}

export interface Dashboard {
  title: string;
  uid: string;
  panels: DashboardPanel[];
  templating: { list: Array<{ name: string; type: string; query?: string | { query: string } }> };
}

export function readDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Every panel, those inside collapsed rows included. */
export function dashboardPanels(dashboard: Dashboard): DashboardPanel[] {
  return dashboard.panels.flatMap((panel) => [panel, ...(panel.panels ?? [])]);
}

/** Every PromQL expression of the dashboard: its panels' targets and its query variables. */
export function dashboardExpressions(dashboard: Dashboard): string[] {
  const targets = dashboardPanels(dashboard).flatMap((panel) =>
    (panel.targets ?? []).map((target) => target.expr ?? ''),
  );
  const variables = dashboard.templating.list
    .filter((variable) => variable.type === 'query')
    .map((variable) => (typeof variable.query === 'string' ? variable.query : (variable.query?.query ?? '')));
  return [...targets, ...variables];
}

/**
 * The PromQL expressions of a rules file: each `expr: |` block (the form ops/prometheus/alerts.yml
 * writes them in) or one-line `expr:`. Read without a YAML library; promtool checks the file itself.
 */
export function ruleExpressions(rulesFile: string): string[] {
  const lines = readFileSync(rulesFile, 'utf8').split('\n');
  const expressions: string[] = [];
  for (let index = 0; index < lines.length; index += 1) {
    const match = /^(\s*)expr:\s*(.*)$/.exec(lines[index] as string);
    if (!match) continue;
    const [, indent = '', rest = ''] = match;
    if (rest !== '|' && rest !== '>') {
      expressions.push(rest.replace(/^['"]|['"]$/g, ''));
      continue;
    }
    const block: string[] = [];
    while (
      index + 1 < lines.length &&
      ((lines[index + 1] as string).trim() === '' || /^\s*/.exec(lines[index + 1] as string)![0].length > indent.length)
    ) {
      block.push((lines[index + 1] as string).trim());
      index += 1;
    }
    expressions.push(block.join(' ').trim());
  }
  return expressions;
}

/** Names a scrape shows for the agent's metrics: counters as they are, histograms with _bucket, _sum and _count. */
export function agentMetricNames(): Set<string> {
  const names = new Set<string>();
  for (const metric of Object.values(AgentMetrics)) {
    names.add(metric.name);
    if (metric.kind === 'histogram')
      for (const suffix of ['_bucket', '_sum', '_count']) names.add(metric.name + suffix);
  }
  return names;
}

/** The metric names a /metrics page serves, histograms with their _bucket, _sum and _count series. */
export function scrapedMetricNames(metricsText: string): Set<string> {
  const names = new Set<string>();
  for (const [, name, type] of metricsText.matchAll(/^# TYPE (\S+) (\S+)$/gm)) {
    names.add(name as string);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${name}${suffix}`);
  }
  return names;
}
