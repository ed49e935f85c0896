import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { deepResearchProtocol as protocol, parseToolCallBody } from '../../src/core/protocols/deep-research-protocol';
import { nativeToolProtocol } from '../../src/core/protocols/native-tool-protocol';
import { keptToolCalls } from '../../src/core/protocols/tool-call-cap';

const parse = (content: string) => protocol.parse({ content: protocol.cleanOutput(content), toolCalls: [] }, 3);

test('a well-formed tool call is parsed into name and arguments, with the thought', () => {
  const turn = parse(
    '<think>I should search.</think>\n<tool_call>\n{"name": "search", "arguments": {"query": ["BYD 2024 sales"]}}\n</tool_call>',
  );
  assert.equal(turn.thought, 'I should search.');
  assert.deepEqual(turn.toolCalls, [{ id: 'call-3-1', name: 'search', arguments: { query: ['BYD 2024 sales'] } }]);
  assert.equal(turn.answer, undefined);
  assert.equal(turn.problem, undefined);
});

test('JSON5 quirks are accepted: single quotes, trailing commas, comments, unquoted keys', () => {
  const turn = parse(
    "<tool_call>\n{name: 'visit', // the page\n 'arguments': {'url': ['https://example.com',],},}\n</tool_call>",
  );
  assert.equal(turn.toolCalls[0]?.name, 'visit');
  assert.deepEqual(turn.toolCalls[0]?.arguments, { url: ['https://example.com'] });
  assert.equal(turn.toolCalls[0]?.problem, undefined);
});

test('arguments given as a JSON string are decoded', () => {
  const turn = parse('<tool_call>{"name": "search", "arguments": "{\\"query\\": \\"x\\"}"}</tool_call>');
  assert.deepEqual(turn.toolCalls[0]?.arguments, { query: 'x' });
});

test('python code inside <code> becomes the code argument', () => {
  const turn = parse('<tool_call>\n{"name": "python", "arguments": {}}\n<code>\nprint(1 + 1)\n</code>\n</tool_call>');
  assert.deepEqual(turn.toolCalls[0], { id: 'call-3-1', name: 'python', arguments: { code: 'print(1 + 1)' } });
});

test('a body that is not JSON becomes a problem the model can correct, not an exception', () => {
  const turn = parse('<tool_call>{"name": "search", "arguments": {"query": </tool_call>');
  assert.equal(turn.toolCalls.length, 1);
  assert.match(turn.toolCalls[0]?.problem ?? '', /not valid JSON/);
  assert.match(turn.toolCalls[0]?.problem ?? '', /<tool_call>/);
});

test('a missing name and non-object arguments are problems that say how to fix them', () => {
  assert.match(parseToolCallBody('{"arguments": {}}', 'c').problem ?? '', /no "name"/);
  assert.match(
    parseToolCallBody('{"name": "search", "arguments": [1, 2]}', 'c').problem ?? '',
    /must be an object, got a list/,
  );
  assert.match(parseToolCallBody('[1, 2]', 'c').problem ?? '', /must be a JSON object/);
  assert.match(
    parseToolCallBody('{"name": "search", "arguments": "not json"}', 'c').problem ?? '',
    /not a JSON object/,
  );
});

test('an answer is extracted; an answer without its closing tag still counts', () => {
  assert.equal(parse('<think>done</think>\n<answer>BYD sold more.</answer>').answer, 'BYD sold more.');
  assert.equal(parse('<answer>BYD sold 4.27M').answer, 'BYD sold 4.27M');
});

test('a hallucinated <tool_response> and everything after it is cut', () => {
  const cleaned = protocol.cleanOutput(
    '<tool_call>{"name":"search","arguments":{}}</tool_call>\n<tool_response>\nfake\n</tool_response><answer>x</answer>',
  );
  assert.ok(!cleaned.includes('tool_response'));
  assert.ok(!cleaned.includes('<answer>'));
  assert.deepEqual(protocol.stop, ['\n<tool_response>', '<tool_response>']);
});

test('two tool calls in one turn are both read, in order', () => {
  const turn = parse(
    '<tool_call>{"name":"a","arguments":{}}</tool_call> and <tool_call>{"name":"b","arguments":{"x":1}}</tool_call>',
  );
  assert.deepEqual(
    turn.toolCalls.map((call) => [call.id, call.name]),
    [
      ['call-3-1', 'a'],
      ['call-3-2', 'b'],
    ],
  );
});

test('an unclosed tool call is read to the end of the output', () => {
  const turn = parse('<tool_call>\n{"name": "search", "arguments": {"query": "q"}}');
  assert.deepEqual(turn.toolCalls[0]?.arguments, { query: 'q' });
});

test('output with neither a tool call nor an answer gets a correction; empty output too', () => {
  assert.match(parse('I think the answer is 42').problem ?? '', /neither a <tool_call> nor an <answer>/);
  assert.match(parse('').problem ?? '', /empty/);
  assert.match(parse('<answer></answer>').problem ?? '', /empty/);
});

test('CJK, emoji and very large outputs parse without throwing', () => {
  const turn = parse(
    `<think>思考 🤔</think><tool_call>{"name":"search","arguments":{"query":"比亚迪 销量 🚗"}}</tool_call>`,
  );
  assert.deepEqual(turn.toolCalls[0]?.arguments, { query: '比亚迪 销量 🚗' });
  const huge = parse(`<think>${'x'.repeat(1_000_000)}</think><answer>ok</answer>`);
  assert.equal(huge.answer, 'ok');
  assert.ok(huge.thought.length <= 1_000);
});

test('observations are wrapped in <tool_response> in call order, as one user message', () => {
  const messages = protocol.renderObservations([
    { callId: 'call-1-1', name: 'a', parts: [{ text: 'first' }] },
    { callId: 'call-1-2', name: 'b', parts: [{ ref: 'sha256:' + 'a'.repeat(64) }] },
  ]);
  assert.equal(messages.length, 1);
  const message = messages[0]!;
  assert.equal(message.role, 'user');
  assert.deepEqual(message.parts, [
    { text: '<tool_response>\n' },
    { text: 'first' },
    { text: '\n</tool_response>' },
    { text: '\n<tool_response>\n' },
    { ref: 'sha256:' + 'a'.repeat(64) },
    { text: '\n</tool_response>' },
  ]);
});

test("the system prompt lists the tools and today's date", () => {
  const prompt = protocol.renderSystemPrompt(
    [
      {
        name: 'search',
        description: 'Search the web',
        parameters: { type: 'object' },
        activity: { startToCloseSeconds: 1, heartbeatSeconds: 1, maxAttempts: 1, initialRetrySeconds: 1 },
        requiresApproval: false,
      },
    ],
    '2026-11-30',
  );
  assert.match(prompt, /<tools>\n\{"type":"function","function":\{"name":"search"/);
  assert.match(prompt, /Current date: 2026-11-30$/);
  assert.match(prompt, /<answer><\/answer>/);
});

test('tag calls past the cap are not run: the first of them is answered for all (issue 28 #13)', () => {
  const tagged = Array.from(
    { length: 12 },
    (_, index) => `<tool_call>{"name": "lookup", "arguments": {"query": "q${index}"}}</tool_call>`,
  ).join('\n');
  for (const [cap, turn] of [
    [8, protocol.parse({ content: tagged, toolCalls: [] }, 3)],
    [2, protocol.parse({ content: tagged, toolCalls: [] }, 3, 2)],
  ] as const) {
    assert.equal(turn.toolCalls.length, cap + 1);
    assert.deepEqual(
      turn.toolCalls.slice(0, cap).map((call) => [call.name, call.problem]),
      Array.from({ length: cap }, () => ['lookup', undefined]),
    );
    assert.deepEqual(
      { id: turn.toolCalls[cap]?.id, name: turn.toolCalls[cap]?.name, problem: turn.toolCalls[cap]?.problem },
      {
        id: `call-3-${cap + 1}`,
        name: '',
        problem: `Error: at most ${cap} tool calls are run per turn; this one was not run, nor the ${12 - cap - 1} after it.`,
      },
    );
  }
  const nine = Array.from({ length: 9 }, () => '<tool_call>{"name": "lookup", "arguments": {}}</tool_call>').join('');
  assert.equal(
    protocol.parse({ content: nine, toolCalls: [] }, 1).toolCalls[8]?.problem,
    'Error: at most 8 tool calls are run per turn; this one was not run.',
  );
  const flood = '<tool_call></tool_call>'.repeat(30_000);
  assert.equal(
    protocol.parse({ content: flood, toolCalls: [] }, 1).toolCalls.length,
    9,
    'thirty thousand calls make nine entries',
  );
});

test('native calls past the cap: the first over it answers for the rest, which are left out of the stored reply (issue 28 #13)', () => {
  const native = Array.from({ length: 12 }, (_, index) => ({
    id: `c${index}`,
    name: 'lookup',
    arguments: `{"query": "q${index}"}`,
  }));
  for (const [cap, turn] of [
    [8, nativeToolProtocol.parse({ content: '', toolCalls: native }, 3)],
    [2, nativeToolProtocol.parse({ content: '', toolCalls: native }, 3, 2)],
  ] as const) {
    assert.deepEqual(
      turn.toolCalls.map((call) => call.id),
      keptToolCalls(native, cap).map((call) => call.id),
      'the calls answered are those the stored reply keeps',
    );
    assert.equal(turn.toolCalls.length, cap + 1);
    assert.ok(turn.toolCalls.slice(0, cap).every((call) => call.name === 'lookup' && call.problem === undefined));
    assert.equal(
      turn.toolCalls[cap]?.problem,
      `Error: at most ${cap} tool calls are run per turn; this one was not run, nor the ${12 - cap - 1} after it.`,
    );
  }
  const nine = native.slice(0, 9);
  assert.equal(
    nativeToolProtocol.parse({ content: '', toolCalls: nine }, 3).toolCalls[8]?.problem,
    'Error: at most 8 tool calls are run per turn; this one was not run.',
  );
  assert.equal(keptToolCalls(native.slice(0, 5), 8).length, 5, 'a reply within the cap is kept whole');
});
