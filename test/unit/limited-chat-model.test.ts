import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { withModelLimits } from '../../activities/model-limits/limited-chat-model';
import { chatControls } from '../../activities/model/chat-controls';
import type { ChatReply, ChatRequest } from '../../activities/model/chat-model';
import type { TokenCounter } from '../../activities/token-counter';
import { FailureTypes } from '../../src/core/failure-types';
import { fakeChatModel, type ChatModelScript } from '../fakes/fake-chat-model';
import { FakeModelLimitGate } from '../fakes/fake-model-limit-gate';
import { RecordingMetricMeter } from '../fakes/recording-metric-meter';

/** A token a word, so the counted prompt is plain to see. */
const words: TokenCounter = { count: (text) => text.split(/\s+/).filter(Boolean).length };

const request: ChatRequest = {
  model: 'gpt-x',
  messages: [{ role: 'user', content: 'judge this answer please' }],
  sampling: { temperature: 0, maxOutputTokens: 300 },
};

function activityEnvironment() {
  const env = new MockActivityEnvironment(
    { startToCloseTimeoutMs: 60_000, currentAttemptScheduledTimestampMs: Date.now() },
    { logger: new DefaultLogger('ERROR', () => undefined), metricMeter: new RecordingMetricMeter() },
  );
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return { env, heartbeats };
}

function limitedModel(script: ChatModelScript, waitMs = 0) {
  const gate = new FakeModelLimitGate(waitMs);
  const model = fakeChatModel(script);
  return { gate, model, limited: withModelLimits(model, gate, words) };
}

const send = (limited: ReturnType<typeof limitedModel>['limited']) =>
  limited.chat(request, chatControls({ signal: new AbortController().signal }));

describe('a summary or judge call booking the shared model limit (activities/model-limits/limited-chat-model.ts)', () => {
  test('books the counted prompt and the reply limit before the request, and settles with the usage the provider reported', async () => {
    const { gate, model, limited } = limitedModel(() => ({
      content: 'correct',
      usage: { promptTokens: 9, completionTokens: 2 },
    }));
    const { env } = activityEnvironment();
    const reply = (await env.run(() => send(limited))) as ChatReply;
    assert.equal(reply.content, 'correct');
    // 4 words + 4 tokens of template per message.
    assert.deepEqual(gate.asks, [{ model: 'gpt-x', promptTokens: 8, maxOutputTokens: 300 }]);
    assert.equal(model.calls.length, 1);
    assert.deepEqual(gate.settled, [['1', 11, 9]]);
  });

  test('waits its booked time before the request, heartbeating waitingForModelLimit', async () => {
    const { gate, model, limited } = limitedModel(() => 'ok', 1_200);
    const { env, heartbeats } = activityEnvironment();
    const started = Date.now();
    await env.run(() => send(limited));
    assert.ok(Date.now() - started >= 1_100, 'the request went out before its booked time');
    assert.equal(model.calls.length, 1);
    assert.ok(
      heartbeats.some((beat) => JSON.stringify(beat).includes('"waitingForModelLimit"')),
      `no waiting heartbeat among ${JSON.stringify(heartbeats)}`,
    );
    // A reply without usage is charged what was booked.
    assert.deepEqual(gate.settled, [['1', 108, undefined]]);
  });

  test("a 429 with retry-after pauses every worker's calls of the model and gives the failure back unchanged", async () => {
    const rateLimited = ApplicationFailure.create({
      type: FailureTypes.modelRateLimited,
      message: 'rate limited',
      nextRetryDelay: 7_000,
    });
    const { gate, limited } = limitedModel(() => rateLimited);
    const { env } = activityEnvironment();
    await assert.rejects(
      env.run(() => send(limited)),
      (error) => error === rateLimited,
    );
    assert.deepEqual(gate.pauses, [7_000]);
    assert.deepEqual(gate.settled, [['1', 108, undefined]]);
  });

  test('the context window question goes to the model unbooked', async () => {
    const gate = new FakeModelLimitGate(0);
    const limited = withModelLimits(
      fakeChatModel(() => 'ok', { tokens: 8_192, source: 'llama-server' }),
      gate,
      words,
    );
    assert.deepEqual(await limited.contextWindow('gpt-x'), { tokens: 8_192, source: 'llama-server' });
    assert.deepEqual(gate.asks, []);
  });
});
