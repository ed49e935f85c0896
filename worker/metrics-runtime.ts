import { Runtime } from '@temporalio/worker';
import { ConfigurationError, METRICS_ADDRESS_VARIABLE, type MetricsConfig } from '../src/config';
import { agentHistogramBuckets } from '../src/core/agent-metrics';

/**
 * Finer buckets (seconds) for the SDK's schedule-to-start histograms than its default
 * 0.1/0.5/1/5/10/100/1000, so an alert on their 95th percentile can tell 2 s from 30 s.
 * The SDK matches these names with or without its `temporal_` prefix.
 */
const SDK_HISTOGRAM_BUCKETS: Record<string, number[]> = {
  activity_schedule_to_start_latency: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  workflow_task_schedule_to_start_latency: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
};

/**
 * Installs the Temporal SDK runtime with its Prometheus exporter when `REACT_AGENT_METRICS_ADDRESS`
 * is set: `/metrics` serves the SDK's worker metrics (`temporal_*`: slots, polls, schedule-to-start,
 * sticky cache, activity and workflow task outcomes) and the agent's (`react_agent_*`, recorded
 * through the SDK's metric meters), durations in seconds. Must run before the first
 * NativeConnection or Worker is created (they install the default runtime otherwise).
 *
 * @param log Gets one line naming the endpoint when metrics are on.
 * @throws ConfigurationError naming the variable when the address cannot be bound (in use, not local).
 */
export function installMetricsRuntime(config: MetricsConfig, log: (line: string) => void): void {
  if (config.bindAddress === undefined) return;
  try {
    Runtime.install({
      telemetryOptions: {
        metrics: {
          prometheus: {
            bindAddress: config.bindAddress,
            useSecondsForDurations: true,
            histogramBucketOverrides: { ...SDK_HISTOGRAM_BUCKETS, ...agentHistogramBuckets() },
          },
        },
      },
    });
  } catch (error) {
    throw new ConfigurationError(
      METRICS_ADDRESS_VARIABLE,
      `${METRICS_ADDRESS_VARIABLE}=${config.bindAddress}: the worker cannot serve Prometheus metrics there (${(error as Error).message}). Choose a free port on an address of this machine, or unset it.`,
    );
  }
  log(`  Prometheus metrics on http://${config.bindAddress}/metrics (${METRICS_ADDRESS_VARIABLE})`);
}
