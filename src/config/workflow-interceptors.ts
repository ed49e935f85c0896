/**
 * Workflow interceptor modules every workflow bundle includes (worker/build.ts, a worker that
 * bundles at start, the tests' bundles): the Temporal OpenTelemetry interceptors
 * (`@temporalio/interceptors-opentelemetry`), which carry a run's trace context from its start to
 * its activities and export the workflow's spans through the worker's `exporter` sink, never while
 * replaying. A worker that does not trace gives that sink a no-op (worker/tracing.ts).
 */
export const WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];
