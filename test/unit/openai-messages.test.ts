import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { reasoningOfDelta, toOpenAIMessage, toolCallArgumentsForRequest } from '../../activities/model/openai-messages';
import { nativeToolProtocol } from '../../src/core/protocols/native-tool-protocol';

describe('tool-call arguments sent back to the server are always a JSON object', () => {
  test.each([
    ['valid JSON, kept byte for byte', '{"query": ["BYD 2024 sales"]}', '{"query": ["BYD 2024 sales"]}'],
    ['cut off by max_tokens', '{"query": ["BYD 20', '{}'],
    ['empty (a call without arguments)', '', '{}'],
    ['lenient JSON5 the protocol accepted, re-serialised', "{query: 'BYD', limit: 3,}", '{"query":"BYD","limit":3}'],
    ['JSON that is not an object', '["BYD"]', '{}'],
    ['plain text', 'search for BYD', '{}'],
  ])('%s', (_case, raw, sent) => {
    assert.equal(toolCallArgumentsForRequest(raw), sent);
    assert.doesNotThrow(() => JSON.parse(toolCallArgumentsForRequest(raw)));
  });

  test('the history message of a truncated call carries valid arguments; the protocol still calls it malformed', () => {
    const truncated = { id: 'call_1', name: 'search', arguments: '{"query": ["BYD 20' };
    const message = toOpenAIMessage({ role: 'assistant', content: '', toolCalls: [truncated] });
    assert.ok(message.role === 'assistant' && message.tool_calls);
    const [sent] = message.tool_calls;
    assert.ok(sent && sent.type === 'function');
    assert.equal(sent.function.arguments, '{}');
    assert.equal(sent.id, 'call_1');
    const [parsed] = nativeToolProtocol.parse({ content: '', toolCalls: [truncated] }, 1).toolCalls;
    assert.match(parsed?.problem ?? '', /not valid JSON/, 'the observation tells the model its call was malformed');
  });

  test('reasoning in a stored message is not sent', () => {
    assert.deepEqual(toOpenAIMessage({ role: 'assistant', content: '<answer>4</answer>', reasoning: 'thinking…' }), {
      role: 'assistant',
      content: '<answer>4</answer>',
    });
  });
});

describe('reasoningOfDelta', () => {
  test.each([
    ['llama-server / DeepSeek', { reasoning_content: 'think' }, 'think'],
    ['vLLM / Ollama', { reasoning: 'think' }, 'think'],
    ['both fields with the same text', { reasoning_content: 'think', reasoning: 'think' }, 'think'],
    ['content only', { content: 'hello' }, ''],
    ['null reasoning_content (the first chunk of some servers)', { reasoning_content: null, content: null }, ''],
    ['no delta', undefined, ''],
  ])('%s', (_case, delta, reasoning) => {
    assert.equal(reasoningOfDelta(delta as never), reasoning);
  });
});
