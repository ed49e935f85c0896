import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { deepResearchProtocol } from '../../src/core/protocols/deep-research-protocol';
import type { ToolCallRequest } from '../../src/core/protocols';
import {
  callSignature,
  INITIAL_STUCK_DETECTOR_STATE,
  observeToolCall,
  watchedCalls,
  type StuckVerdict,
} from '../../src/core/stuck-detection';

/** Feeds the watched calls of each reply to the detector, as the workflow does; returns the verdict kinds. */
function verdicts(replies: string[]): Array<StuckVerdict['kind']> {
  let state = INITIAL_STUCK_DETECTOR_STATE;
  const kinds: Array<StuckVerdict['kind']> = [];
  replies.forEach((content, index) => {
    const calls: ToolCallRequest[] = deepResearchProtocol.parse({ content, toolCalls: [] }, index + 1).toolCalls;
    for (const call of watchedCalls(calls)) {
      const observed = observeToolCall(state, callSignature(call.name, call.arguments));
      state = observed.state;
      kinds.push(observed.verdict.kind);
    }
  });
  return kinds;
}

const same = '<tool_call>{"name": "lookup", "arguments": {"query": "same"}}</tool_call>';
const unparseable = '<tool_call>\n{"name": "lookup", "arguments": {"query": </tool_call>';

describe('stuck detection', () => {
  test('the same readable call: a nudge at the third, stuck at the fourth', () => {
    assert.deepEqual(verdicts([same, same, same, same]), ['ok', 'ok', 'nudge', 'stuck']);
  });
  test('unparseable calls are not "the same call": malformed output is not a loop', () => {
    assert.deepEqual(verdicts([unparseable, unparseable, unparseable, unparseable, unparseable]), []);
  });
  test('unparseable calls in between do not hide a repetition', () => {
    assert.deepEqual(verdicts([same, unparseable, same, unparseable, same]), ['ok', 'ok', 'nudge']);
  });
  test('watchedCalls keeps the readable calls in order', () => {
    const calls: ToolCallRequest[] = [
      { id: '1', name: 'a', arguments: {} },
      { id: '2', name: '', arguments: {}, problem: 'bad JSON' },
      { id: '3', name: 'search', arguments: {}, problem: 'arguments are not JSON' },
      { id: '4', name: 'b', arguments: { x: 1 } },
    ];
    assert.deepEqual(
      watchedCalls(calls).map((call) => call.id),
      ['1', '4'],
    );
  });
});
