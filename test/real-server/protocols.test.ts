import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { toOpenAIMessage, toOpenAITool } from '../../activities/model/openai-messages';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { ChatMessage } from '../../src/core/messages';
import type { ProtocolName } from '../../src/core/protocols/protocol';
import { lookup } from '../fakes/test-tools';
import { protocolProblems } from '../integration/support/agent-environment';
import { readToolLog } from '../integration/support/tool-log';
import { RealServerEnvironment, type FinishedRun } from './support/real-server-environment';

// Each protocol end to end against llama.cpp's llama-server and the tiny model: the model looks
// BYD up once, reads the tool result and answers. The grammar (tags, classic) or the chat
// template's tool-call parsing (native) holds it to the protocol's format.

const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const LOOKUP_RESULT = 'Facts about BYD: BYD sold 4,272,145 vehicles in 2024; Tesla delivered 1,789,226.';

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start();
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

async function research(protocol: ProtocolName): Promise<FinishedRun> {
  return environment.run({ question: QUESTION, protocol, tools: ['lookup'], limits: { maxModelCalls: 6 } });
}

/** What llama-server counts as the prompt of each model call of a finished run (the messages before each reply). */
async function serverPromptTokens(messages: ChatMessage[], protocol: ProtocolName): Promise<number[]> {
  const replies = messages.flatMap((message, index) => (message.role === 'assistant' ? [index] : []));
  return Promise.all(
    replies.map((reply) =>
      environment.llama.promptTokens({
        messages: messages.slice(0, reply).map(toOpenAIMessage),
        ...(protocol === 'native' ? { tools: new ToolRegistry([lookup]).specs().map(toOpenAITool) } : {}),
      }),
    ),
  );
}

/** The checks every protocol's run must pass: an answer after one lookup, and usage as the server counted it. */
async function assertAnsweredAfterOneLookup(run: FinishedRun, protocol: ProtocolName): Promise<void> {
  const { handle, result, messages } = run;
  assert.equal(
    result.termination,
    'answer',
    `the run ended ${result.termination}: ${result.error ?? result.prediction}`,
  );
  assert.equal(result.iterations, 2);
  assert.equal(result.toolCalls, 1);
  assert.equal(result.details.protocol, protocol);

  const promptTokens = await serverPromptTokens(messages, protocol);
  assert.equal(promptTokens.length, 2);
  assert.equal(
    result.usage.promptTokens,
    (promptTokens[0] as number) + (promptTokens[1] as number),
    "prompt tokens are the server's counts",
  );
  assert.ok(result.usage.completionTokens > 0);
  assert.equal(result.usage.totalTokens, result.usage.promptTokens + result.usage.completionTokens);
  assert.ok(result.contextTokens > (promptTokens[1] as number));

  const tools = readToolLog(environment.toolLog, handle.workflowId);
  assert.deepEqual(
    tools.map((entry) => `${entry.tool} ${entry.event}`),
    ['lookup start', 'lookup stop'],
  );
  const description = await handle.describe();
  assert.equal(description.status.name, 'COMPLETED');
}

test('deep-research: <think>, a <tool_call>, the <tool_response>, then an <answer>', async () => {
  await environment.llama.restart({ grammar: 'deep-research.gbnf' });
  const run = await research('deep-research');
  await assertAnsweredAfterOneLookup(run, 'deep-research');
  const { result, messages } = run;
  assert.equal(result.prediction, 'The answer is above.');
  assert.deepEqual(protocolProblems(messages), []);
  assert.deepEqual(
    messages.slice(2).map((message) => [message.role, message.content]),
    [
      [
        'assistant',
        '<think>Let me check</think>\n<tool_call>\n{"name": "lookup", "arguments": {"query": "BYD"}}\n</tool_call>',
      ],
      ['user', `<tool_response>\n${LOOKUP_RESULT}\n</tool_response>`],
      ['assistant', '<think>Let me check</think>\n<answer>The answer is above.</answer>'],
    ],
  );
});

test('native: a tool call parsed by the server, a tool message with its id, then a plain answer', async () => {
  await environment.llama.restart({ grammar: undefined });
  const run = await research('native');
  await assertAnsweredAfterOneLookup(run, 'native');
  const { result, messages } = run;
  assert.equal(result.prediction, 'The answer is above.');
  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  const call = messages[2]?.toolCalls?.[0];
  assert.equal(messages[2]?.toolCalls?.length, 1);
  assert.equal(call?.name, 'lookup');
  assert.deepEqual(JSON.parse(call?.arguments ?? ''), { query: 'BYD' });
  assert.equal(messages[3]?.toolCallId, call?.id);
  assert.equal(messages[3]?.content, LOOKUP_RESULT);
  assert.equal(messages[4]?.content, 'The answer is above.');
});

test('classic: Thought/Action/Action Input, an Observation, then a Final Answer', async () => {
  await environment.llama.restart({ grammar: 'classic.gbnf' });
  const run = await research('classic');
  await assertAnsweredAfterOneLookup(run, 'classic');
  const { result, messages } = run;
  assert.equal(result.prediction, 'The answer is above.');
  assert.deepEqual(
    messages.slice(2).map((message) => [message.role, message.content]),
    [
      ['assistant', 'Thought: The answer is above.\nAction: lookup\nAction Input: {"query": "BYD"}'],
      ['user', `Observation: ${LOOKUP_RESULT}`],
      ['assistant', 'Thought: The answer is above.\nFinal Answer: The answer is above.'],
    ],
  );
});
