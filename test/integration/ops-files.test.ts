import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { AgentMetrics } from '../../src/core/agent-metrics';
import { promtool, promtoolMissing } from './support/prometheus-server';
import { testNeeding } from './support/test-needing';
import {
  agentMetricNames,
  ALERT_TESTS_FILE,
  ALERTS_FILE,
  dashboardExpressions,
  dashboardPanels,
  metricNamesIn,
  readDashboard,
  ruleExpressions,
} from './support/promql-metric-names';

/**
 * The operations files of issue 19 checked by the real tools: the alert rules by `promtool check
 * rules` and by their unit tests (`promtool test rules`, each alert firing on the series it is
 * written for and quiet on healthy ones), the Grafana dashboard as JSON whose agent metrics all
 * exist. That every metric they query is one a worker serves is checked against a live worker's
 * /metrics in metrics-prometheus.test.ts. Without promtool (Debian's prometheus package; .ci/run
 * installs it) its tests are skipped, saying why.
 */
/** A test that runs promtool; without it, a test that fails with the reason (the dashboard tests run anyway). */
const withPromtool = testNeeding(promtoolMissing());

describe('ops/prometheus/alerts.yml', () => {
  withPromtool('promtool check rules accepts it', () => {
    const { status, output } = promtool(['check', 'rules', ALERTS_FILE]);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS: \d+ rules found/);
    assert.match(
      output,
      new RegExp(`SUCCESS: ${ruleExpressions(ALERTS_FILE).length} rules found`),
      'every rule is read by ruleExpressions too',
    );
  });

  withPromtool('its unit tests pass (promtool test rules alerts.test.yml)', () => {
    const { status, output } = promtool(['test', 'rules', ALERT_TESTS_FILE]);
    assert.equal(status, 0, output);
    assert.match(output, /SUCCESS/);
  });
});

describe('ops/grafana/react-agent.json', () => {
  test('is a dashboard: valid JSON, unique panel ids, every target a PromQL expression on the Prometheus data source variable', () => {
    const dashboard = readDashboard();
    assert.equal(dashboard.uid, 'react-agent');
    const panels = dashboardPanels(dashboard);
    assert.equal(new Set(panels.map((panel) => panel.id)).size, panels.length, 'panel ids are unique');
    const graphs = panels.filter((panel) => panel.type !== 'row');
    assert.ok(graphs.length >= 10);
    for (const panel of graphs) {
      assert.ok(panel.targets?.length, `${panel.title} has targets`);
      for (const target of panel.targets ?? [])
        assert.ok(target.expr && metricNamesIn(target.expr).length > 0, `${panel.title}: ${target.expr}`);
    }
    assert.ok(
      dashboard.templating.list.some((variable) => variable.type === 'datasource' && variable.name === 'datasource'),
    );
  });

  test('every agent metric it or the alert rules query is defined in src/core/agent-metrics.ts, and it shows each of them', () => {
    const defined = agentMetricNames();
    const queried = dashboardExpressions(readDashboard()).flatMap(metricNamesIn);
    for (const name of [...queried, ...ruleExpressions(ALERTS_FILE).flatMap(metricNamesIn)].filter((name) =>
      name.startsWith('react_agent_'),
    ))
      assert.ok(defined.has(name), `${name} is not an agent metric`);
    for (const metric of Object.values(AgentMetrics)) {
      assert.ok(
        queried.some((name) => name === metric.name || name.startsWith(`${metric.name}_`)),
        `the dashboard shows ${metric.name}`,
      );
    }
  });
});
