/**
 * Traces (issue 19): with an OTLP endpoint configured (OTEL_EXPORTER_OTLP_ENDPOINT or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT), the OpenTelemetry SDK — a tracer provider registered
 * globally with an async-hooks context manager and the W3C propagator, a batch span processor and
 * the OTLP/HTTP (JSON) exporter — plus what a Worker needs from `@temporalio/interceptors-opentelemetry`:
 * the activity interceptors (a `RunActivity:<type>` span per attempt, child of the workflow's
 * `StartActivity:<type>`, the parent of the agent's own spans in activities/tracing) and the
 * `exporter` sink through which the workflow interceptors (in the traced bundle: TRACING_WORKFLOW_INTERCEPTOR_MODULES)
 * export the workflow's spans, never while replaying. Without an endpoint: no SDK, no span, and the
 * worker runs the untraced bundle (worker/main.ts); the sink is a no-op so a traced bundle named by
 * REACT_AGENT_WORKFLOW_BUNDLE has somewhere to send nothing.
 */
import {
  makeWorkflowExporter,
  OpenTelemetryActivityInboundInterceptor,
  OpenTelemetryActivityOutboundInterceptor,
  type OpenTelemetrySinks,
} from '@temporalio/interceptors-opentelemetry';
import type { ActivityInterceptorsFactory, InjectedSinks } from '@temporalio/worker';
import type { TracingConfig } from '../src/config';
import { startTracerProvider, WorkflowSpanProcessor } from '../src/config/tracer-provider';

/** What the worker adds to each Worker, and stops when it stops. */
export interface WorkerTracing {
  /** Activity interceptors (none without tracing). */
  activityInterceptors: ActivityInterceptorsFactory[];
  /** The `exporter` sink the bundled workflow interceptors call. */
  sinks: InjectedSinks<OpenTelemetrySinks>;
  /** Prompt and completion text in model spans, or undefined. */
  traceContent?: { maxCharacters: number };
  /** Exports what is left and stops the SDK (nothing to do without tracing). */
  shutdown(): Promise<void>;
}

const NO_TRACING: WorkerTracing = {
  activityInterceptors: [],
  sinks: { exporter: { export: { fn: () => undefined, callDuringReplay: false } } },
  shutdown: async () => undefined,
};

/** Starts the OpenTelemetry SDK when `config.tracesUrl` is set; else returns the no-op. */
export function startWorkerTracing(config: TracingConfig, log: (line: string) => void): WorkerTracing {
  if (!config.tracesUrl) return NO_TRACING;
  const { provider, processor, resource } = startTracerProvider(config.serviceName, config.tracesUrl);
  log(
    `Traces: OTLP/HTTP to ${config.tracesUrl} as service "${config.serviceName}"${config.contentCharacters ? `; prompts and completions in spans (at most ${config.contentCharacters} characters each)` : ''}`,
  );
  return {
    activityInterceptors: [
      (context) => ({
        inbound: new OpenTelemetryActivityInboundInterceptor(context),
        outbound: new OpenTelemetryActivityOutboundInterceptor(context),
      }),
    ],
    // The interceptors' types are OpenTelemetry 1.x's (see WorkflowSpanProcessor): the 2.x
    // processor and resource go in through the adapter, cast where the 1.x types are named.
    sinks: {
      exporter: makeWorkflowExporter(
        new WorkflowSpanProcessor(processor) as unknown as WorkflowExporterArguments[0],
        resource as unknown as WorkflowExporterArguments[1],
      ),
    },
    ...(config.contentCharacters ? { traceContent: { maxCharacters: config.contentCharacters } } : {}),
    shutdown: () => provider.shutdown(),
  };
}

type WorkflowExporterArguments = Parameters<typeof makeWorkflowExporter>;
