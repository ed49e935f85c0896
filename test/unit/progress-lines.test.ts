import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { progressLines } from '../../src/cli/progress-lines';
import type { RunEvent } from '../../src/cli/run-events';
import type { CallModelOutput, ToolActivityOutput } from '../../src/core/activity-contracts';
import type { ParsedTurn } from '../../src/core/protocols/protocol';
import { seededRandom } from '../fakes/seeded-random';

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
  const output: ToolActivityOutput = {
    observation: { ref: `sha256:${'b'.repeat(64)}`, preview, characters },
    isError,
    tokens: 1,
  };
  return { kind: 'tool_completed', tool, callId: 'call-1-1', output };
}

describe('progressLines', () => {
  test('a new model call prints one line, saying when it asks for the final answer', () => {
    assert.deepEqual(progressLines({ kind: 'model_call_started', modelCall: 4, finalAnswer: false }), [
      '[call 4] calling the model',
    ]);
    assert.deepEqual(progressLines({ kind: 'model_call_started', modelCall: 9, finalAnswer: true }), [
      '[call 9] asking for the final answer',
    ]);
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
    const lines = progressLines(
      completed(1, {
        thought: '',
        toolCalls: [{ id: 'call-1-1', name: '', arguments: {}, problem: 'Error: the tool call is not valid JSON.' }],
      }),
    );
    assert.deepEqual(lines, [
      '[call 1] 12,345 context tokens (+678)',
      '  tool call: ? {} (not run: Error: the tool call is not valid JSON.)',
    ]);
  });

  test('no thought and no tool calls: only the header line', () => {
    assert.deepEqual(progressLines(completed(3, { thought: '', toolCalls: [] })), [
      '[call 3] 12,345 context tokens (+678)',
    ]);
  });

  test('an answer is printed, and a format problem when there is no answer', () => {
    assert.deepEqual(progressLines(completed(5, { thought: '', toolCalls: [], answer: 'Roald  Amundsen' })), [
      '[call 5] 12,345 context tokens (+678)',
      '  answer: Roald Amundsen',
    ]);
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
    assert.deepEqual(
      progressLines({
        kind: 'tool_started',
        tool: 'search',
        input: { workflowId: 'w', callId: 'c', arguments: {}, maxObservationCharacters: 1 },
      }),
      [],
    );
    assert.deepEqual(progressLines({ kind: 'run_closed', status: 'cancelled' }), []);
    assert.deepEqual(progressLines({ kind: 'run_completed', result: {} as never }), []);
  });

  test('a completed tool prints its preview and size, marking errors', () => {
    assert.deepEqual(progressLines(toolCompleted('search', 'Amundsen reached\nthe pole', false, 40_000)), [
      '  search → Amundsen reached the pole (40,000 chars)',
    ]);
    assert.deepEqual(progressLines(toolCompleted('visit', 'no such page', true)), [
      '  visit → error: no such page (12 chars)',
    ]);
  });

  test('a failed activity prints its message on one line', () => {
    assert.deepEqual(
      progressLines({
        kind: 'activity_failed',
        activity: 'callModel',
        message: 'The model endpoint\nis rate limiting',
      }),
      ['  callModel failed: The model endpoint is rate limiting'],
    );
  });
});

describe('progressLines on events it does not know', () => {
  const isLines = (value: unknown) =>
    Array.isArray(value) && value.every((line) => typeof line === 'string' && !line.includes('\n'));

  test('a "tool" result without an observation (what compressContext returns) is shown generically, not thrown on', () => {
    const compressionResult = {
      conversation: `sha256:${'d'.repeat(64)}`,
      contextTokens: 40_000,
      stubbedObservations: 3,
      summarizedTurns: 1,
    };
    const lines = progressLines({
      kind: 'tool_completed',
      tool: 'compressContext',
      callId: '',
      output: compressionResult as never,
    });
    assert.ok(isLines(lines), String(lines));
    assert.equal(lines.length, 1);
    assert.match(lines[0] as string, /tool_completed/);
  });

  test('an event kind it does not know becomes one generic line', () => {
    assert.deepEqual(progressLines({ kind: 'timer_fired', timer: 3 } as never), ['  (timer_fired)']);
  });

  test('compression and unknown activities have their own lines', () => {
    assert.deepEqual(progressLines({ kind: 'compression_started', targetTokens: 66_000, summarize: true }), [
      '  compressing the context (target 66,000 tokens, may summarise old turns) ...',
    ]);
    assert.deepEqual(
      progressLines({
        kind: 'context_compressed',
        output: { conversation: 'c', contextTokens: 1_234, stubbedObservations: 1, summarizedTurns: 0 },
      }),
      ['  context compressed: 1 observation stubbed, 0 turns summarised; now 1,234 tokens'],
    );
    assert.deepEqual(progressLines({ kind: 'activity_completed', activity: 'auditTrail' }), ['  auditTrail completed']);
  });

  test('never throws, whatever shape an event of any kind has (500 random events)', () => {
    const random = seededRandom(8);
    const kinds = [
      'model_call_started',
      'model_call_completed',
      'compression_started',
      'context_compressed',
      'tool_started',
      'tool_completed',
      'activity_completed',
      'activity_failed',
      'run_completed',
      'run_closed',
      'continued_as_new',
      'something_new',
    ];
    const values = [undefined, null, 0, -1, Number.NaN, '', 'text', [], {}, { preview: 3 }, { toolCalls: 'x' }, [null]];
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;
    const field = (depth: number): unknown =>
      depth > 0 && random() < 0.4
        ? Object.fromEntries(
            ['turn', 'usage', 'observation', 'toolCalls', 'preview', 'characters', 'thought', 'answer']
              .filter(() => random() < 0.5)
              .map((name) => [name, field(depth - 1)]),
          )
        : pick(values);
    for (let index = 0; index < 500; index += 1) {
      const event = {
        kind: pick(kinds),
        modelCall: field(1),
        output: field(3),
        tool: field(0),
        activity: field(0),
        message: field(0),
        input: field(2),
      };
      let lines: unknown;
      assert.doesNotThrow(() => {
        lines = progressLines(event as never);
      }, JSON.stringify(event));
      assert.ok(isLines(lines), `${JSON.stringify(event)} gave ${String(lines)}`);
    }
  });
});
