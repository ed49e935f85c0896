import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { loadConversation, putConversation, putMessage } from '../../src/storage/conversation';
import { createCallModel, type ModelDefaults } from '../../activities/model-activity';
import { characterEstimateCounter } from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { CallModelInput, CallModelOutput } from '../../src/core/activity-contracts';
import type { ProtocolName } from '../../src/core/protocols';
import { deltaChunk, fakeOpenAI, streamOf, usageChunk, chatModelOver } from '../fakes/fake-chat-completions';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const MODEL_DEFAULTS: ModelDefaults = { model: 'default-model', temperature: 0.6, topP: 0.95, maxOutputTokens: 1024 };
const REASONING = 'The user asks for 2+2. That is 4.';

/** A llama-server stream (role chunk with content null, reasoning_content pieces, content, finish, usage with `choices: []`). */
function llamaServerStream(
  reasoning: string,
  content: string,
  finishReason = 'stop',
  field: 'reasoning_content' | 'reasoning' = 'reasoning_content',
) {
  const pieces = reasoning.match(/.{1,8}/gs) ?? [];
  return [
    deltaChunk({ role: 'assistant', content: null }),
    ...pieces.map((piece) => deltaChunk({ [field]: piece })),
    ...(content ? [deltaChunk({ content })] : []),
    deltaChunk({}, finishReason),
    usageChunk(40, 25),
  ];
}

async function call(
  chunks: unknown[],
  protocol: ProtocolName = 'deep-research',
  history: Array<{ role: 'assistant' | 'user'; content: string; reasoning?: string }> = [],
) {
  const store = new MemoryTranscriptStore();
  const references = [
    await putMessage(store, { role: 'system', content: 'Be brief.' }),
    await putMessage(store, { role: 'user', content: 'What is 2+2?' }),
  ];
  for (const message of history) references.push(await putMessage(store, message));
  const conversation = await putConversation(store, references);
  const { openai, calls } = fakeOpenAI(() => streamOf(chunks));
  const callModel = createCallModel({
    chatModel: chatModelOver(openai),
    store,
    tokenCounter: characterEstimateCounter,
    modelDefaults: MODEL_DEFAULTS,
    tools: new ToolRegistry(),
  });
  const env = new MockActivityEnvironment(
    { heartbeatTimeoutMs: 5_000 },
    { logger: new DefaultLogger('ERROR', () => undefined) },
  );
  const input: CallModelInput = {
    workflowId: 'wf-reasoning',
    modelCall: 2,
    conversation,
    append: [],
    model: { model: 'm' },
    protocol,
    tools: [],
  };
  const output = (await env.run(callModel, input)) as CallModelOutput;
  const transcript = await loadConversation(store, output.conversation);
  return { output, calls, stored: transcript.at(-1) };
}

describe('reasoning streamed apart from the content is kept', () => {
  test('llama-server / DeepSeek `reasoning_content`: the thought of the turn, and the stored assistant message', async () => {
    const { output, stored } = await call(llamaServerStream(REASONING, '<answer>4</answer>'));
    assert.equal(output.turn.answer, '4');
    assert.equal(output.turn.thought, REASONING);
    assert.equal(stored?.reasoning, REASONING);
    assert.equal(stored?.content, '<answer>4</answer>');
  });

  test('vLLM / Ollama `reasoning` is read too', async () => {
    const { output, stored } = await call(llamaServerStream(REASONING, 'It is 4.', 'stop', 'reasoning'), 'native');
    assert.equal(output.turn.answer, 'It is 4.');
    assert.equal(output.turn.thought, REASONING);
    assert.equal(stored?.reasoning, REASONING);
  });

  test('a server that sends the same text in both fields is not read twice', async () => {
    const chunks = [
      deltaChunk({ role: 'assistant', content: '' }),
      deltaChunk({ reasoning_content: REASONING, reasoning: REASONING }),
      deltaChunk({ content: '<answer>4</answer>' }, 'stop'),
    ];
    const { stored } = await call(chunks);
    assert.equal(stored?.reasoning, REASONING);
  });

  test("the protocol's own <think> thought wins when there is one", async () => {
    const { output, stored } = await call(
      llamaServerStream(REASONING, '<think>From the content.</think>\n<answer>4</answer>'),
    );
    assert.equal(output.turn.thought, 'From the content.');
    assert.equal(stored?.reasoning, REASONING, 'the reasoning is still kept in the transcript');
  });

  test('a reply cut off while thinking does not look empty: its reasoning is the thought, finishReason says length', async () => {
    const { output, stored } = await call(llamaServerStream(REASONING, '', 'length'));
    assert.equal(output.finishReason, 'length');
    assert.equal(output.turn.thought, REASONING);
    assert.equal(stored?.content, '');
    assert.equal(stored?.reasoning, REASONING);
    assert.match(output.assistant.preview, /^\(reasoning\) The user asks/);
  });

  test('without reasoning the stored message has no reasoning field', async () => {
    const { stored } = await call([
      deltaChunk({ role: 'assistant', content: '<answer>4</answer>' }),
      deltaChunk({}, 'stop'),
    ]);
    assert.deepEqual(stored, { role: 'assistant', content: '<answer>4</answer>' });
  });

  test('reasoning is never sent back to the server', async () => {
    const { calls } = await call(llamaServerStream(REASONING, '<answer>4</answer>'), 'deep-research', [
      {
        role: 'assistant',
        content: '<tool_call>{"name":"lookup","arguments":{}}</tool_call>',
        reasoning: 'Earlier reasoning.',
      },
      { role: 'user', content: '<tool_response>\nnothing\n</tool_response>' },
    ]);
    const sent = JSON.stringify(calls[0]?.params.messages);
    assert.ok(!sent.includes('Earlier reasoning'), sent);
    assert.ok(!/reasoning/.test(sent), sent);
    const assistant = calls[0]?.params.messages.find((message) => message.role === 'assistant');
    assert.deepEqual(Object.keys(assistant ?? {}).sort(), ['content', 'role']);
  });
});
