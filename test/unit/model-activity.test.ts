import assert from 'node:assert/strict';
import { chatModelOver } from '../fakes/fake-chat-completions';
import { describe, test } from '@jest/globals';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import OpenAI from 'openai';
import { loadConversation, loadMessageReferences, putConversation, putMessage } from '../../src/storage/conversation';
import { createCallModel, type ModelDefaults } from '../../activities/model-activity';
import { MODEL_CALL_LABEL, WORKFLOW_ID_LABEL } from '../../activities/model/chat-request-labels';
import { labelHeader } from '../../activities/model/openai-chat-model';
import { characterEstimateCounter, type TokenCounter } from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { CallModelInput, CallModelOutput } from '../../src/core/activity-contracts';
import { FailureTypes } from '../../src/core/failure-types';
import type { ChatMessage } from '../../src/core/messages';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

// ---------------------------------------------------------------------------------------------
// Fakes

interface RecordedCall {
  params: {
    model: string;
    messages: ChatMessage[];
    stream: boolean;
    stream_options?: { include_usage?: boolean };
    stop?: string[];
    temperature?: number;
    top_p?: number;
    max_tokens?: number;
    presence_penalty?: number;
  };
  options: { signal?: AbortSignal; headers?: Record<string, string> };
}

type Responder = (call: RecordedCall) => AsyncIterable<unknown> | Promise<AsyncIterable<unknown>>;

/** An `openai` stand-in with only `chat.completions.create`; records what it was given. */
function fakeOpenAI(responder: Responder): { openai: OpenAI; calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const create = async (params: RecordedCall['params'], options: RecordedCall['options']) => {
    const call = { params, options };
    calls.push(call);
    return responder(call);
  };
  return { openai: { chat: { completions: { create } } } as unknown as OpenAI, calls };
}

function contentChunk(content: string | undefined, finishReason: string | null = null) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'fake',
    choices: [
      { index: 0, delta: content === undefined ? {} : { role: 'assistant', content }, finish_reason: finishReason },
    ],
  };
}

function usageChunk(promptTokens: number, completionTokens: number) {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 0,
    model: 'fake',
    choices: [],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: completionTokens,
      total_tokens: promptTokens + completionTokens,
    },
  };
}

/** Chunks of a streamed reply: the text in pieces of `pieceSize`, a finish chunk, an optional usage chunk. */
function replyChunks(
  text: string,
  options: { pieceSize?: number; finishReason?: string | null; usage?: [number, number] } = {},
): unknown[] {
  const pieceSize = options.pieceSize ?? 16;
  const chunks: unknown[] = [];
  for (let index = 0; index < text.length; index += pieceSize)
    chunks.push(contentChunk(text.slice(index, index + pieceSize)));
  const finishReason = options.finishReason === undefined ? 'stop' : options.finishReason;
  if (finishReason !== null) chunks.push(contentChunk(undefined, finishReason));
  if (options.usage) chunks.push(usageChunk(...options.usage));
  return chunks;
}

async function* streamOf(chunks: unknown[], delayMs = 0): AsyncGenerator<unknown> {
  for (const chunk of chunks) {
    if (delayMs) await new Promise((resolve) => setTimeout(resolve, delayMs));
    yield chunk;
  }
}

/** Resolves (quietly) or rejects (like the openai client) once `signal` aborts. */
function untilAborted(signal: AbortSignal | undefined, endQuietly = false): Promise<void> {
  assert.ok(signal, 'the request must carry an AbortSignal');
  return new Promise<void>((resolve, reject) => {
    const onAbort = () => (endQuietly ? resolve() : reject(new OpenAI.APIUserAbortError()));
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Yields `chunks`, then sends nothing more until the request is aborted. */
async function* stallingStream(
  chunks: unknown[],
  signal: AbortSignal | undefined,
  endQuietly = false,
): AsyncGenerator<unknown> {
  for (const chunk of chunks) yield chunk;
  await untilAborted(signal, endQuietly);
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

/** `env.run` with the activity's own argument and result types. */
function runIn<A extends unknown[], R>(
  env: MockActivityEnvironment,
  activity: (...args: A) => Promise<R>,
  ...args: A
): Promise<R> {
  return env.run(activity, ...args) as Promise<R>;
}

const quietLogger = new DefaultLogger('ERROR', () => undefined);

function environment(heartbeatTimeoutMs = 5_000) {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs }, { logger: quietLogger });
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return { env, heartbeats };
}

// ---------------------------------------------------------------------------------------------
// Fixtures

const NO_TOOLS = new ToolRegistry();
const MODEL_DEFAULTS: ModelDefaults = { model: 'default-model', temperature: 0.6, topP: 0.95, maxOutputTokens: 1024 };
const SYSTEM: ChatMessage = { role: 'system', content: 'You are a test assistant.' };
const QUESTION: ChatMessage = { role: 'user', content: 'What is two plus two?' };
const TOOL_CALL_REPLY =
  '<think>I should look it up.</think>\n<tool_call>\n{"name": "search", "arguments": {"query": ["2+2"]}}\n</tool_call>';
const ANSWER_REPLY = '<think>Easy.</think>\n<answer>4</answer>';

async function startedConversation() {
  const store = new MemoryTranscriptStore();
  const conversation = await putConversation(store, [
    await putMessage(store, SYSTEM),
    await putMessage(store, QUESTION),
  ]);
  return { store, conversation };
}

function callInput(conversation: string, overrides: Partial<CallModelInput> = {}): CallModelInput {
  return {
    workflowId: 'wf-model-test',
    modelCall: 3,
    conversation,
    append: [],
    model: { model: 'qwen-test' },
    protocol: 'deep-research',
    tools: [],
    ...overrides,
  };
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  assert.fail('expected the activity to reject');
}

async function applicationFailure(promise: Promise<unknown>): Promise<ApplicationFailure> {
  const error = await rejection(promise);
  assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(error)}`);
  return error;
}

// ---------------------------------------------------------------------------------------------

describe('callModel', () => {
  test('composes the observations (resolving refs), appends them before the call, and sends the whole conversation in order', async () => {
    const { store, conversation } = await startedConversation();
    const toolOutput = await store.putText('2+2 is 4 according to the calculator.');
    const { openai, calls } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY)));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const { env } = environment();

    const output = await runIn(
      env,
      callModel,
      callInput(conversation, {
        append: [
          { role: 'user', parts: [{ text: '<tool_response>\n' }, { ref: toolOutput }, { text: '\n</tool_response>' }] },
        ],
      }),
    );

    const observation: ChatMessage = {
      role: 'user',
      content: '<tool_response>\n2+2 is 4 according to the calculator.\n</tool_response>',
    };
    assert.equal(calls.length, 1);
    assert.deepEqual(calls[0]?.params.messages, [SYSTEM, QUESTION, observation]);
    assert.deepEqual(await loadConversation(store, output.conversation), [
      SYSTEM,
      QUESTION,
      observation,
      { role: 'assistant', content: ANSWER_REPLY },
    ]);
    assert.equal((await loadMessageReferences(store, conversation)).length, 2, 'the earlier conversation is unchanged');
  });

  test('a store that cannot take the observations fails the attempt before the model is called, and stores no reply', async () => {
    const { store, conversation } = await startedConversation();
    const toolOutput = await store.putText('2+2 is 4 according to the calculator.');
    const failingPuts = Object.assign(Object.create(store) as MemoryTranscriptStore, {
      putText: async () => Promise.reject(new Error('disk full')),
    });
    const { openai, calls } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY)));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store: failingPuts,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const blobsBefore = store.blobs.size;

    const error = await rejection(
      runIn(
        environment().env,
        callModel,
        callInput(conversation, { append: [{ role: 'user', parts: [{ ref: toolOutput }] }] }),
      ),
    );

    assert.match(String(error), /disk full/);
    assert.equal(calls.length, 0, 'no model call is made for a prompt that is not stored');
    assert.equal(store.blobs.size, blobsBefore);
  });

  test('a store that does not name texts by their content address is refused with an error saying so', async () => {
    const { store, conversation } = await startedConversation();
    const otherName = (reference: string) => reference.slice(0, -1) + (reference.endsWith('0') ? '1' : '0');
    const renaming = Object.assign(Object.create(store) as MemoryTranscriptStore, {
      putText: async (text: string) => otherName(await store.putText(text)),
    });
    const { openai } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY)));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store: renaming,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });

    const error = await rejection(
      runIn(
        environment().env,
        callModel,
        callInput(conversation, { append: [{ role: 'user', parts: [{ text: 'an injected message' }] }] }),
      ),
    );

    assert.match(String(error), /content address/);
    assert.match(String(error), /SHA-256/);
  });

  test('without observations the stored conversation is sent as it is', async () => {
    const { store, conversation } = await startedConversation();
    const { openai, calls } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY)));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const output = await runIn(environment().env, callModel, callInput(conversation));
    assert.deepEqual(calls[0]?.params.messages, [SYSTEM, QUESTION]);
    assert.deepEqual(await loadConversation(store, output.conversation), [
      SYSTEM,
      QUESTION,
      { role: 'assistant', content: ANSWER_REPLY },
    ]);
  });

  test('the request streams with usage, the protocol stop sequences, worker defaults and correlation headers', async () => {
    const { store, conversation } = await startedConversation();
    const { openai, calls } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY)));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    await runIn(environment().env, callModel, callInput(conversation, { workflowId: 'wf-headers', modelCall: 7 }));

    const call = calls[0];
    assert.ok(call);
    assert.equal(call.params.model, 'qwen-test');
    assert.equal(call.params.stream, true);
    assert.deepEqual(call.params.stream_options, { include_usage: true });
    assert.deepEqual(call.params.stop, deepResearchProtocol.stop);
    assert.ok(call.params.stop?.includes('<tool_response>'));
    assert.equal(call.params.temperature, 0.6);
    assert.equal(call.params.top_p, 0.95);
    assert.equal(call.params.max_tokens, 1024);
    assert.ok(!('presence_penalty' in call.params), 'presence_penalty is only sent when the run sets it');
    assert.equal(call.options.headers?.[labelHeader(WORKFLOW_ID_LABEL)], 'wf-headers');
    assert.equal(call.options.headers?.[labelHeader(MODEL_CALL_LABEL)], '7');
    assert.equal(labelHeader(WORKFLOW_ID_LABEL), 'x-react-agent-workflow-id');
    assert.equal(labelHeader(MODEL_CALL_LABEL), 'x-react-agent-model-call');
    assert.ok(call.options.signal instanceof AbortSignal);
    assert.equal(call.options.signal.aborted, false);
  });

  test("the run's sampling settings override the worker's", async () => {
    const { store, conversation } = await startedConversation();
    const { openai, calls } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY)));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    await runIn(
      environment().env,
      callModel,
      callInput(conversation, {
        model: { model: 'other-model', temperature: 0, topP: 0.5, maxOutputTokens: 64, presencePenalty: 1.1 },
      }),
    );
    const params = calls[0]?.params;
    assert.equal(params?.model, 'other-model');
    assert.equal(params?.temperature, 0, 'a temperature of 0 is kept, not replaced by the default');
    assert.equal(params?.top_p, 0.5);
    assert.equal(params?.max_tokens, 64);
    assert.equal(params?.presence_penalty, 1.1);
  });

  test('cuts a hallucinated <tool_response> before storing, and returns the parsed turn', async () => {
    const { store, conversation } = await startedConversation();
    const raw = `${TOOL_CALL_REPLY}\n<tool_response>\nmade-up search results\n</tool_response>`;
    const { openai } = fakeOpenAI(() => streamOf(replyChunks(raw, { pieceSize: 7 })));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const output: CallModelOutput = await runIn(environment().env, callModel, callInput(conversation));

    const stored = JSON.parse(await store.getText(output.assistant.ref)) as ChatMessage;
    assert.deepEqual(stored, { role: 'assistant', content: TOOL_CALL_REPLY });
    assert.ok(
      ![...store.blobs.values()].some((text) => text.includes('made-up search results')),
      'the hallucinated observation is never stored',
    );
    assert.equal(output.assistant.characters, TOOL_CALL_REPLY.length);
    assert.match(output.assistant.preview, /^<think>I should look it up\.<\/think> <tool_call>/);
    assert.equal(output.finishReason, 'stop');
    assert.deepEqual(output.turn, {
      thought: 'I should look it up.',
      toolCalls: [{ id: 'call-3-1', name: 'search', arguments: { query: ['2+2'] } }],
    });
    const last = (await loadConversation(store, output.conversation)).at(-1);
    assert.deepEqual(last, { role: 'assistant', content: TOOL_CALL_REPLY });
  });

  test('an answer turn is parsed with its answer', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY, { finishReason: 'length' })));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const output = await runIn(environment().env, callModel, callInput(conversation));
    assert.equal(output.turn.answer, '4');
    assert.equal(output.turn.thought, 'Easy.');
    assert.deepEqual(output.turn.toolCalls, []);
    assert.equal(output.finishReason, 'length');
  });

  test("usage comes from the server's usage chunk", async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY, { usage: [1234, 56] })));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const output = await runIn(environment().env, callModel, callInput(conversation));
    assert.deepEqual(output.usage, { promptTokens: 1234, completionTokens: 56, totalTokens: 1290 });
    assert.equal(output.contextTokens, 1290);
  });

  test('usage is estimated with the token counter when the server sends none', async () => {
    const { store, conversation } = await startedConversation();
    const counted: string[] = [];
    const lengthCounter: TokenCounter = { count: (text) => (counted.push(text), text.length) };
    const { openai } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY)));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: lengthCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const output = await runIn(environment().env, callModel, callInput(conversation));
    // The prompt is our estimate of it (each message once, 4 tokens a message for the template), counted before the reply, not again after.
    const prompt = SYSTEM.content.length + QUESTION.content.length + 2 * 4;
    assert.deepEqual(counted.slice(0, 3), [SYSTEM.content, QUESTION.content, ANSWER_REPLY]);
    assert.equal(counted.filter((text) => text === SYSTEM.content).length, 1, 'the prompt is counted once');
    assert.equal(output.estimatedPromptTokens, prompt);
    assert.deepEqual(output.usage, {
      promptTokens: prompt,
      completionTokens: ANSWER_REPLY.length,
      totalTokens: prompt + ANSWER_REPLY.length,
    });
    assert.equal(output.contextTokens, prompt + ANSWER_REPLY.length);
  });

  test('heartbeats at its first chunk and after its last, at most every 250 ms between, with the progress so far', async () => {
    const { store, conversation } = await startedConversation();
    const chunks = replyChunks(ANSWER_REPLY, { pieceSize: 10, usage: [10, 10] });
    const { openai } = fakeOpenAI(() => streamOf(chunks));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const { env, heartbeats } = environment();
    const input = callInput(conversation);
    await runIn(env, callModel, input);
    // First, before the request: the call's number (and its live text URL, when the worker serves it).
    // Then the first chunk's; the chunks that follow within 250 ms are held back, the last one's is sent.
    assert.ok(chunks.length > 3);
    assert.ok(heartbeats.length >= 3 && heartbeats.length <= chunks.length, `${heartbeats.length} heartbeats`);
    assert.deepEqual(heartbeats[0], {
      modelCall: input.modelCall,
      chunks: 0,
      characters: 0,
      waitingForFirstTokenSeconds: 0,
    });
    assert.deepEqual(heartbeats[1], {
      modelCall: input.modelCall,
      chunks: 1,
      characters: 10,
      streamed: ANSWER_REPLY.slice(0, 10),
      streamedCharacters: 10,
    });
    assert.deepEqual(heartbeats.at(-1), {
      modelCall: input.modelCall,
      chunks: chunks.length,
      characters: ANSWER_REPLY.length,
      streamed: ANSWER_REPLY,
      streamedCharacters: ANSWER_REPLY.length,
    });
  });

  test('with the worker’s live text: the URL in the first heartbeat and every later one, each piece pushed with its kind, the end said', async () => {
    const { store, conversation } = await startedConversation();
    const chunks = replyChunks(ANSWER_REPLY, { pieceSize: 10, usage: [10, 10] });
    const { openai } = fakeOpenAI(() => streamOf(chunks));
    const pushed: Array<{ kind: string; text: string }> = [];
    const ends: string[] = [];
    const opened: number[] = [];
    const url = `http://127.0.0.1:1/calls/${'a'.repeat(32)}`;
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
      liveText: {
        open: (call) => {
          opened.push(call);
          return {
            pointer: { url },
            add: (kind, text) => pushed.push({ kind, text }),
            end: (outcome) => ends.push(outcome),
          };
        },
      },
    });
    const { env, heartbeats } = environment();
    const input = callInput(conversation);
    await runIn(env, callModel, input);
    assert.deepEqual(opened, [input.modelCall]);
    assert.deepEqual(heartbeats[0], {
      modelCall: input.modelCall,
      liveText: { url },
      chunks: 0,
      characters: 0,
      waitingForFirstTokenSeconds: 0,
    });
    assert.ok(heartbeats.every((details) => (details as { liveText?: { url: string } }).liveText?.url === url));
    assert.equal(pushed.map((piece) => piece.text).join(''), ANSWER_REPLY);
    assert.ok(pushed.every((piece) => piece.kind === 'content'));
    assert.deepEqual(ends, ['completed']);

    // A failed attempt ends its live text as failed.
    const failing = createCallModel({
      chatModel: chatModelOver(fakeOpenAI(() => Promise.reject(new Error('connection reset'))).openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
      liveText: { open: () => ({ pointer: { url }, add: () => undefined, end: (outcome) => ends.push(outcome) }) },
    });
    await assert.rejects(runIn(environment().env, failing, callInput(conversation)));
    assert.deepEqual(ends, ['completed', 'failed']);
  });

  test('the heartbeat details carry only the last 2,000 characters of the streamed text, and how many there were', async () => {
    const { store, conversation } = await startedConversation();
    const long = `<think>${'a long thought, '.repeat(300)}</think>\n<answer>done</answer>`;
    const chunks = replyChunks(long, { pieceSize: 50, usage: [10, 10] });
    const { openai } = fakeOpenAI(() => streamOf(chunks));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const { env, heartbeats } = environment();
    await runIn(env, callModel, callInput(conversation));
    const last = heartbeats.at(-1) as { streamed: string; streamedCharacters: number };
    assert.equal(last.streamedCharacters, long.length);
    assert.equal(last.streamed, long.slice(-2_000));
    assert.ok(JSON.stringify(last).length < 2_200, 'the details stay small');
  });

  test('reasoning streamed apart and native tool calls are in the streamed text too, each part on a line of its own', async () => {
    const { store, conversation } = await startedConversation();
    const delta = (fields: Record<string, unknown>, finishReason: string | null = null) => ({
      ...contentChunk(undefined, finishReason),
      choices: [{ index: 0, delta: fields, finish_reason: finishReason }],
    });
    const chunks = [
      delta({ reasoning_content: 'Think ' }),
      delta({ reasoning_content: 'first.' }),
      delta({ content: 'Now I call.' }),
      delta({ tool_calls: [{ index: 0, id: 'c1', type: 'function', function: { name: 'lookup', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"q":1}' } }] }),
      delta(
        { tool_calls: [{ index: 1, id: 'c2', type: 'function', function: { name: 'visit', arguments: '{}' } }] },
        'tool_calls',
      ),
    ];
    const { openai } = fakeOpenAI(() => streamOf(chunks));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const { env, heartbeats } = environment();
    await runIn(env, callModel, callInput(conversation));
    const last = heartbeats.at(-1) as { streamed: string; streamedCharacters: number };
    assert.equal(last.streamed, 'Think first.\nNow I call.\nlookup{"q":1}\nvisit{}');
    assert.equal(last.streamedCharacters, last.streamed.length);
  });

  test('a stream that ends without a finish reason fails retryably with BadResponse and stores no reply', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() => streamOf(replyChunks(ANSWER_REPLY, { finishReason: null })));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const storedBefore = store.blobs.size;
    const failure = await applicationFailure(runIn(environment().env, callModel, callInput(conversation)));
    assert.equal(failure.type, FailureTypes.modelBadResponse);
    assert.equal(failure.type, 'ReactAgent.Model.BadResponse');
    assert.equal(failure.nonRetryable, false);
    assert.match(failure.message, /without a finish reason/);
    assert.equal(store.blobs.size, storedBefore, 'nothing is stored for a broken reply');
  });

  test('a stream that stalls past the heartbeat timeout is aborted and fails retryably with BadResponse', async () => {
    const { store, conversation } = await startedConversation();
    const { openai, calls } = fakeOpenAI(({ options }) =>
      stallingStream(replyChunks('<think>partial', { finishReason: null, pieceSize: 7 }), options.signal),
    );
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const { env, heartbeats } = environment(150);
    const started = Date.now();
    const failure = await applicationFailure(runIn(env, callModel, callInput(conversation)));
    const elapsed = Date.now() - started;
    assert.equal(failure.type, FailureTypes.modelBadResponse);
    assert.equal(failure.nonRetryable, false);
    assert.match(failure.message, /sent nothing for 0.15 s \(its stall limit\)/);
    assert.match(failure.message, /after 2 chunks/);
    assert.equal(calls[0]?.options.signal?.aborted, true, 'the request was aborted');
    // The opening heartbeat, one per chunk, then the request's own heartbeats while it stayed open:
    // the stall is ended by the activity itself, not by Temporal's heartbeat timeout.
    assert.deepEqual(
      heartbeats.slice(1, 3).map((details) => {
        const { chunks, characters } = details as { chunks: number; characters: number };
        return { chunks, characters };
      }),
      [
        { chunks: 1, characters: 7 },
        { chunks: 2, characters: 14 },
      ],
    );
    assert.ok(heartbeats.slice(3).every((details) => (details as { chunks: number }).chunks === 2));
    assert.ok(elapsed >= 140, `abandoned after ${elapsed} ms, before the 150 ms heartbeat timeout`);
    assert.ok(elapsed < 2_000, `took ${elapsed} ms to abandon the stream`);
  });

  test('a stalled stream that ends quietly when aborted is still reported as stalled', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(({ options }) => stallingStream([contentChunk('<think>')], options.signal, true));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const failure = await applicationFailure(runIn(environment(100).env, callModel, callInput(conversation)));
    assert.equal(failure.type, FailureTypes.modelBadResponse);
    assert.match(failure.message, /its stall limit/);
    assert.match(failure.message, /after 1 chunks/);
  });

  test('a request that never gets a response is abandoned at the first-token limit, not the heartbeat timeout', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(async ({ options }) => {
      await untilAborted(options.signal);
      return streamOf([]);
    });
    const modelDefaults = { ...MODEL_DEFAULTS, firstTokenSeconds: 0.4 };
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults,
      tools: NO_TOOLS,
    });
    const started = Date.now();
    const failure = await applicationFailure(runIn(environment(100).env, callModel, callInput(conversation)));
    assert.equal(failure.type, FailureTypes.modelFirstTokenTimeout);
    assert.equal(failure.nonRetryable, false);
    assert.match(failure.message, /REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS/);
    assert.ok(Date.now() - started >= 380, 'waited past the 100 ms heartbeat timeout, up to the first-token limit');
  });

  test('a slow stream whose chunks come within the heartbeat timeout is not abandoned', async () => {
    const { store, conversation } = await startedConversation();
    const chunks = replyChunks(ANSWER_REPLY, { pieceSize: 12 }); // 4 chunks, 60 ms apart: 240 ms in all
    const { openai } = fakeOpenAI(() => streamOf(chunks, 60));
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const output = await runIn(environment(150).env, callModel, callInput(conversation));
    assert.equal(output.turn.answer, '4');
  });

  test('cancelling the activity aborts the request and the activity rejects with a cancellation', async () => {
    const { store, conversation } = await startedConversation();
    const firstChunkSent = deferred();
    const { openai, calls } = fakeOpenAI(({ options }) =>
      (async function* () {
        yield contentChunk('<think>');
        firstChunkSent.resolve();
        await untilAborted(options.signal);
      })(),
    );
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const { env } = environment();
    const running = rejection(runIn(env, callModel, callInput(conversation)));
    await firstChunkSent.promise;
    assert.equal(calls[0]?.options.signal?.aborted, false);
    env.cancel();
    const error = await running;
    assert.equal(calls[0]?.options.signal?.aborted, true, 'the request signal follows the activity cancellation');
    assert.ok(error instanceof CancelledFailure, `expected a CancelledFailure, got ${String(error)}`);
    assert.ok(!(error instanceof ApplicationFailure));
  });

  test('errors from create() are classified: 401 is not retried', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() => {
      throw OpenAI.APIError.generate(
        401,
        { error: { message: 'Incorrect API key provided' } },
        undefined,
        new Headers(),
      );
    });
    const callModel = createCallModel({
      chatModel: chatModelOver(openai, 'http://model.invalid/v1'),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const failure = await applicationFailure(runIn(environment().env, callModel, callInput(conversation)));
    assert.equal(failure.type, FailureTypes.modelRequestRejected);
    assert.equal(failure.nonRetryable, true);
    assert.match(failure.message, /OPENAI_API_KEY/);
    assert.match(failure.message, /http:\/\/model\.invalid\/v1/, 'names the configured endpoint');
  });

  test('errors from create() are classified: context length and rate limits', async () => {
    const { store, conversation } = await startedConversation();
    const errors = [
      OpenAI.APIError.generate(
        400,
        { error: { message: 'too long', code: 'context_length_exceeded' } },
        undefined,
        new Headers(),
      ),
      OpenAI.APIError.generate(
        429,
        { error: { message: 'slow down' } },
        undefined,
        new Headers({ 'retry-after': '3' }),
      ),
    ];
    const { openai } = fakeOpenAI(() => {
      throw errors.shift();
    });
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const contextLength = await applicationFailure(runIn(environment().env, callModel, callInput(conversation)));
    assert.equal(contextLength.type, FailureTypes.modelContextLengthExceeded);
    assert.equal(contextLength.nonRetryable, true);
    const rateLimited = await applicationFailure(runIn(environment().env, callModel, callInput(conversation)));
    assert.equal(rateLimited.type, FailureTypes.modelRateLimited);
    assert.equal(rateLimited.nextRetryDelay, 3000);
    assert.match(rateLimited.message, /\(429\)/);
  });

  test('an error in the middle of the stream is classified (connection lost → Unreachable, retryable)', async () => {
    const { store, conversation } = await startedConversation();
    const { openai } = fakeOpenAI(() =>
      (async function* () {
        yield contentChunk('<think>');
        throw new OpenAI.APIConnectionError({ message: 'Connection error.', cause: new Error('socket hang up') });
      })(),
    );
    const callModel = createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: MODEL_DEFAULTS,
      tools: NO_TOOLS,
    });
    const failure = await applicationFailure(runIn(environment().env, callModel, callInput(conversation)));
    assert.equal(failure.type, FailureTypes.modelUnreachable);
    assert.equal(failure.nonRetryable, false);
    assert.match(failure.message, /OPENAI_BASE_URL/);
  });
});
