import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { PROTOCOL_NAMES, protocolByName, type ParsedTurn } from '../../src/core/protocols';
import { seededRandom as random } from '../fakes/seeded-random';

const FRAGMENTS = [
  '<think>',
  '</think>',
  '<tool_call>',
  '</tool_call>',
  '<answer>',
  '</answer>',
  '<tool_response>',
  '</tool_response>',
  '<code>',
  '</code>',
  'Thought:',
  'Action:',
  'Action Input:',
  'Observation:',
  'Final Answer:',
  '\n',
  ' ',
  '{',
  '}',
  '[',
  ']',
  '"',
  "'",
  ',',
  ':',
  '//',
  '/*',
  '*/',
  '"name"',
  '"arguments"',
  'name',
  'arguments',
  '"search"',
  'search',
  'lookup',
  '"query"',
  '"BYD 2024"',
  '42',
  '-1e309',
  'null',
  'true',
  'NaN',
  'Infinity',
  '比亚迪',
  '🚗',
  '\u0000',
  '\uFFFD',
  '\\',
  '\\u12',
  'python',
  'print(1)',
  '```json',
  '```',
  '<',
  '>',
  '</',
  'x'.repeat(50),
];

/** A malformed (or occasionally well-formed) model output built from protocol fragments. */
function malformedOutput(next: () => number): string {
  const length = Math.floor(next() * 40);
  let output = '';
  for (let index = 0; index < length; index += 1) output += FRAGMENTS[Math.floor(next() * FRAGMENTS.length)];
  return output;
}

function nativeCalls(next: () => number) {
  const count = Math.floor(next() * 4);
  return Array.from({ length: count }, (_, index) => ({
    id: next() < 0.2 ? '' : `call_${index}`,
    name: next() < 0.2 ? '' : 'lookup',
    arguments: malformedOutput(next).slice(0, 200),
  }));
}

/** What every parse must give: a decision (answer or tool calls) or a correction, and tool calls that are runnable or explained. */
function checkTurn(turn: ParsedTurn): string | undefined {
  if (typeof turn.thought !== 'string' || turn.thought.length > 1_000) return 'thought missing or too long';
  const decided =
    turn.answer !== undefined ||
    turn.toolCalls.length > 0 ||
    (typeof turn.problem === 'string' && turn.problem.length > 0);
  if (!decided) return 'neither an answer, tool calls nor a correction';
  for (const call of turn.toolCalls) {
    if (typeof call.id !== 'string' || call.id === '') return 'a tool call without id';
    if (
      !call.problem &&
      (call.name === '' ||
        typeof call.arguments !== 'object' ||
        call.arguments === null ||
        Array.isArray(call.arguments))
    )
      return 'a runnable call without name or object arguments';
  }
  if (new Set(turn.toolCalls.map((call) => call.id)).size !== turn.toolCalls.length) return 'duplicate call ids';
  return undefined;
}

for (const name of PROTOCOL_NAMES) {
  test(`${name} protocol: 3,000 generated malformed outputs never throw and always become a decision or a correction`, () => {
    const protocol = protocolByName(name);
    for (let seed = 1; seed <= 3_000; seed += 1) {
      const next = random(seed);
      const content = malformedOutput(next);
      const toolCalls = name === 'native' ? nativeCalls(next) : [];
      let turn: ParsedTurn;
      try {
        turn = protocol.parse({ content: protocol.cleanOutput(content), toolCalls }, seed);
      } catch (error) {
        assert.fail(`seed ${seed} threw ${(error as Error).message} for ${JSON.stringify(content)}`);
      }
      const problem = checkTurn(turn);
      assert.equal(problem, undefined, `seed ${seed}: ${problem} for ${JSON.stringify({ content, toolCalls })}`);
    }
  });
}

test('the generator does produce each kind of outcome (so the property above is not vacuous)', () => {
  const protocol = protocolByName('deep-research');
  const kinds = new Set<string>();
  const wellFormed = [
    '<tool_call>{"name": "lookup", "arguments": {"query": "x"}}</tool_call>',
    '<answer>42</answer>',
    'chatter',
  ];
  for (const content of wellFormed) {
    const turn = protocol.parse({ content, toolCalls: [] }, 1);
    kinds.add(turn.answer !== undefined ? 'answer' : turn.toolCalls.some((call) => !call.problem) ? 'call' : 'problem');
  }
  for (let seed = 1; seed <= 3_000; seed += 1) {
    const turn = protocol.parse({ content: protocol.cleanOutput(malformedOutput(random(seed))), toolCalls: [] }, seed);
    if (turn.toolCalls.some((call) => call.problem)) kinds.add('call-with-problem');
  }
  assert.deepEqual([...kinds].sort(), ['answer', 'call', 'call-with-problem', 'problem']);
});
