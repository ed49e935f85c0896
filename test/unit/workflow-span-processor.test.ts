import assert from 'node:assert/strict';
import { dirname } from 'node:path';
import { describe, test } from '@jest/globals';
import { ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { makeWorkflowExporter, type SerializableSpan } from '@temporalio/interceptors-opentelemetry';
import { SpanExporter as WorkflowSideExporter } from '@temporalio/interceptors-opentelemetry/lib/workflow/span-exporter';
import { readableWorkflowSpan, WorkflowSpanProcessor } from '../../src/config/tracer-provider';

/*
 * Issue 29: the worker runs OpenTelemetry JS 2, while @temporalio/interceptors-opentelemetry 1.24
 * makes the workflow's spans with its own sdk-trace-base 1.x (in the workflow sandbox) and hands
 * them to the worker's sink in 1.x's shape. Here a span is made and serialized exactly as the
 * interceptors do it, with the copy of sdk-trace-base they resolve, and goes through their
 * worker-side sink into a 2.x processor behind WorkflowSpanProcessor.
 */

/** What this test uses of the sdk-trace-base the interceptors resolve (their own 1.x copy, as npm nests it). */
interface InterceptorsSdk {
  BasicTracerProvider: new (config: { spanProcessors: unknown[] }) => { getTracer(name: string): Tracer };
  SimpleSpanProcessor: new (exporter: unknown) => unknown;
  InMemorySpanExporter: new () => { getFinishedSpans(): Array<{ name: string }> };
}
type Tracer = ReturnType<typeof trace.getTracer>;

function interceptorsSdkTraceBase(): InterceptorsSdk {
  const interceptors = dirname(require.resolve('@temporalio/interceptors-opentelemetry/package.json'));
  return require(require.resolve('@opentelemetry/sdk-trace-base', { paths: [interceptors] })) as InterceptorsSdk;
}

/** A parent and a child span made by the interceptors' SDK, serialized as their workflow exporter does. */
function workflowSideSpans(): { parent: SerializableSpan; child: SerializableSpan } {
  const sdk = interceptorsSdkTraceBase();
  const memory = new sdk.InMemorySpanExporter();
  const tracer = new sdk.BasicTracerProvider({ spanProcessors: [new sdk.SimpleSpanProcessor(memory)] }).getTracer(
    '@temporalio/interceptor-workflow',
  );
  const parent = tracer.startSpan('RunWorkflow:researchAgent');
  tracer.startSpan('StartActivity:callModel', undefined, trace.setSpan(ROOT_CONTEXT, parent)).end();
  parent.end();
  const spans = memory.getFinishedSpans();
  const serializer = new WorkflowSideExporter();
  const byName = (name: string) =>
    serializer.makeSerializable(
      spans.find((span) => span.name === name) as Parameters<typeof serializer.makeSerializable>[0],
    );
  return { parent: byName('RunWorkflow:researchAgent'), child: byName('StartActivity:callModel') };
}

describe('the workflow spans in a 2.x SDK (src/config/tracer-provider.ts)', () => {
  test('the interceptors still hand over 1.x-shaped spans (parentSpanId, instrumentationLibrary)', () => {
    const { child } = workflowSideSpans();
    const shape = child as unknown as Record<string, unknown>;
    assert.equal(typeof shape.parentSpanId, 'string');
    assert.equal((shape.instrumentationLibrary as { name: string }).name, '@temporalio/interceptor-workflow');
    assert.equal(shape.instrumentationScope, undefined);
    assert.equal(shape.parentSpanContext, undefined);
  });

  test('through the sink and the adapter, a 2.x processor gets each span with its parent, its scope and the worker resource', () => {
    const { parent, child } = workflowSideSpans();
    const memory = new InMemorySpanExporter();
    const resource = resourceFromAttributes({ 'service.name': 'react-agent-test-worker' });
    const sink = makeWorkflowExporter(
      new WorkflowSpanProcessor(new SimpleSpanProcessor(memory)) as unknown as Parameters<
        typeof makeWorkflowExporter
      >[0],
      resource as unknown as Parameters<typeof makeWorkflowExporter>[1],
    );
    const info = { workflowId: 'w', runId: 'r' } as unknown as Parameters<typeof sink.export.fn>[0];
    sink.export.fn(info, [parent, child]);

    const [exportedParent, exportedChild] = memory.getFinishedSpans();
    assert.equal(exportedChild?.name, 'StartActivity:callModel');
    assert.equal(exportedChild?.parentSpanContext?.spanId, parent.spanContext.spanId);
    assert.equal(exportedChild?.parentSpanContext?.traceId, parent.spanContext.traceId);
    assert.equal(exportedParent?.parentSpanContext, undefined, 'a root stays a root');
    assert.equal(exportedChild?.instrumentationScope.name, '@temporalio/interceptor-workflow');
    assert.equal(exportedChild?.resource.attributes['service.name'], 'react-agent-test-worker');
    assert.equal(exportedChild?.spanContext().spanId, child.spanContext.spanId);
    assert.equal(exportedChild?.attributes.workflowId, 'w');
  });

  test('a span already in 2.x shape passes through as it is', () => {
    const span = { instrumentationScope: { name: 's' }, spanContext: () => ({}) } as unknown as Parameters<
      typeof readableWorkflowSpan
    >[0];
    assert.equal(readableWorkflowSpan(span), span);
  });
});
