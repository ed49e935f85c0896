/**
 * The workflow interceptor modules a workflow bundle includes (worker/build.ts, a worker that
 * bundles at start, the tests' bundles, benchmarks/tracing-replay.ts), two kinds (issue 34):
 *
 * - traced ({@link TRACING_WORKFLOW_INTERCEPTOR_MODULES}): the Temporal OpenTelemetry interceptors
 *   (`@temporalio/interceptors-opentelemetry`), which carry a run's trace context from its start to
 *   its activities and export the workflow's spans through the worker's `exporter` sink, never
 *   while replaying; the bundle of a worker with an OTLP endpoint (worker/tracing.ts);
 * - untraced ({@link UNTRACED_WORKFLOW_INTERCEPTOR_MODULES}): workflows/tracing-turns-interceptor.ts,
 *   no span, no sink and no OpenTelemetry, only the promise turns the tracing interceptors put
 *   around what they wrap, so either kind replays the other's histories and both serve one task queue.
 */
export const TRACING_WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [
  require.resolve('@temporalio/interceptors-opentelemetry/lib/workflow-interceptors'),
];

/** What a worker that does not trace bundles instead of {@link TRACING_WORKFLOW_INTERCEPTOR_MODULES}. */
export const UNTRACED_WORKFLOW_INTERCEPTOR_MODULES: readonly string[] = [
  require.resolve('../../workflows/tracing-turns-interceptor'),
];

/** The modules of a worker that traces (`traced`) or does not. */
export function workflowInterceptorModules(traced: boolean): readonly string[] {
  return traced ? TRACING_WORKFLOW_INTERCEPTOR_MODULES : UNTRACED_WORKFLOW_INTERCEPTOR_MODULES;
}
