import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { progressLines } from '../../src/cli/progress-lines';
import type { RunEvent } from '../../src/cli/run-events';
import type { CallModelOutput, ToolActivityOutput } from '../../src/core/activity-contracts';
import type { ParsedTurn } from '../../src/core/protocols/protocol';

function completed(modelCall: number, turn: ParsedTurn, contextTokens = 12_345, completionTokens = 678): RunEvent {
  const output: CallModelOutput = {
    conversation: `sha256:${'c'.repeat(64)}`,
    assistant: { ref: `sha256:${'a'.repeat(64)}`, preview: '…', characters: 10 },
    turn,
    usage: { promptTokens: contextTokens - completionTokens, completionTokens, totalTokens: contextTokens },
    contextTokens,
    finishReason: 'stop',
  };
  return { kind: 'model_call_completed', modelCall, output };
}

function toolCompleted(tool: string, preview: string, isError = false, characters = preview.length): RunEvent {
  const output: ToolActivityOutput = { observation: { ref: `sha256:${'b'.repeat(64)}`, preview, characters }, isError, tokens: 1 };
  return { kind: 'tool_completed', tool, callId: 'call-1-1', output };
}

describe('progressLines', () => {
  test('a new model call prints one line, saying when it asks for the final answer', () => {
    assert.deepEqual(progressLines({ kind: 'model_call_started', modelCall: 4, finalAnswer: false }), ['[call 4] calling the model']);
    assert.deepEqual(progressLines({ kind: 'model_call_started', modelCall: 9, finalAnswer: true }), ['[call 9] asking for the final answer']);
  });

  test('a completed call prints its context size, its thought and each tool call', () => {
    const lines = progressLines(
      completed(2, {
        thought: 'I need   to\nsearch first.',
        toolCalls: [
          { id: 'call-2-1', name: 'search', arguments: { query: ['south pole'] } },
          { id: 'call-2-2', name: 'visit', arguments: { url: 'https://example.org' } },
        ],
      }),
    );
    assert.deepEqual(lines, [
      '[call 2] 12,345 context tokens (+678)',
      '  thought: I need to search first.',
      '  tool call: search {"query":["south pole"]}',
      '  tool call: visit {"url":"https://example.org"}',
    ]);
  });

  test('a tool call that will not run says why; a nameless one shows ?', () => {
    const lines = progressLines(completed(1, { thought: '', toolCalls: [{ id: 'call-1-1', name: '', arguments: {}, problem: 'Error: the tool call is not valid JSON.' }] }));
    assert.deepEqual(lines, ['[call 1] 12,345 context tokens (+678)', '  tool call: ? {} (not run: Error: the tool call is not valid JSON.)']);
  });

  test('no thought and no tool calls: only the header line', () => {
    assert.deepEqual(progressLines(completed(3, { thought: '', toolCalls: [] })), ['[call 3] 12,345 context tokens (+678)']);
  });

  test('an answer is printed, and a format problem when there is no answer', () => {
    assert.deepEqual(progressLines(completed(5, { thought: '', toolCalls: [], answer: 'Roald  Amundsen' })), ['[call 5] 12,345 context tokens (+678)', '  answer: Roald Amundsen']);
    assert.deepEqual(progressLines(completed(5, { thought: '', toolCalls: [], problem: 'Your reply had neither.' })), [
      '[call 5] 12,345 context tokens (+678)',
      '  format problem: Your reply had neither.',
    ]);
    const both = progressLines(completed(5, { thought: '', toolCalls: [], answer: 'x', problem: 'ignored' }));
    assert.ok(!both.some((line) => line.includes('format problem')), 'an answer wins over a problem');
  });

  test('long thoughts are cut to one line of 160 characters', () => {
    const lines = progressLines(completed(1, { thought: `${'word '.repeat(100)}\n\nmore`, toolCalls: [] }));
    const thought = lines[1] as string;
    assert.ok(thought.startsWith('  thought: word word'));
    assert.equal(thought.length, '  thought: '.length + 160);
    assert.ok(thought.endsWith('…'));
    assert.ok(!thought.includes('\n'));
  });

  test('nothing is printed when a tool starts or the run ends', () => {
    assert.deepEqual(progressLines({ kind: 'tool_started', tool: 'search', input: { workflowId: 'w', callId: 'c', arguments: {}, maxObservationCharacters: 1 } }), []);
    assert.deepEqual(progressLines({ kind: 'run_closed', status: 'cancelled' }), []);
    assert.deepEqual(progressLines({ kind: 'run_completed', result: {} as never }), []);
  });

  test('a completed tool prints its preview and size, marking errors', () => {
    assert.deepEqual(progressLines(toolCompleted('search', 'Amundsen reached\nthe pole', false, 40_000)), ['  search → Amundsen reached the pole (40,000 chars)']);
    assert.deepEqual(progressLines(toolCompleted('visit', 'no such page', true)), ['  visit → error: no such page (12 chars)']);
  });

  test('a failed activity prints its message on one line', () => {
    assert.deepEqual(progressLines({ kind: 'activity_failed', activity: 'callModel', message: 'The model endpoint\nis rate limiting' }), ['  callModel failed: The model endpoint is rate limiting']);
  });
});
