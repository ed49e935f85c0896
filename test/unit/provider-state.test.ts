import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createCallModel } from '../../activities/model-activity';
import type { ChatModel, ChatReply, ChatRequest } from '../../activities/model/chat-model';
import { characterEstimateCounter } from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { CallModelInput, CallModelOutput } from '../../src/core/activity-contracts';
import type { ChatMessage } from '../../src/core/messages';
import { loadConversation, putConversation, putMessage } from '../../src/storage/conversation';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

// Issue 31: what an API needs back with a reply (Anthropic's thinking blocks and their
// signatures, Responses' encrypted reasoning items) is stored with the assistant message in the
// transcript store and sent with it on the next call, and never reaches the activity's output
// (workflow history). Cache reads and writes are priced.

const THINKING = { type: 'thinking', thinking: 'Look it up first.', signature: 'c2lnbmF0dXJlLW9wYXF1ZQ==' };

/** A ChatModel answering with `replies` in turn, keeping each request. */
function scriptedChatModel(replies: ChatReply[]): { chatModel: ChatModel; requests: ChatRequest[] } {
  const requests: ChatRequest[] = [];
  return {
    requests,
    chatModel: {
      chat: async (request) => {
        requests.push(JSON.parse(JSON.stringify(request)) as ChatRequest);
        const reply = replies.shift();
        assert.ok(reply, 'no scripted reply left');
        return reply;
      },
      contextWindow: async () => undefined,
    },
  };
}

const runIn = (
  env: MockActivityEnvironment,
  activity: (input: CallModelInput) => Promise<CallModelOutput>,
  input: CallModelInput,
) => env.run(activity, input) as Promise<CallModelOutput>;

describe('provider state (thinking blocks, reasoning items)', () => {
  test('stored with the assistant message, sent back on the next call, never in the output; cache reads and writes priced', async () => {
    const store = new MemoryTranscriptStore();
    const conversation = await putConversation(store, [
      await putMessage(store, { role: 'system', content: 'Research.' }),
      await putMessage(store, { role: 'user', content: 'What is 2+2?' }),
    ]);
    const { chatModel, requests } = scriptedChatModel([
      {
        content: '<tool_call>\n{"name": "search", "arguments": {"query": ["2+2"]}}\n</tool_call>',
        reasoning: 'Look it up first.',
        toolCalls: [],
        finishReason: 'stop',
        usage: { promptTokens: 1100, completionTokens: 20, cachedPromptTokens: 0, cacheWriteTokens: 1000 },
        provider: { api: 'anthropic-messages', items: [THINKING] },
        chunks: 5,
      },
      {
        content: '<answer>4</answer>',
        reasoning: '',
        toolCalls: [],
        finishReason: 'stop',
        usage: { promptTokens: 1200, completionTokens: 5, cachedPromptTokens: 1000, cacheWriteTokens: 150 },
        chunks: 2,
      },
    ]);
    const callModel = createCallModel({
      chatModel,
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults: { model: 'claude-test', temperature: 0.6, topP: 0.95, maxOutputTokens: 1024 },
      tools: new ToolRegistry(),
      prices: { 'claude-test': { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 } },
    });
    const env = new MockActivityEnvironment(
      { heartbeatTimeoutMs: 5_000 },
      { logger: new DefaultLogger('ERROR', () => undefined) },
    );
    const input = (conversationRef: string, modelCall: number): CallModelInput => ({
      workflowId: 'wf-provider',
      modelCall,
      conversation: conversationRef,
      append: [],
      model: { model: 'claude-test' },
      protocol: 'deep-research',
      tools: [],
    });

    const first = await runIn(env, callModel, input(conversation, 1));
    const stored = await loadConversation(store, first.conversation);
    assert.deepEqual(stored.at(-1)?.provider, { api: 'anthropic-messages', items: [THINKING] });
    assert.doesNotMatch(JSON.stringify(first), /c2lnbmF0dXJl|"provider"/, 'the signature never reaches history');
    // 100 uncached at 3, 1,000 written at 3.75, 20 out at 15 (per million).
    assert.ok(Math.abs(first.usage.costUsd! - (100 * 3 + 1000 * 3.75 + 20 * 15) / 1e6) < 1e-12);

    const second = await runIn(env, callModel, {
      ...input(first.conversation, 2),
      append: [{ role: 'user', parts: [{ text: '<tool_response>4</tool_response>' }] }],
    });
    const sentAssistant = requests[1]!.messages.find((message: ChatMessage) => message.role === 'assistant');
    assert.deepEqual(sentAssistant?.provider, { api: 'anthropic-messages', items: [THINKING] });
    // 50 uncached, 1,000 read at 0.3, 150 written, 5 out.
    assert.ok(Math.abs(second.usage.costUsd! - (50 * 3 + 1000 * 0.3 + 150 * 3.75 + 5 * 15) / 1e6) < 1e-12);
  });
});
