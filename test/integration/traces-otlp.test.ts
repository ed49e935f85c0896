import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, test } from '@jest/globals';
import { context, propagation, trace } from '@opentelemetry/api';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { Client } from '@temporalio/client';
import { OpenTelemetryWorkflowClientInterceptor } from '@temporalio/interceptors-opentelemetry';
import { registerTracerProvider } from '../../src/config/tracer-provider';
import { progressQuery } from '../../src/core/message-definitions';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { researchAgent } from '../../workflows';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { waitForToolLog } from './support/tool-log';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

/**
 * Issue 19's traces, end to end: a worker with OTEL_EXPORTER_OTLP_ENDPOINT exports over
 * OTLP/HTTP (JSON) to a receiver in this test on loopback. A run started by a client with the
 * Temporal OpenTelemetry client interceptor is one trace: the client's StartWorkflow span →
 * RunWorkflow (the workflow interceptor) → StartActivity → RunActivity (the activity interceptor)
 * → the agent's `chat <model>` span (GenAI attributes, no prompt text) or `execute_tool <name>`.
 * The first worker then stops and a second replays the finished run for a query: no span it had
 * exported arrives again. A worker with no endpoint exports nothing.
 */

interface OtlpAttribute {
  key: string;
  value: Record<string, unknown>;
}
interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

function valueOf(value: Record<string, unknown>): unknown {
  if ('stringValue' in value) return value.stringValue;
  if ('intValue' in value) return Number(value.intValue);
  if ('doubleValue' in value) return value.doubleValue;
  if ('boolValue' in value) return value.boolValue;
  if ('arrayValue' in value)
    return ((value.arrayValue as { values?: Array<Record<string, unknown>> }).values ?? []).map(valueOf);
  return undefined;
}

/** A receiver of OTLP/HTTP JSON trace exports (POST /v1/traces), keeping every span it got. */
class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  readonly requests: Array<{ path: string; contentType: string }> = [];
  private constructor(private readonly server: Server) {}

  static async start(): Promise<OtlpReceiver> {
    const server = createServer();
    const receiver = new OtlpReceiver(server);
    server.on('request', (request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        receiver.requests.push({ path: request.url ?? '', contentType: request.headers['content-type'] ?? '' });
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans?: Array<{
            resource?: { attributes?: OtlpAttribute[] };
            scopeSpans?: Array<{
              spans?: Array<{
                traceId: string;
                spanId: string;
                parentSpanId?: string;
                name: string;
                attributes?: OtlpAttribute[];
              }>;
            }>;
          }>;
        };
        for (const resourceSpans of body.resourceSpans ?? []) {
          const service = String(
            valueOf(
              resourceSpans.resource?.attributes?.find((attribute) => attribute.key === 'service.name')?.value ?? {},
            ),
          );
          for (const scope of resourceSpans.scopeSpans ?? []) {
            for (const span of scope.spans ?? []) {
              receiver.spans.push({
                service,
                traceId: span.traceId,
                spanId: span.spanId,
                parentSpanId: span.parentSpanId ?? '',
                name: span.name,
                attributes: Object.fromEntries(
                  (span.attributes ?? []).map((attribute) => [attribute.key, valueOf(attribute.value)]),
                ),
              });
            }
          }
        }
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return receiver;
  }

  get endpoint(): string {
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

async function waitFor(condition: () => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const scenarios = new Scenarios();
let environment: AgentEnvironment;
let receiver: OtlpReceiver;
const clientSpans = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(clientSpans)] });
const tracing = (extra: Record<string, string> = {}) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
  OTEL_SERVICE_NAME: 'react-agent-test-worker',
  OTEL_BSP_SCHEDULE_DELAY: '200',
  ...extra,
});

beforeAll(async () => {
  // The client's half, as an application (or the CLI) would have it: a registered provider, the client interceptor.
  registerTracerProvider(provider);
  receiver = await OtlpReceiver.start();
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterAll(async () => {
  await environment?.close();
  await receiver?.close();
  await provider.shutdown();
  trace.disable();
  context.disable();
  propagation.disable();
});

let workflowId = '';
let result: ResearchRunResult;

test('a run is one trace from the client start through the workflow to each model call and tool call, with GenAI attributes and no prompt text', async () => {
  const first = await environment.startWorker(tracing());
  assert.match(
    first.log,
    /Traces: OTLP\/HTTP to http:\/\/127\.0\.0\.1:\d+\/v1\/traces as service "react-agent-test-worker"/,
  );
  workflowId = scenarios.add(runId('traces'), (turn) =>
    turn === 1 ? toolCall('lookup', { query: 'BYD 2024' }) : answer('BYD sold more.'),
  );
  const client = new Client({
    connection: environment.client.connection,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
  const handle = await client.workflow.start<typeof researchAgent>('researchAgent', {
    taskQueue: environment.taskQueue,
    workflowId,
    args: [{ question: 'Who sold more cars in 2024? SECRET-PROMPT-TEXT' }],
  });
  result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.equal(result.iterations, 2);

  const start = clientSpans.getFinishedSpans().find((span) => span.name === 'StartWorkflow:researchAgent');
  assert.ok(start, 'the client interceptor made the StartWorkflow span');
  const traceId = start.spanContext().traceId;
  const ofRun = () => receiver.spans.filter((span) => span.traceId === traceId);
  await waitFor(
    () =>
      ofRun().some((span) => span.name === 'RunWorkflow:researchAgent') &&
      ofRun().filter((span) => span.name.startsWith('chat ')).length === 2,
    "the run's spans",
  );
  assert.ok(
    receiver.requests.every(
      (request) => request.path === '/v1/traces' && request.contentType.startsWith('application/json'),
    ),
  );
  const spans = ofRun();
  assert.ok(spans.every((span) => span.service === 'react-agent-test-worker'));
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  const parentOf = (span: ReceivedSpan) => byId.get(span.parentSpanId);

  const [workflow, ...moreWorkflows] = spans.filter((span) => span.name === 'RunWorkflow:researchAgent');
  assert.ok(workflow);
  assert.equal(moreWorkflows.length, 0);
  assert.equal(workflow.parentSpanId, start.spanContext().spanId, 'the workflow run is a child of the client start');

  const chats = spans.filter((span) => span.name === 'chat scripted-model');
  assert.equal(chats.length, 2);
  for (const chat of chats) {
    const run = parentOf(chat);
    assert.equal(run?.name, 'RunActivity:callModel');
    const scheduled = run && parentOf(run);
    assert.equal(scheduled?.name, 'StartActivity:callModel');
    assert.equal(scheduled?.parentSpanId, workflow.spanId);
    assert.equal(chat.attributes['gen_ai.operation.name'], 'chat');
    assert.equal(chat.attributes['gen_ai.request.model'], 'scripted-model');
    assert.deepEqual(chat.attributes['gen_ai.response.finish_reasons'], ['stop']);
    assert.ok(Number(chat.attributes['gen_ai.usage.input_tokens']) > 0);
    assert.ok(Number(chat.attributes['gen_ai.usage.output_tokens']) > 0);
    assert.equal(chat.attributes['gen_ai.input.messages'], undefined, 'no prompt without REACT_AGENT_TRACE_CONTENT');
    assert.equal(chat.attributes['gen_ai.output.messages'], undefined);
  }
  assert.equal(
    chats.reduce((sum, chat) => sum + Number(chat.attributes['gen_ai.usage.input_tokens']), 0),
    result.usage.promptTokens,
  );
  assert.equal(
    chats.reduce((sum, chat) => sum + Number(chat.attributes['gen_ai.usage.output_tokens']), 0),
    result.usage.completionTokens,
  );

  const tools = spans.filter((span) => span.name === 'execute_tool lookup');
  assert.equal(tools.length, 1);
  const [tool] = tools as [ReceivedSpan];
  assert.equal(tool.attributes['gen_ai.tool.name'], 'lookup');
  assert.equal(tool.attributes['gen_ai.operation.name'], 'execute_tool');
  assert.equal(parentOf(tool)?.name, 'RunActivity:lookup');
  assert.equal(parentOf(parentOf(tool) as ReceivedSpan)?.parentSpanId, workflow.spanId);
  assert.ok(!JSON.stringify(receiver.spans).includes('SECRET-PROMPT-TEXT'), 'the question is in no span');

  // A second worker, after the first stopped, replays the closed run to answer a query: nothing it exported arrives again.
  const exported = receiver.spans.length;
  const seen = new Set(receiver.spans.map((span) => span.name));
  assert.equal(await first.stop(), 0);
  const second = await environment.startWorker(tracing());
  const progress = await environment.client.workflow.getHandle(workflowId).query(progressQuery);
  assert.equal(progress.modelCalls, 2);
  await new Promise((resolve) => setTimeout(resolve, 1500));
  const added = receiver.spans.slice(exported);
  assert.deepEqual(
    added.filter((span) => seen.has(span.name) && !span.name.startsWith('HandleQuery')).map((span) => span.name),
    [],
    'no span of the run is exported twice',
  );
  for (const name of [
    'RunWorkflow:researchAgent',
    'chat scripted-model',
    'execute_tool lookup',
    'StartActivity:callModel',
    'RunActivity:callModel',
  ]) {
    assert.equal(
      receiver.spans.filter((span) => span.traceId === traceId && span.name === name).length,
      spans.filter((span) => span.name === name).length,
      name,
    );
  }
  assert.equal(await second.stop(), 0);
}, 60_000);

test('a worker killed mid-run: the run finishes on another worker as one trace, each span once, the workflow span the same parent throughout', async () => {
  const killed = await environment.startWorker(tracing());
  const id = scenarios.add(runId('traces-killed'), (turn) =>
    turn === 1
      ? toolCall('lookup', { query: 'first' })
      : turn === 2
        ? toolCall('wait', { seconds: 2 })
        : answer('Done after a crash.'),
  );
  const client = new Client({
    connection: environment.client.connection,
    interceptors: { workflow: [new OpenTelemetryWorkflowClientInterceptor()] },
  });
  const handle = await client.workflow.start<typeof researchAgent>('researchAgent', {
    taskQueue: environment.taskQueue,
    workflowId: id,
    args: [{ question: 'Survive a crash?' }],
  });
  await waitForToolLog(
    environment.toolLog,
    id,
    (entries) => entries.some((entry) => entry.tool === 'wait' && entry.event === 'start'),
    30_000,
  );
  await new Promise((resolve) => setTimeout(resolve, 800)); // the finished attempts' spans leave the batch
  await killed.crash();
  const second = await environment.startWorker(tracing());
  assert.equal((await handle.result()).termination, 'answer');
  const start = clientSpans
    .getFinishedSpans()
    .find((span) => span.name === 'StartWorkflow:researchAgent' && span.attributes.temporalWorkflowId === id);
  assert.ok(start);
  const traceId = start.spanContext().traceId;
  const ofRun = () => receiver.spans.filter((span) => span.traceId === traceId);
  await waitFor(() => ofRun().some((span) => span.name === 'RunWorkflow:researchAgent'), 'the run span');
  await new Promise((resolve) => setTimeout(resolve, 800));
  const spans = ofRun();
  assert.equal(new Set(spans.map((span) => span.spanId)).size, spans.length, 'no span arrives twice');
  const count = (name: string) => spans.filter((span) => span.name === name).length;
  assert.equal(count('RunWorkflow:researchAgent'), 1);
  assert.equal(count('chat scripted-model'), 3, 'each model call once');
  assert.equal(count('execute_tool lookup'), 1);
  assert.equal(count('execute_tool wait'), 1, 'the killed attempt never ended; its retry did');
  const workflow = spans.find((span) => span.name === 'RunWorkflow:researchAgent') as ReceivedSpan;
  assert.equal(workflow.parentSpanId, start.spanContext().spanId);
  const byId = new Map(spans.map((span) => [span.spanId, span]));
  for (const span of spans.filter((each) => each.name.startsWith('StartActivity:')))
    assert.equal(span.parentSpanId, workflow.spanId, `${span.name} under the one workflow span, on either worker`);
  for (const span of spans.filter((each) => each.name.startsWith('chat ') || each.name.startsWith('execute_tool '))) {
    assert.equal(byId.get(byId.get(span.parentSpanId)?.parentSpanId ?? '')?.parentSpanId, workflow.spanId, span.name);
  }
  assert.equal(await second.stop(), 0);
}, 60_000);

test('with REACT_AGENT_TRACE_CONTENT=true model spans carry the prompt and completion, truncated; with no endpoint nothing is exported', async () => {
  const withContent = await environment.startWorker(
    tracing({ REACT_AGENT_TRACE_CONTENT: 'true', REACT_AGENT_TRACE_CONTENT_CHARACTERS: '60' }),
  );
  const id = scenarios.add(runId('traces-content'), () => answer('The answer is CONTENT-OF-COMPLETION.'));
  await (await environment.startRun({ question: 'CONTENT-OF-PROMPT?' }, id)).result();
  const chatOf = () =>
    receiver.spans.find(
      (span) => span.name === 'chat scripted-model' && span.attributes['gen_ai.input.messages'] !== undefined,
    );
  await waitFor(() => chatOf() !== undefined, 'a chat span with content');
  const chat = chatOf() as ReceivedSpan;
  assert.match(String(chat.attributes['gen_ai.input.messages']), /more characters\]$/);
  assert.ok(String(chat.attributes['gen_ai.input.messages']).length < 100);
  assert.match(String(chat.attributes['gen_ai.output.messages']), /^\[\{"role":"assistant"/);
  assert.equal(await withContent.stop(), 0);

  const before = receiver.spans.length;
  const requests = receiver.requests.length;
  const untraced = await environment.startWorker();
  assert.doesNotMatch(untraced.log, /Traces:/);
  const quiet = scenarios.add(runId('traces-off'), (turn) =>
    turn === 1 ? toolCall('lookup', { query: 'x' }) : answer('Done.'),
  );
  assert.equal((await (await environment.startRun({ question: 'Untraced?' }, quiet)).result()).termination, 'answer');
  assert.equal(await untraced.stop(), 0);
  assert.equal(receiver.spans.length, before);
  assert.equal(receiver.requests.length, requests);
}, 60_000);

test('react-agent run with OTEL_EXPORTER_OTLP_ENDPOINT starts the trace: its StartWorkflow span is the parent of the workflow run', async () => {
  const worker = await environment.startWorker(tracing());
  const id = scenarios.add(runId('traces-cli'), () => answer('From the CLI.'));
  const outcome = await CliProcess.complete(['run', 'Traced from the CLI?', '--id', id], {
    environment: { ...environment.environment, ...tracing({ OTEL_SERVICE_NAME: '' }) },
  });
  assert.equal(outcome.code, 0, outcome.stderr);
  // The CLI flushed its span before exiting; the worker's arrive within its batch delay.
  const start = receiver.spans.find(
    (span) => span.service === 'react-agent' && span.name === 'StartWorkflow:researchAgent',
  );
  assert.ok(start, 'the CLI exported its StartWorkflow span as service react-agent');
  const run = () =>
    receiver.spans.find((span) => span.name === 'RunWorkflow:researchAgent' && span.traceId === start.traceId);
  await waitFor(() => run() !== undefined, 'the run traced from the CLI');
  assert.equal(run()?.parentSpanId, start.spanId);
  assert.equal(await worker.stop(), 0);
}, 60_000);
