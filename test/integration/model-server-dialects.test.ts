import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { materialiseResult } from '../../src/cli/materialise-result';
import { progressLines } from '../../src/cli/progress-lines';
import { RunEventReader } from '../../src/cli/run-events';
import { FailureTypes } from '../../src/core/failure-types';
import type { ResearchRunInput } from '../../src/core/run-input';
import type { ResearchRunResult } from '../../src/core/run-result';
import { CONTEXT_OVERFLOW_RESPONSES } from '../fakes/model-server-error-bodies';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

/**
 * Runs end to end against the scripted server speaking like real servers do (issue 8): their
 * context-overflow bodies, llama-server's refusal of unparsable history tool calls, reasoning
 * streamed apart from the content, and a long silent wait for the first token.
 */
const HEARTBEAT_SECONDS = 3;
const FIRST_TOKEN_SECONDS = 8;
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: scenarios.script,
    workerEnvironment: {
      REACT_AGENT_MODEL_HEARTBEAT_SECONDS: String(HEARTBEAT_SECONDS),
      REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS: String(FIRST_TOKEN_SECONDS),
    },
  });
  await environment.startWorker();
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

type Replies = ScriptedReply[] | ((turn: number, request: ScriptedRequest) => ScriptedReply);

async function start(label: string, replies: Replies, input: Partial<ResearchRunInput> = {}) {
  const workflowId = scenarios.add(runId(label), replies);
  return environment.startRun({ question: `Question of ${label}?`, ...input }, workflowId);
}

async function run(label: string, replies: Replies, input: Partial<ResearchRunInput> = {}) {
  const handle = await start(label, replies, input);
  const result = (await handle.result()) as ResearchRunResult;
  return {
    handle,
    result,
    messages: await environment.transcript(result),
    requests: environment.requestsOf(handle.workflowId),
  };
}

const asksForFinalAnswer = (request: ScriptedRequest) =>
  /Stop calling tools now|Do not (call|use) any more tools/.test(String(request.messages.at(-1)?.content ?? ''));

describe('a context overflow on each server family ends in the final answer, not an error', () => {
  const families = [
    'OpenAI chat completions',
    'vLLM 2026',
    'llama-server (llama.cpp, current)',
    'Ollama /v1 (context shift off)',
    'TGI (text-generation-inference), total tokens',
  ];
  test.each(
    families.map(
      (server) => [server, CONTEXT_OVERFLOW_RESPONSES.find((response) => response.server === server)] as const,
    ),
  )(
    '%s',
    async (server, response) => {
      assert.ok(response, `no body for ${server}`);
      const { result, requests } = await run('overflow', (turn, request) =>
        asksForFinalAnswer(request)
          ? { ...answer('best guess: BYD'), dialect: 'llama-server' }
          : turn === 1
            ? { ...toolCall('lookup', { query: 'BYD' }), dialect: 'llama-server' }
            : { status: response.status, errorBody: response.body },
      );
      assert.equal(result.termination, 'token_limit', result.error);
      assert.equal(result.prediction, 'best guess: BYD');
      assert.equal(
        requests.filter((request) => request.status === response.status).length,
        1,
        'the overflow is not retried',
      );
    },
    60_000,
  );
});

test('native protocol: a tool call cut off by max_tokens goes back as valid JSON, the model is told it was malformed, the transcript keeps what it wrote', async () => {
  const truncatedArguments = '{"query": "BYD 2024 sal';
  const { result, messages, requests } = await run(
    'truncated-native-call',
    [
      {
        content: '',
        toolCalls: [{ id: 'call_cut', name: 'lookup', arguments: truncatedArguments }],
        finishReason: 'length',
        dialect: 'llama-server',
      },
      { content: 'BYD sold more cars than Tesla in 2024.', dialect: 'llama-server' },
    ],
    { protocol: 'native' },
  );
  assert.equal(result.termination, 'answer', result.error);
  assert.equal(result.prediction, 'BYD sold more cars than Tesla in 2024.');
  assert.deepEqual(
    requests.map((request) => request.status),
    [200, 200],
    'the server never refused the history',
  );

  const history = requests[1]?.messages ?? [];
  const assistant = history.find((message) => message.role === 'assistant') as
    { tool_calls?: Array<{ id: string; function: { arguments: string } }> } | undefined;
  assert.equal(assistant?.tool_calls?.[0]?.id, 'call_cut');
  assert.deepEqual(JSON.parse(assistant?.tool_calls?.[0]?.function.arguments ?? 'not json'), {});
  const observation = history.find((message) => message.role === 'tool' && message.tool_call_id === 'call_cut');
  assert.match(String(observation?.content), /not valid JSON|cut off|truncated/i);

  const stored = messages.find((message) => message.role === 'assistant' && message.toolCalls?.length);
  assert.equal(stored?.toolCalls?.[0]?.arguments, truncatedArguments, 'the transcript keeps the raw text');
});

test('reasoning streamed apart (llama-server reasoning_content, vLLM reasoning) is the thought, is in the transcript and the result, and is never sent back', async () => {
  const firstReasoning = 'The question is about 2024 sales; I should look them up.';
  const secondReasoning = 'The lookup says BYD sold more.';
  const { handle, result, messages, requests } = await run('reasoning', [
    // llama-server with a thinking template moves the <think> part into reasoning_content.
    {
      content: '<tool_call>\n{"name": "lookup", "arguments": {"query": "BYD 2024"}}\n</tool_call>',
      reasoning: firstReasoning,
      dialect: 'llama-server',
    },
    { content: '<answer>BYD</answer>', reasoning: secondReasoning, reasoningField: 'reasoning' },
  ]);
  assert.equal(result.termination, 'answer', result.error);
  assert.equal(result.prediction, 'BYD');

  // What `run` and `follow` print comes from history.
  const reader = new RunEventReader();
  const lines =
    (await handle.fetchHistory()).events
      ?.flatMap((event) => reader.read(event))
      .flatMap((event) => progressLines(event)) ?? [];
  assert.ok(lines.includes(`  thought: ${firstReasoning}`), lines.join('\n'));
  assert.ok(lines.includes(`  thought: ${secondReasoning}`), lines.join('\n'));

  assert.deepEqual(
    messages.filter((message) => message.role === 'assistant').map((message) => message.reasoning),
    [firstReasoning, secondReasoning],
  );
  assert.ok(!JSON.stringify(requests[1]?.messages).includes(firstReasoning), 'the reasoning is not sent back');

  const materialised = await materialiseResult(environment.store, result);
  const assistantContents = materialised.messages
    .filter((message) => message.role === 'assistant')
    .map((message) => message.content);
  assert.match(
    assistantContents[0] ?? '',
    /^<think>The question is about 2024 sales; I should look them up\.<\/think>\n<tool_call>/,
  );
  assert.equal(assistantContents[1], `<think>${secondReasoning}</think>\n<answer>BYD</answer>`);
}, 60_000);

describe('time to first token', () => {
  test('a server that only pings while it reads a long prompt, for longer than the heartbeat timeout, is waited for', async () => {
    const { result, requests } = await run('slow-prompt', [
      {
        ...answer('after a long prompt'),
        dialect: 'llama-server',
        promptProcessingMs: (HEARTBEAT_SECONDS + 2.5) * 1000,
        pingIntervalMs: 500,
      },
    ]);
    assert.equal(result.termination, 'answer', result.error);
    assert.equal(requests.length, 1, 'one request: it was not abandoned and retried');
    assert.equal(requests[0]?.completed, true);
  }, 60_000);

  test('no first token within REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS: the call fails with FirstTokenTimeout and is retried', async () => {
    const handle = await start('no-first-token', (_turn, request) =>
      environment.requestsOf(request.workflowId ?? '').length <= 1
        ? {
            ...answer('never sent'),
            dialect: 'llama-server',
            promptProcessingMs: (FIRST_TOKEN_SECONDS + 10) * 1000,
            pingIntervalMs: 500,
          }
        : { ...answer('second attempt'), dialect: 'llama-server' },
    );
    let lastFailureType: string | undefined;
    const deadline = Date.now() + 40_000;
    while (lastFailureType === undefined && Date.now() < deadline) {
      const pending = (await handle.describe()).raw.pendingActivities?.find(
        (activity) => activity.activityType?.name === 'callModel',
      );
      lastFailureType = pending?.lastFailure?.applicationFailureInfo?.type ?? undefined;
      if (lastFailureType === undefined) await new Promise((resolve) => setTimeout(resolve, 250));
    }
    assert.equal(lastFailureType, FailureTypes.modelFirstTokenTimeout);
    const result = (await handle.result()) as ResearchRunResult;
    assert.equal(result.termination, 'answer', result.error);
    assert.equal(result.prediction, 'second attempt');
    const requests = environment.requestsOf(handle.workflowId);
    assert.equal(requests.length, 2);
    assert.equal(requests[0]?.aborted, true, 'the silent request was abandoned');
    const waitedMs = (requests[1]?.receivedAt ?? 0) - (requests[0]?.receivedAt ?? 0);
    assert.ok(waitedMs >= FIRST_TOKEN_SECONDS * 1000, `retried after ${waitedMs} ms, before the first-token limit`);
  }, 90_000);
});
