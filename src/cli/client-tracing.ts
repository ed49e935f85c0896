/**
 * The client's half of a run's trace (issue 19): with an OTLP endpoint configured
 * (OTEL_EXPORTER_OTLP_ENDPOINT or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT; service `react-agent` unless
 * OTEL_SERVICE_NAME says otherwise) the CLI registers an OpenTelemetry tracer provider exporting over
 * OTLP/HTTP and gives its Temporal client `OpenTelemetryWorkflowClientInterceptor`: starting a run
 * makes the `StartWorkflow:researchAgent` span the run's trace begins with, and its context travels
 * to the workflow in the start request's headers. Without an endpoint: no SDK, no interceptor.
 */
import type { WorkflowClientInterceptor } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import type { TracingConfig } from '../config';
import { startTracerProvider } from '../config/tracer-provider';

export interface ClientTracing {
  /** The client interceptors (none without tracing). */
  workflowInterceptors: WorkflowClientInterceptor[];
  /** Exports what is left (before the CLI exits). */
  shutdown(): Promise<void>;
}

/** Starts client tracing when `config.tracesUrl` is set; else nothing. */
export function startClientTracing(config: TracingConfig): ClientTracing {
  if (!config.tracesUrl) return { workflowInterceptors: [], shutdown: async () => undefined };
  const { provider } = startTracerProvider(config.serviceName, config.tracesUrl);
  return { workflowInterceptors: [new OpenTelemetryWorkflowClientInterceptor()], shutdown: () => provider.shutdown() };
}
