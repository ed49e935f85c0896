import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { putConversation, putMessage } from '../../src/storage/conversation';
import { createCallModel, type ModelDefaults } from '../../activities/model-activity';
import { heartbeatIntervalFor } from '../../activities/heartbeats';
import { characterEstimateCounter } from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { CallModelInput, CallModelOutput } from '../../src/core/activity-contracts';
import { FailureTypes } from '../../src/core/failure-types';
import {
  deltaChunk,
  fakeOpenAI,
  stallingStream,
  streamOf,
  type ChatResponder,
  chatModelOver,
} from '../fakes/fake-chat-completions';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const HEARTBEAT_TIMEOUT_MS = 300;
const FIRST_TOKEN_SECONDS = 1.5;
const MODEL_DEFAULTS: ModelDefaults = {
  model: 'default-model',
  temperature: 0.6,
  topP: 0.95,
  maxOutputTokens: 1024,
  firstTokenSeconds: FIRST_TOKEN_SECONDS,
};
const ANSWER = [
  deltaChunk({ role: 'assistant', content: null }),
  deltaChunk({ content: '<answer>4</answer>' }),
  deltaChunk({}, 'stop'),
];

async function callWith(responder: ChatResponder) {
  const store = new MemoryTranscriptStore();
  const conversation = await putConversation(store, [
    await putMessage(store, { role: 'system', content: 'Be brief.' }),
    await putMessage(store, { role: 'user', content: '2+2?' }),
  ]);
  const { openai, calls } = fakeOpenAI(responder);
  const callModel = createCallModel({
    chatModel: chatModelOver(openai),
    store,
    tokenCounter: characterEstimateCounter,
    modelDefaults: MODEL_DEFAULTS,
    tools: new ToolRegistry(),
  });
  const env = new MockActivityEnvironment(
    { heartbeatTimeoutMs: HEARTBEAT_TIMEOUT_MS },
    { logger: new DefaultLogger('ERROR', () => undefined) },
  );
  const heartbeats: Array<Record<string, unknown>> = [];
  env.on('heartbeat', (details: Record<string, unknown>) => heartbeats.push(details));
  const input: CallModelInput = {
    workflowId: 'wf-first-token',
    modelCall: 1,
    conversation,
    append: [],
    model: { model: 'm' },
    protocol: 'deep-research',
    tools: [],
  };
  const started = Date.now();
  const outcome = await (env.run(callModel, input) as Promise<CallModelOutput>).then(
    (output) => ({ output, error: undefined }),
    (error: unknown) => ({ output: undefined, error }),
  );
  return { ...outcome, calls, heartbeats, elapsedMs: Date.now() - started };
}

describe('time to first token has its own limit; the heartbeat timeout bounds gaps between chunks', () => {
  test('a first chunk later than the heartbeat timeout but within the first-token limit: the call succeeds, heartbeating while it waits', async () => {
    const { output, error, heartbeats } = await callWith(() =>
      streamOf(ANSWER, { firstDelayMs: 3 * HEARTBEAT_TIMEOUT_MS }),
    );
    assert.equal(error, undefined, String(error));
    assert.equal(output?.turn.answer, '4');
    const waiting = heartbeats.filter((details) => details.chunks === 0);
    // About 8 at a 100 ms interval over the 900 ms wait; a loaded machine delays timers, so the
    // test asks only that heartbeats repeat while nothing has arrived (one alone would not).
    assert.ok(
      waiting.length >= 2,
      `expected heartbeats every ${heartbeatIntervalFor(HEARTBEAT_TIMEOUT_MS)} ms while waiting, got ${waiting.length}`,
    );
    assert.ok(
      waiting.every((details) => typeof details.waitingForFirstTokenSeconds === 'number'),
      'the heartbeat says what it is waiting for',
    );
  });

  test('no chunk within the first-token limit: the request is aborted and the call fails retryably with FirstTokenTimeout', async () => {
    const { error, calls, elapsedMs } = await callWith(({ options }) => stallingStream([], options.signal));
    assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(error)}`);
    assert.equal(error.type, FailureTypes.modelFirstTokenTimeout);
    assert.equal(error.type, 'ReactAgent.Model.FirstTokenTimeout');
    assert.equal(error.nonRetryable, false);
    assert.match(error.message, /no reply within 1\.5 s \(REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS\)/);
    assert.equal(calls[0]?.options.signal?.aborted, true, 'the request was aborted');
    assert.ok(
      elapsedMs >= FIRST_TOKEN_SECONDS * 1000 - 20,
      `gave up after ${elapsedMs} ms, before the first-token limit`,
    );
    assert.ok(elapsedMs < FIRST_TOKEN_SECONDS * 1000 + 1_500, `took ${elapsedMs} ms to give up`);
  });

  test('a server that never even answers the request is given up on at the first-token limit too', async () => {
    const { error } = await callWith(
      ({ options }) =>
        new Promise((_resolve, reject) => {
          options.signal?.addEventListener('abort', () => reject(new Error('Request was aborted.')), { once: true });
        }),
    );
    assert.ok(error instanceof ApplicationFailure);
    assert.equal(error.type, FailureTypes.modelFirstTokenTimeout);
  });

  test('after the first chunk, a gap longer than the heartbeat timeout still ends the call (BadResponse), long before the first-token limit', async () => {
    const { error, elapsedMs } = await callWith(({ options }) => stallingStream(ANSWER.slice(0, 2), options.signal));
    assert.ok(error instanceof ApplicationFailure);
    assert.equal(error.type, FailureTypes.modelBadResponse);
    assert.match(error.message, /stall limit\) after 2 chunks/);
    assert.ok(
      elapsedMs < FIRST_TOKEN_SECONDS * 1000,
      `took ${elapsedMs} ms: the stall limit, not the first-token limit, applies once chunks flow`,
    );
  });

  test('heartbeats stop when the request ends', async () => {
    const { output, heartbeats } = await callWith(() => streamOf(ANSWER, { firstDelayMs: 2 * HEARTBEAT_TIMEOUT_MS }));
    assert.equal(output?.turn.answer, '4');
    const counted = heartbeats.length;
    await new Promise((resolve) => setTimeout(resolve, 3 * heartbeatIntervalFor(HEARTBEAT_TIMEOUT_MS)));
    assert.equal(heartbeats.length, counted);
  });
});
