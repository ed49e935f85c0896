import assert from 'node:assert/strict';
import { afterAll, beforeAll, beforeEach, describe, test } from '@jest/globals';
import { progressQuery } from '../../src/core/message-definitions';
import type { ChatMessage } from '../../src/core/messages';
import type { ResearchRunInput } from '../../src/core/run-input';
import type { ResearchRunResult } from '../../src/core/run-result';
import type {
  ScriptedReply,
  ScriptedRequest,
  ScriptedRequestRecord,
  WindowEndpoint,
} from '../fakes/scripted-model-server';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

// Issue 16, "a first local run answers": a model server with a small context window (4,096
// tokens, Ollama's default and a common llama-server -c). The scripted server says its window
// where the server family says it and refuses a longer prompt with llama-server's 400, counting a
// token per 4 characters. The run learns the window at its start (or from that 400), keeps its
// context under it, and its final answer call always gets a prompt that fits.

const WINDOW = 4_096;
/** What a prompt may take of a 4,096-token window with the worker's default of 10,000 output tokens: 4,096 − 1,024 (a quarter, for the reply) − 123 (3 %). */
const PROMPT_BUDGET = 2_949;
/** The most the final answer's prompt may take: 4,096 − 123 − 256 (a sixteenth, for the answer). */
const FINAL_PROMPT_LIMIT = 3_717;

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  // Each test gives the scripted server another window: asked at every run's start, not kept (issue 34's cache).
  await environment.startWorker({ REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS: '0' });
});

afterAll(async () => {
  await environment?.close();
});

beforeEach(() => {
  environment.model.setContextWindow(undefined);
});

type Replies = (turn: number, request: ScriptedRequest) => ScriptedReply;

async function run(label: string, replies: Replies, input: Partial<ResearchRunInput> = {}) {
  const workflowId = scenarios.add(runId(label), replies);
  const handle = await environment.startRun(
    { question: `Which company sold more cars in 2024 (${label})?`, ...input },
    workflowId,
  );
  const result = (await handle.result()) as ResearchRunResult;
  return {
    workflowId,
    handle,
    result,
    messages: await environment.transcript(result),
    requests: environment.requestsOf(workflowId),
  };
}

const lastText = (request: ScriptedRequest) => String(request.messages.at(-1)?.content ?? '');
const asksForFinalAnswer = (request: ScriptedRequest) => /Stop calling tools now/.test(lastText(request));
const isSummary = (request: ScriptedRequest) => request.purpose === 'summary';
/** The prompt as the scripted server counts it: a token per 4 characters of the messages' text. */
const promptTokens = (request: { messages: Array<{ content: unknown }> }) =>
  Math.ceil(request.messages.reduce((total, message) => total + String(message.content ?? '').length, 0) / 4);

/** A model that never stops researching: another big_output each turn (arguments differ, so it is not stuck); the answer when asked for it. */
const researcher =
  (characters: number, thought: (request: ScriptedRequest) => string = () => 'More.'): Replies =>
  (turn, request) => {
    if (isSummary(request)) return { content: `SUMMARY: ${turn} steps, each a text about a quick brown fox.` };
    if (asksForFinalAnswer(request)) return answer('BYD sold more cars in 2024.');
    return toolCall('big_output', { characters: characters + turn }, thought(request));
  };

const SOURCES: Record<Exclude<WindowEndpoint, 'none'>, RegExp> = {
  'llama-server': /llama-server \/props/,
  vllm: /vLLM \/v1\/models/,
  ollama: /Ollama \/api\/(ps|show)/,
};

describe.each(Object.keys(SOURCES) as Array<keyof typeof SOURCES>)(
  'a %s server says its 4,096-token window',
  (endpoint) => {
    test('the run learns it at its start, never sends a prompt past it, and ends token_limit with the final answer', async () => {
      environment.model.setContextWindow(WINDOW, endpoint);
      const probesBefore = environment.model.windowProbes.length;
      const { handle, result, messages, requests } = await run(`window-${endpoint}`, researcher(3_000));

      assert.equal(result.termination, 'token_limit', `${result.termination}: ${result.error ?? result.prediction}`);
      assert.equal(result.prediction, 'BYD sold more cars in 2024.');
      assert.equal(result.error, undefined);
      assert.equal(result.details.finalAnswerPhase, 'token_limit');
      assert.equal(result.details.contextWindow?.tokens, WINDOW);
      assert.equal(result.details.contextWindow?.promptBudget, PROMPT_BUDGET);
      assert.match(result.details.contextWindow?.source ?? '', SOURCES[endpoint]);
      assert.ok(environment.model.windowProbes.length > probesBefore, 'the server was asked');

      // No request was refused: every prompt fitted the window, the final answer's too.
      assert.deepEqual(
        requests.map((request) => request.status).filter((status) => status !== 200),
        [],
      );
      assert.ok(requests.every((request) => promptTokens(request) <= WINDOW));
      assert.ok(asksForFinalAnswer(requests.at(-1) as ScriptedRequest));
      assert.deepEqual(protocolProblems(messages), []);

      const progress = await handle.query(progressQuery);
      assert.equal(progress.contextBudget, PROMPT_BUDGET);
      assert.deepEqual(progress.contextWindow, result.details.contextWindow);
    });
  },
);

test("the final answer call's prompt is compressed until it fits the window (the loop's own compression off)", async () => {
  environment.model.setContextWindow(WINDOW);
  // Short observations until the prompt is large, then a long thought: the reply itself takes the context past the budget.
  const longThought = (request: ScriptedRequest) =>
    promptTokens(request) > 1_800 ? `Thinking hard. ${'A long train of thought. '.repeat(400)}` : 'More.';
  const { result, messages, requests } = await run('final-fit', researcher(1_500, longThought), {
    loop: { compressAtFraction: 0, keepRecentTurns: 1 },
  });

  assert.equal(result.termination, 'token_limit', `${result.termination}: ${result.error ?? result.prediction}`);
  assert.equal(result.prediction, 'BYD sold more cars in 2024.');
  assert.equal(result.error, undefined);
  // One compression, made for the final answer call: older observations stubbed (and summarised if that was not enough).
  assert.equal(result.details.compressions.length, 1);
  const compression = result.details.compressions[0];
  assert.equal(compression?.atModelCall, result.iterations);
  assert.ok((compression?.stubbedObservations ?? 0) > 0);
  assert.ok((compression?.contextTokensAfter ?? Number.POSITIVE_INFINITY) <= FINAL_PROMPT_LIMIT);

  const final = requests.at(-1) as ScriptedRequestRecord;
  assert.ok(asksForFinalAnswer(final));
  assert.equal(final.status, 200);
  assert.ok(promptTokens(final) <= FINAL_PROMPT_LIMIT, `the final prompt is ${promptTokens(final)} tokens`);
  assert.ok(requests.every((request) => request.status === 200));
  // The transcript holds what the model saw: stubs, the request for the answer last, the answer.
  assert.deepEqual(protocolProblems(messages), []);
  if (compression?.summarizedTurns)
    assert.match(messages[1]?.content ?? '', /\[Summary of the research so far[^\n]*\]\nSUMMARY: /);
  else assert.ok(messages.some((message) => message.content.includes('[Observation omitted to save context:')));
  assert.match(messages.at(-2)?.content ?? '', /You have reached the maximum context length you can handle\./);
  assert.match(messages.at(-1)?.content ?? '', /<answer>BYD sold more cars in 2024\.<\/answer>/);
});

test("a server that does not say its window: its context-length 400 names it, and the final answer is fitted to it (today's 'No answer found')", async () => {
  environment.model.setContextWindow(WINDOW, 'none');
  const { result, messages, requests } = await run('window-from-error', researcher(3_000));

  assert.equal(result.termination, 'token_limit', `${result.termination}: ${result.error ?? result.prediction}`);
  assert.equal(result.prediction, 'BYD sold more cars in 2024.');
  assert.equal(result.error, undefined);
  assert.deepEqual(result.details.contextWindow, {
    tokens: WINDOW,
    source: "the server's context-length error",
    promptBudget: PROMPT_BUDGET,
  });
  // One refusal (the loop's call past the window), then a final answer call that fits.
  const refused = requests.filter((request) => request.status === 400);
  assert.equal(refused.length, 1);
  assert.ok(promptTokens(refused[0] as ScriptedRequest) > WINDOW);
  const final = requests.at(-1) as ScriptedRequestRecord;
  assert.ok(asksForFinalAnswer(final));
  assert.equal(final.status, 200);
  assert.ok(promptTokens(final) <= FINAL_PROMPT_LIMIT, `the final prompt is ${promptTokens(final)} tokens`);
  assert.deepEqual(protocolProblems(messages), []);
});

test('only when even the question does not fit does the run end without an answer, and it says so', async () => {
  environment.model.setContextWindow(512);
  const question = `Which company sold more cars in 2024? Context: ${'The quick brown fox jumps over the lazy dog. '.repeat(70)}`;
  const { result, requests } = await run('question-too-long', researcher(100), { question });

  assert.equal(result.termination, 'token_limit');
  assert.match(
    result.prediction,
    /^No answer: even the question alone does not fit for the final answer call: the system prompt and question take about [\d,]+ tokens, and the model's context window of 512 tokens leaves at most 448 for the prompt/,
  );
  assert.equal(result.details.finalAnswerDidNotFit?.promptLimit, 448);
  assert.equal(result.error, undefined);
  assert.deepEqual(requests, [], 'no model call was made: none would have fitted');
});

test('a server that says nothing and refuses nothing: the run goes as before (no window, maxContextTokens the budget)', async () => {
  const { result, handle } = await run('no-window', (turn, request) =>
    turn === 1 && !isSummary(request) ? toolCall('lookup', { query: 'BYD' }) : answer('BYD'),
  );
  assert.equal(result.termination, 'answer');
  assert.equal(result.details.contextWindow, undefined);
  assert.equal((await handle.query(progressQuery)).contextBudget, 110_000);
  const transcript: ChatMessage[] = await environment.transcript(result);
  assert.deepEqual(protocolProblems(transcript), []);
});
