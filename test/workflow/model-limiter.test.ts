/**
 * The `modelLimiter` workflow (issue 33) on a real dev server with the real bundle: booked by
 * update-with-start from several callers at once, first come first served; malformed messages
 * refused or dropped without harm; its state carried through continue-as-new.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { WithStartWorkflowOperation } from '@temporalio/client';
import {
  modelLimiterStateQuery,
  pauseModelLimitSignal,
  reserveModelLimitUpdate,
  settleModelLimitSignal,
} from '../../src/core/model-limits/limiter-messages';
import { modelLimiterWorkflowId, type ModelLimitReservationRequest } from '../../src/core/model-limits/model-limit';
import { WorkflowTypes } from '../../src/core/workflow-types';
import { MESSAGES_PER_CONTINUATION } from '../../workflows/model-limiter';
import { WorkflowEnvironment } from './support/workflow-environment';

let environment: WorkflowEnvironment;

beforeAll(async () => {
  environment = await WorkflowEnvironment.start();
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

let sequence = 0;

function limiterOf(label: string) {
  const model = `${label}-${process.pid}-${++sequence}`;
  const workflowId = modelLimiterWorkflowId(model);
  const reserve = (request: Omit<ModelLimitReservationRequest, 'limit'>, limit = { tokensPerMinute: 60_000 }) =>
    environment.client.workflow.executeUpdateWithStart(reserveModelLimitUpdate, {
      args: [{ limit, ...request }],
      startWorkflowOperation: new WithStartWorkflowOperation(WorkflowTypes.modelLimiter, {
        workflowId,
        taskQueue: environment.taskQueue,
        args: [{ model }],
        workflowIdConflictPolicy: 'USE_EXISTING',
      }),
    });
  return { workflowId, reserve, handle: environment.client.workflow.getHandle(workflowId) };
}

test('callers asking at once are booked one behind the other, in one limiter started by the first', async () => {
  const limiter = limiterOf('fifo');
  const grants = await Promise.all(Array.from({ length: 6 }, () => limiter.reserve({ tokens: 20_000 })));
  const waits = grants.map((grant) => grant.waitMs).sort((a, b) => a - b);
  // 60 000 a minute (1 000 a second), full at the start: three at once, then one every 20 s.
  assert.deepEqual(
    waits.map((wait) => Math.round(wait / 1000)),
    [0, 0, 0, 20, 40, 60],
  );
  assert.equal(new Set(grants.map((grant) => grant.leaseId)).size, 6);
  const state = await limiter.handle.query(modelLimiterStateQuery);
  assert.equal(Object.keys(state.leases).length, 6);
});

test('a malformed reservation is refused by the validator; malformed signals are dropped; the limiter goes on', async () => {
  const limiter = limiterOf('hostile');
  await limiter.reserve({ tokens: 1 });
  await assert.rejects(limiter.reserve({ tokens: Number.NaN }));
  await assert.rejects(limiter.reserve({ tokens: 1 }, { tokensPerMinute: -5 }));
  await limiter.handle.signal(settleModelLimitSignal, { leaseId: 42, tokens: 'many' } as never);
  await limiter.handle.signal(pauseModelLimitSignal, { retryAfterMs: 'soon' } as never);
  const grant = await limiter.reserve({ tokens: 1 });
  assert.equal(grant.waitMs, 0);
  const state = await limiter.handle.query(modelLimiterStateQuery);
  assert.equal(state.pausedUntilMs, 0);
  assert.equal(Object.keys(state.leases).length, 2);
});

test(`after ${MESSAGES_PER_CONTINUATION} messages the limiter continues as new with its budgets, leases and pause`, async () => {
  const limiter = limiterOf('continued');
  const first = await limiter.reserve({ tokens: 50_000 });
  const firstRun = (await limiter.handle.describe()).runId;
  await limiter.handle.signal(pauseModelLimitSignal, { retryAfterMs: 60_000 });
  for (let sent = 0; sent < MESSAGES_PER_CONTINUATION; sent += 1)
    await limiter.handle.signal(settleModelLimitSignal, { leaseId: 'unknown', tokens: 0 });
  let secondRun = firstRun;
  for (let tries = 0; tries < 100 && secondRun === firstRun; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    secondRun = (await limiter.handle.describe()).runId;
  }
  assert.notEqual(secondRun, firstRun, 'the limiter continued as new');
  const state = await limiter.handle.query(modelLimiterStateQuery);
  assert.deepEqual(Object.keys(state.leases), [first.leaseId]);
  assert.ok(state.pausedUntilMs > Date.now() + 30_000, 'the pause was carried');
  const after = await limiter.reserve({ tokens: 1 });
  assert.equal(after.reason, 'pause');
  assert.ok(after.waitMs > 30_000);
}, 120_000);
