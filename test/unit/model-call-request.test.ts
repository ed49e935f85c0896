import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { modelRequest, type CallModelInputOfRun } from '../../activities/model-call/model-request';
import { MODEL_CALL_LABEL, WORKFLOW_ID_LABEL } from '../../activities/model/chat-request-labels';

import type { ChatMessage } from '../../src/core/messages';

const messages: ChatMessage[] = [{ role: 'user', content: 'Why?' }];
const defaults = { temperature: 0.6, topP: 0.95, maxOutputTokens: 10_000 };
const input: CallModelInputOfRun = {
  workflowId: 'wf-1',
  modelCall: 3,
  conversation: 'sha256:c',
  append: [],
  model: { model: 'm' },
  protocol: 'deep-research',
  tools: ['search'],
};
const search = { name: 'search', description: 'Searches.', parameters: { type: 'object' } };

describe('modelRequest', () => {
  test("the worker's sampling where the run sets none, the protocol's stop sequences, labels naming the run and the call", () => {
    assert.deepEqual(modelRequest(input, { stop: ['<tool_response>'] }, messages, undefined, defaults), {
      model: 'm',
      messages,
      stop: ['<tool_response>'],
      sampling: { temperature: 0.6, topP: 0.95, maxOutputTokens: 10_000 },
      labels: { [WORKFLOW_ID_LABEL]: 'wf-1', [MODEL_CALL_LABEL]: '3' },
    });
  });

  test("the run's sampling wins; no stop sequences, none sent", () => {
    const request = modelRequest(
      { ...input, model: { model: 'm', temperature: 0, topP: 1, maxOutputTokens: 50, presencePenalty: 1.5 } },
      { stop: [] },
      messages,
      undefined,
      defaults,
    );
    assert.deepEqual(request.sampling, { temperature: 0, topP: 1, maxOutputTokens: 50, presencePenalty: 1.5 });
    assert.equal('stop' in request, false);
  });

  test('native tools are offered, and refused on the final-answer call', () => {
    assert.deepEqual(modelRequest(input, { stop: [] }, messages, [search], defaults).toolChoice, 'auto');
    const final = modelRequest({ ...input, finalAnswer: true }, { stop: [] }, messages, [search], defaults);
    assert.deepEqual([final.tools, final.toolChoice], [[search], 'none']);
  });
});
