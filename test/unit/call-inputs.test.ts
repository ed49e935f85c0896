import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { modelCallRunFields, toolCallRunFields } from '../../src/core/call-inputs';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';
import type { RunSetup } from '../../src/core/run-state';

const setup: RunSetup = {
  tools: [
    {
      name: 'echo',
      activity: { startToCloseSeconds: 300, heartbeatSeconds: 30, maxAttempts: 3, initialRetrySeconds: 1 },
      requiresApproval: false,
    },
    {
      name: 'lookup',
      activity: { startToCloseSeconds: 30, heartbeatSeconds: 5, maxAttempts: 6, initialRetrySeconds: 1 },
      requiresApproval: false,
    },
  ],
  toolSpecs: `sha256:${'a'.repeat(64)}`,
  modelActivity: { startToCloseSeconds: 600, heartbeatSeconds: 60, maxAttempts: 12 },
  model: 'm',
};
const { toolSpecs: _stored, ...openedBefore } = setup;

describe('modelCallRunFields', () => {
  test('lean, native tool calling: the stored specs alone, or the names in a run opened before they were stored', () => {
    assert.deepEqual(modelCallRunFields({ workflowId: 'wf', setup, nativeTools: true }, true), {
      toolSpecs: setup.toolSpecs,
    });
    assert.deepEqual(modelCallRunFields({ workflowId: 'wf', setup: openedBefore, nativeTools: true }, true), {
      tools: ['echo', 'lookup'],
    });
  });

  test('lean, a protocol whose system prompt has the tools: nothing of the run', () => {
    assert.deepEqual(modelCallRunFields({ workflowId: 'wf', setup, nativeTools: false }, true), {});
  });

  test('not lean (a run recorded before): the workflow id and the names, with the reference under native tool calling, as it sent them', () => {
    assert.deepEqual(modelCallRunFields({ workflowId: 'wf', setup, nativeTools: true }, false), {
      workflowId: 'wf',
      tools: ['echo', 'lookup'],
      toolSpecs: setup.toolSpecs,
    });
    assert.deepEqual(modelCallRunFields({ workflowId: 'wf', setup, nativeTools: false }, false), {
      workflowId: 'wf',
      tools: ['echo', 'lookup'],
    });
  });
});

describe('toolCallRunFields', () => {
  test('lean: the observation limit only when it is not the default, no workflow id', () => {
    assert.deepEqual(toolCallRunFields({ workflowId: 'wf', limits: DEFAULT_LIMITS }, true), {});
    assert.deepEqual(
      toolCallRunFields({ workflowId: 'wf', limits: { ...DEFAULT_LIMITS, maxObservationCharacters: 5_000 } }, true),
      { maxObservationCharacters: 5_000 },
    );
  });

  test('not lean: both, as runs recorded before sent them', () => {
    assert.deepEqual(toolCallRunFields({ workflowId: 'wf', limits: DEFAULT_LIMITS }, false), {
      workflowId: 'wf',
      maxObservationCharacters: 40_000,
    });
  });
});
