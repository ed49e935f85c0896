import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { settleFailedCall, waitForModelLimit } from '../../activities/model-limits/model-limit-wait';
import type { ModelLimitAsk, ModelLimitTicket } from '../../activities/model-limits/shared-model-limits';
import { FailureTypes } from '../../src/core/failure-types';
import { FakeModelLimitGate as FakeGate } from '../fakes/fake-model-limit-gate';
import { RecordingMetricMeter } from '../fakes/recording-metric-meter';

const quietLogger = new DefaultLogger('ERROR', () => undefined);

function environment(startToCloseTimeoutMs = 60_000) {
  const meter = new RecordingMetricMeter();
  const env = new MockActivityEnvironment(
    { startToCloseTimeoutMs, currentAttemptScheduledTimestampMs: Date.now() },
    { logger: quietLogger, metricMeter: meter },
  );
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return { env, heartbeats, meter };
}

const ask: ModelLimitAsk = { model: 'gpt-x', promptTokens: 500 };

describe('a model call waiting for its shared limit (activities/model-limits/model-limit-wait.ts)', () => {
  test('without a gate nothing is asked', async () => {
    const { env } = environment();
    assert.equal(await env.run(() => waitForModelLimit(undefined, ask, Context.current())), undefined);
  });

  test('a grant at once: no wait, the wait recorded as none', async () => {
    const { env, meter, heartbeats } = environment();
    const gate = new FakeGate(0);
    const ticket = (await env.run(() => waitForModelLimit(gate, ask, Context.current()))) as
      ModelLimitTicket | undefined;
    assert.equal(ticket?.leaseId, '1');
    assert.deepEqual(heartbeats, []);
    const recorded = meter.records.filter((record) => record.name === 'react_agent_model_limit_wait_seconds');
    assert.deepEqual(
      recorded.map((record) => [record.value, record.tags.limit]),
      [[0, 'none']],
    );
  });

  test('a booked wait: the call sleeps until its time, heartbeating waitingForModelLimit', async () => {
    const { env, heartbeats, meter } = environment();
    const gate = new FakeGate(1_500);
    const started = Date.now();
    await env.run(() => waitForModelLimit(gate, ask, Context.current()));
    assert.ok(Date.now() - started >= 1_400, `waited ${Date.now() - started} ms`);
    assert.deepEqual(heartbeats[0], {
      chunks: 0,
      characters: 0,
      waitingForModelLimit: { seconds: 2, model: 'gpt-x', limit: 'tokens' },
    });
    assert.ok(heartbeats.length >= 2);
    const recorded = meter.records.find((record) => record.name === 'react_agent_model_limit_wait_seconds');
    assert.deepEqual([recorded?.value, recorded?.tags.limit], [1.5, 'tokens']);
  });

  test('a wait longer than the attempt has time for gives the tokens back and fails as rate limited, with the wait as its retry delay', async () => {
    const { env } = environment(20_000);
    const gate = new FakeGate(15_000);
    await assert.rejects(
      env.run(() => waitForModelLimit(gate, ask, Context.current())),
      (error: unknown) =>
        error instanceof ApplicationFailure &&
        error.type === FailureTypes.modelRateLimited &&
        error.nextRetryDelay === 15_000,
    );
    assert.deepEqual(gate.settled, [['1', 0, undefined]]);
  });

  test('a cancelled run stops waiting', async () => {
    const { env } = environment(600_000);
    const gate = new FakeGate(30_000);
    const waiting = env.run(() => waitForModelLimit(gate, ask, Context.current()));
    setTimeout(() => env.cancel(), 200);
    await assert.rejects(waiting, (error: unknown) => error instanceof CancelledFailure);
  });

  test('a 429 with retry-after pauses the model once and settles the call as used; other failures only settle', async () => {
    const { env, meter } = environment();
    const gate = new FakeGate(0);
    const ticket = (await env.run(() => waitForModelLimit(gate, ask, Context.current()))) as
      ModelLimitTicket | undefined;
    assert.ok(ticket);
    const rateLimited = ApplicationFailure.create({
      type: FailureTypes.modelRateLimited,
      message: '429',
      nextRetryDelay: 7_000,
    });
    await env.run(() => settleFailedCall(gate, ticket, rateLimited, 'gpt-x', Context.current()));
    assert.deepEqual(gate.pauses, [7_000]);
    assert.deepEqual(gate.settled, [['1', 600, undefined]]);
    await env.run(() => settleFailedCall(gate, ticket, new Error('socket hang up'), 'gpt-x', Context.current()));
    assert.deepEqual(gate.pauses, [7_000]);
    assert.equal(gate.settled.length, 2);
    assert.equal(meter.records.filter((record) => record.name === 'react_agent_model_limit_pauses_total').length, 1);
  });
});
