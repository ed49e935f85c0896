import assert from 'node:assert/strict';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@jest/globals';
import { cachedWorkflowBundle } from './support/workflow-bundle';

/**
 * Deploy safety: histories recorded from earlier runs (test/fixtures/histories, made by
 * scripts/record-replay-histories.ts) must replay on the current workflow code. A change that
 * fails here would break runs in flight and needs `patched()`.
 */
const directory = join(__dirname, '..', 'fixtures', 'histories');
const fixtures = readdirSync(directory).filter((name) => name.endsWith('.json'));

const history = (name: string) => historyFromJSON(JSON.parse(readFileSync(join(directory, name), 'utf8')));

test('there are recorded histories to replay', () => {
  assert.ok(fixtures.length >= 5, `found ${fixtures.join(', ')}`);
});

for (const fixture of fixtures) {
  test(`recorded history ${fixture} replays on the current workflow code`, async () => {
    const recorded = history(fixture);
    // Under its recorded workflow id: a batch derives its children's ids from it.
    const workflowId = recorded.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? fixture;
    await Worker.runReplayHistory({ workflowBundle: { codePath: await cachedWorkflowBundle() } }, recorded, workflowId);
  });
}

test('replay notices an incompatible change', async () => {
  await assert.rejects(
    Worker.runReplayHistory(
      { workflowsPath: require.resolve('../fixtures/incompatible-workflow') },
      history(fixtures[0] as string),
      'incompatible',
    ),
    (error: Error) => error instanceof DeterminismViolationError || /nondetermin/i.test(error.message),
  );
});
