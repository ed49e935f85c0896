import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { RealServerEnvironment, type FinishedRun } from './support/real-server-environment';
import { realServerToolsEnvironment } from './support/real-server-tools';
import { modelCallOutputs } from './support/run-history';

// The same research run through each model API that llama-server serves (issue 31): Chat
// Completions (`/v1/chat/completions`), Anthropic's Messages API (`/v1/messages`, with the
// request's cache breakpoints) and OpenAI's Responses API (`/v1/responses`, stateless). The tiny
// model looks BYD up natively once, reads the result and answers; each API ends the same way. A
// truncated answer (max_tokens, incomplete) is refused the same way, and the thinking of a
// thinking template is the thought through each.

const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const LOOKUP_RESULT = 'Facts about BYD: BYD sold 4,272,145 vehicles in 2024; Tesla delivered 1,789,226.';
/** A lookup as usual, but every answer at least 300 characters: cut at 80 output tokens (truncated-answer.test.ts). */
const LONG_ANSWERS = [
  'root      ::= "<think>" thought "</think>\\n" ( tool-call | answer )',
  'thought   ::= [A-Za-z0-9 ,.]{1,40}',
  'tool-call ::= "<tool_call>\\n{\\"name\\": \\"lookup\\", \\"arguments\\": {\\"query\\": \\"" query "\\"}}\\n</tool_call>"',
  'query     ::= [A-Za-z0-9 ]{1,10}',
  'answer    ::= "<answer>" [A-Za-z0-9 ,.]{300,400} "</answer>"',
].join('\n');

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start();
});

afterAll(async () => {
  await environment?.close();
});

/** Each API's worker environment against this llama-server. */
const APIS = {
  'openai-chat': () => ({}),
  'anthropic-messages': () => ({ ANTHROPIC_BASE_URL: environment.llama.origin, ANTHROPIC_API_KEY: 'not-needed' }),
  'openai-responses': () => ({}),
} as const;
type Api = keyof typeof APIS;

/** A run with a worker speaking `api` (stopped after it, so the next test's worker takes the next run). */
async function researchThrough(
  api: Api,
  input: Partial<Parameters<RealServerEnvironment['run']>[0]> = {},
  workerEnvironment: Record<string, string> = {},
): Promise<FinishedRun> {
  // The model's name as llama-server now serves it (a restart with another model renames it).
  const worker = await environment.startWorker({
    REACT_AGENT_MODEL_API: api,
    REACT_AGENT_MODEL: environment.llama.modelName,
    ...APIS[api](),
    ...workerEnvironment,
  });
  try {
    return await environment.run({
      question: QUESTION,
      protocol: 'native',
      tools: ['lookup'],
      limits: { maxModelCalls: 6 },
      ...input,
    });
  } finally {
    await worker.stop();
  }
}

function assertAnsweredAfterOneLookup({ result, messages }: FinishedRun): void {
  assert.equal(result.termination, 'answer', `the run ended ${result.termination}: ${result.error ?? ''}`);
  assert.equal(result.prediction, 'The answer is above.');
  assert.equal(result.toolCalls, 1);
  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'assistant'],
  );
  const call = messages[2]?.toolCalls?.[0];
  assert.equal(call?.name, 'lookup');
  assert.deepEqual(JSON.parse(call?.arguments ?? ''), { query: 'BYD' });
  assert.equal(messages[3]?.toolCallId, call?.id);
  assert.equal(messages[3]?.content, LOOKUP_RESULT);
  assert.ok(result.usage.promptTokens > 0 && result.usage.completionTokens > 0, JSON.stringify(result.usage));
}

describe.each(Object.keys(APIS) as Api[])('%s', (api) => {
  test('a native lookup, then the answer', async () => {
    await environment.llama.restart({ model: 'tiny-chatml', grammar: undefined });
    assertAnsweredAfterOneLookup(await researchThrough(api));
  }, 180_000);

  test('answers cut off at the output limit are finish reason length and not taken for the answer', async () => {
    await environment.llama.restart({ model: 'tiny-chatml', grammar: LONG_ANSWERS });
    const { handle, result } = await researchThrough(api, {
      protocol: 'deep-research',
      model: { maxOutputTokens: 80 },
      limits: { maxModelCalls: 12 },
    });
    const calls = await modelCallOutputs(handle);
    assert.equal(calls[0]?.finishReason, 'stop');
    assert.ok(
      calls.slice(1).every((call) => call.finishReason === 'length'),
      calls.map((call) => call.finishReason).join(),
    );
    assert.equal(result.termination, 'token_limit', `ended ${result.termination}: ${result.prediction}`);
    assert.equal(result.details.truncatedAnswer, true);
  }, 180_000);

  test("a lookup larger than the server's context ends token_limit through the final answer, not error", async () => {
    await environment.llama.restart({ model: 'tiny-chatml', grammar: undefined, contextSize: 1024 });
    try {
      const { result } = await researchThrough(api, {}, realServerToolsEnvironment({ lookupCharacters: 3_000 }));
      assert.equal(result.termination, 'token_limit', `ended ${result.termination}: ${result.error ?? ''}`);
      assert.equal(result.error, undefined);
      assert.ok(result.prediction.length > 0);
    } finally {
      await environment.llama.restart({ contextSize: 8192 });
    }
  }, 180_000);

  test("a thinking template's thinking is each turn's thought and stays on the stored reply", async () => {
    await environment.llama.restart({ model: 'tiny-thinking', reasoningFormat: 'deepseek', grammar: undefined });
    const { handle, result, messages } = await researchThrough(api);
    assert.equal(result.termination, 'answer', `ended ${result.termination}: ${result.error ?? result.prediction}`);
    const calls = await modelCallOutputs(handle);
    assert.deepEqual(
      calls.map((call) => call.turn.thought),
      ['Let me check', 'Let me check'],
    );
    assert.deepEqual(
      messages.filter((message) => message.role === 'assistant').map((message) => message.reasoning),
      ['Let me check', 'Let me check'],
    );
  }, 180_000);
});
