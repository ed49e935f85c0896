import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { createConversationActivities } from '../../activities/conversation-activities';
import { characterEstimateCounter } from '../../activities/token-counter';
import type { ToolDefinition } from '../../activities/tools/tool-definition';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const tool = (name: string, activity?: ToolDefinition['activity']): ToolDefinition => ({
  name,
  description: `The ${name} tool.`,
  parameters: { type: 'object', properties: {}, additionalProperties: false },
  ...(activity ? { activity } : {}),
  run: async () => 'ok',
});

function startConversation(toolTaskQueue?: string) {
  return createConversationActivities({
    store: new MemoryTranscriptStore(),
    tools: new ToolRegistry([tool('lookup'), tool('own_fleet', { taskQueue: 'gpu-tools' })]),
    tokenCounter: characterEstimateCounter,
    modelActivity: {
      startToCloseSeconds: 600,
      heartbeatSeconds: 60,
      maxAttempts: 12,
      ...(toolTaskQueue ? { taskQueue: 'model-queue' } : {}),
    },
    defaultModel: 'm',
    ...(toolTaskQueue ? { toolTaskQueue } : {}),
  }).startConversation({ question: 'Q?', protocol: 'deep-research', today: '2026-12-01' });
}

describe('startConversation records the fleet queues the run schedules on', () => {
  test('the tool queue is stamped on each spec unless the tool names its own; the model queue comes with the model settings', async () => {
    const output = await startConversation('tool-queue');
    assert.deepEqual(
      output.tools.map((spec) => [spec.name, spec.activity.taskQueue]),
      [
        ['lookup', 'tool-queue'],
        ['own_fleet', 'gpu-tools'],
      ],
    );
    assert.equal(output.modelActivity.taskQueue, 'model-queue');
  }, 10_000);

  test('without fleet queues the specs stay as before (the run schedules on its own queue)', async () => {
    const output = await startConversation();
    assert.deepEqual(
      output.tools.map((spec) => [spec.name, spec.activity.taskQueue]),
      [
        ['lookup', undefined],
        ['own_fleet', 'gpu-tools'],
      ],
    );
    assert.equal('taskQueue' in output.modelActivity, false);
  }, 10_000);
});
