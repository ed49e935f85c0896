/**
 * The OpenTelemetry SDK as the worker (worker/tracing.ts) and the CLI (src/cli/client-tracing.ts)
 * start it when an OTLP endpoint is configured (issue 19): a tracer provider for one service
 * exporting over OTLP/HTTP (JSON) through a batch span processor (the SDK's `OTEL_BSP_*`
 * variables apply), registered globally.
 *
 * OpenTelemetry JS 2 (issue 29) dropped `BasicTracerProvider.register()`, which set three globals
 * at once; {@link registerTracerProvider} sets them one by one: the provider, an async-hooks
 * context manager (a span stays current across `await`), and the W3C propagators (trace context
 * and baggage), which are what carry a run's trace from the client through Temporal's headers.
 * {@link WorkflowSpanProcessor} is what the worker hands the workflow's spans to: they come in
 * OpenTelemetry 1.x's shape from `@temporalio/interceptors-opentelemetry`.
 */
import { context, propagation, trace, type Context, type SpanContext, type TracerProvider } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  CompositePropagator,
  W3CBaggagePropagator,
  W3CTraceContextPropagator,
  type InstrumentationScope,
} from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes, type Resource } from '@opentelemetry/resources';
import {
  BasicTracerProvider,
  BatchSpanProcessor,
  type ReadableSpan,
  type Span,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-base';

/** What {@link startTracerProvider} started. */
export interface StartedTracerProvider {
  /** Registered globally; `shutdown()` exports what is left and stops it. */
  provider: BasicTracerProvider;
  /** The batch processor in front of the OTLP exporter (the worker also hands it the workflow's spans). */
  processor: SpanProcessor;
  /** `service.name` = the service. */
  resource: Resource;
}

/** Makes `provider` the global tracer provider, with an async-hooks context manager and the W3C propagators. */
export function registerTracerProvider(provider: TracerProvider): void {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(
    new CompositePropagator({ propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()] }),
  );
  trace.setGlobalTracerProvider(provider);
}

/** A provider for `serviceName` exporting to `tracesUrl` (OTLP/HTTP JSON, batched), registered globally. */
export function startTracerProvider(serviceName: string, tracesUrl: string): StartedTracerProvider {
  const resource = resourceFromAttributes({ 'service.name': serviceName });
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: tracesUrl }));
  const provider = new BasicTracerProvider({ resource, spanProcessors: [processor] });
  registerTracerProvider(provider);
  return { provider, processor, resource };
}

/**
 * A workflow span as `@temporalio/interceptors-opentelemetry` 1.24 hands it to the worker's sink:
 * made inside the workflow sandbox by the interceptors' own `@opentelemetry/sdk-trace-base` 1.x
 * (their dependency, `^1.25.1`; no release of them depends on 2.x) and copied out in 1.x's shape,
 * where 2.x's `ReadableSpan` has `parentSpanContext` and `instrumentationScope`.
 */
export type WorkflowSpan = Omit<ReadableSpan, 'parentSpanContext' | 'instrumentationScope'> & {
  readonly parentSpanContext?: SpanContext;
  readonly instrumentationScope?: InstrumentationScope;
  /** 1.x: the parent's span id (same trace). */
  readonly parentSpanId?: string;
  /** 1.x's name for `instrumentationScope`. */
  readonly instrumentationLibrary?: InstrumentationScope;
};

/** A workflow span in 2.x's shape: the parent as a span context, the library as the scope. */
export function readableWorkflowSpan(span: WorkflowSpan): ReadableSpan {
  if (span.instrumentationScope) return span as ReadableSpan;
  const { parentSpanId, instrumentationLibrary, ...rest } = span;
  const own = span.spanContext();
  return {
    ...rest,
    spanContext: () => own,
    parentSpanContext:
      span.parentSpanContext ??
      (parentSpanId ? { traceId: own.traceId, spanId: parentSpanId, traceFlags: own.traceFlags } : undefined),
    instrumentationScope: instrumentationLibrary ?? { name: 'unknown' },
  };
}

/**
 * The processor the workflow spans go to: the worker's OpenTelemetry 2.x batch processor, each
 * span first put in 2.x's shape ({@link readableWorkflowSpan}). Handed over as they come, the
 * 2.x OTLP exporter would fail the whole batch (activity and agent spans with it) reading the
 * missing `instrumentationScope.name`, and every workflow span would lose its parent. A later
 * interceptors release that makes 2.x spans passes through unchanged.
 */
export class WorkflowSpanProcessor implements SpanProcessor {
  constructor(private readonly processor: SpanProcessor) {}

  onStart(_span: Span, _parentContext: Context): void {
    // The sink only ever ends spans.
  }

  onEnd(span: ReadableSpan | WorkflowSpan): void {
    this.processor.onEnd(readableWorkflowSpan(span));
  }

  forceFlush(): Promise<void> {
    return this.processor.forceFlush();
  }

  shutdown(): Promise<void> {
    return this.processor.shutdown();
  }
}
