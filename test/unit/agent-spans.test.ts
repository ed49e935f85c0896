import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { context, propagation, SpanStatusCode, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { ApplicationFailure } from '@temporalio/common';
import {
  inModelCallSpan,
  setModelResponse,
  truncatedContent,
  withToolCallSpan,
} from '../../activities/tracing/agent-spans';
import { registerTracerProvider } from '../../src/config/tracer-provider';
import type { ToolActivityInput, ToolActivityOutput } from '../../src/core/activity-contracts';

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
const input: ToolActivityInput = { workflowId: 'w', callId: 'call-1', arguments: {}, maxObservationCharacters: 100 };
const output = (isError: boolean) =>
  ({ observation: { ref: 'r', preview: 'p', characters: 1 }, isError }) as unknown as ToolActivityOutput;

beforeAll(() => registerTracerProvider(provider));
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

describe('the agent spans (activities/tracing/agent-spans.ts)', () => {
  test('a model call attempt: chat <model> with the GenAI attributes; a failure marks it with the failure type', async () => {
    exporter.reset();
    await inModelCallSpan('m1', { 'react_agent.model_call': 3 }, async (span) => {
      setModelResponse(span, { model: 'm1', finishReason: 'stop', inputTokens: 10, outputTokens: 4 });
    });
    await assert.rejects(
      inModelCallSpan('m1', {}, async () => {
        throw ApplicationFailure.create({ type: 'ReactAgent.Model.RateLimited', message: 'slow down' });
      }),
    );
    const [ok, failed] = exporter.getFinishedSpans();
    assert.equal(ok?.name, 'chat m1');
    assert.deepEqual(ok?.attributes, {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'm1',
      'react_agent.model_call': 3,
      'gen_ai.response.model': 'm1',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 10,
      'gen_ai.usage.output_tokens': 4,
    });
    assert.equal(failed?.status.code, SpanStatusCode.ERROR);
    assert.equal(failed?.attributes['error.type'], 'ReactAgent.Model.RateLimited');
    assert.equal(failed?.events[0]?.name, 'exception');
  });

  test('a tool attempt: execute_tool <name>, an error observation or a throw marked as an error, the activity keeping its name', async () => {
    exporter.reset();
    const tool = withToolCallSpan('lookup', async function lookup(call: ToolActivityInput) {
      if (call.arguments.fail) throw new Error('boom');
      return output(Boolean(call.arguments.error));
    });
    assert.equal(tool.name, 'lookup');
    await tool(input);
    await tool({ ...input, arguments: { error: true } });
    await assert.rejects(tool({ ...input, arguments: { fail: true } }), /boom/);
    const [ok, observedError, thrown] = exporter.getFinishedSpans();
    assert.equal(ok?.name, 'execute_tool lookup');
    assert.deepEqual(ok?.attributes, {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'lookup',
      'gen_ai.tool.call.id': 'call-1',
    });
    assert.equal(ok?.status.code, SpanStatusCode.UNSET);
    assert.equal(observedError?.status.code, SpanStatusCode.ERROR);
    assert.equal(observedError?.attributes['error.type'], 'tool_error');
    assert.equal(thrown?.status.code, SpanStatusCode.ERROR);
    assert.equal(thrown?.attributes['error.type'], 'Error');
  });

  test("a span is a child of the active one (the activity interceptor's RunActivity)", async () => {
    exporter.reset();
    await trace.getTracer('t').startActiveSpan('RunActivity:lookup', async (parent) => {
      await withToolCallSpan('lookup', async (_call: ToolActivityInput) => output(false))(input);
      parent.end();
    });
    const [child, parent] = exporter.getFinishedSpans();
    assert.equal(child?.parentSpanContext?.spanId, parent?.spanContext().spanId);
  });

  test('content is cut to the limit, saying how much was left out', () => {
    assert.equal(truncatedContent('abc', 5), 'abc');
    assert.equal(truncatedContent('abcdefgh', 3), 'abc… [5 more characters]');
  });
});
