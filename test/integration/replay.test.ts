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

/**
 * Histories whose update completed in an order set by the tracing interceptors' promise turns
 * (recorded before the `approvals-complete-after-their-effect` and
 * `reservations-complete-after-their-effect` patches): they replay only on a bundle with the
 * interceptors, which is why every bundle keeps them (docs/figures.md).
 */
const RECORDED_BEFORE_UPDATES_AWAITED_THEIR_EFFECT = ['tool-specs-by-reference.json', 'model-limiter.json'];

for (const fixture of fixtures.filter((name) => !RECORDED_BEFORE_UPDATES_AWAITED_THEIR_EFFECT.includes(name))) {
  test(`recorded history ${fixture} replays without the tracing interceptors too: its behaviour does not depend on them`, async () => {
    const recorded = history(fixture);
    const workflowId = recorded.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? fixture;
    const codePath = await cachedWorkflowBundle(undefined, []);
    await Worker.runReplayHistory({ workflowBundle: { codePath } }, recorded, workflowId);
  });
}

test('the histories recorded before updates awaited their effect still need the interceptors', async () => {
  const codePath = await cachedWorkflowBundle(undefined, []);
  for (const fixture of RECORDED_BEFORE_UPDATES_AWAITED_THEIR_EFFECT) {
    const recorded = history(fixture);
    const workflowId = recorded.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? fixture;
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: { codePath } }, recorded, workflowId),
      (error: Error) => /TimerCanceled/.test(error.message),
      fixture,
    );
  }
});

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
