/**
 * Shared model limits across workers (issue 33): a scripted provider that enforces a
 * tokens-per-minute limit itself (a token bucket of a minute's worth, 429 with retry-after when a
 * request does not fit), two worker processes configured with the same limit in
 * REACT_AGENT_MODEL_LIMITS, and many runs at once. Every run answers, almost no call sees a 429,
 * and the tokens the provider served are close to what its limit allowed over the busy period.
 * Then a worker is SIGKILLed while its call holds a reservation: the other worker's calls go on,
 * and the limiter forgets the dead call's lease after the lease time.
 */
import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import { modelLimiterStateQuery } from '../../src/core/model-limits/limiter-messages';
import { modelLimiterWorkflowId } from '../../src/core/model-limits/model-limit';
import { AgentEnvironment } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

const RUNS = 40;
const CALLS_PER_RUN = 3;
/** Sized so the runs need about a minute beyond the bucket's first minute's worth. */
const TOKENS_PER_MINUTE = 40_000;
const LEASE_SECONDS = 8;
const LIMITS = JSON.stringify({
  'scripted-model': { tokensPerMinute: TOKENS_PER_MINUTE, reservedOutputTokens: 40, leaseSeconds: LEASE_SECONDS },
});

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  environment.model.setTokensPerMinute(TOKENS_PER_MINUTE);
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

test(`${RUNS} runs on 2 workers under a provider's ${TOKENS_PER_MINUTE} tokens/minute: every run answers, at most 1 % of calls see a 429, and at least 85 % of what the limit allowed is used`, async () => {
  await Promise.all([
    environment.startWorker({ REACT_AGENT_MODEL_LIMITS: LIMITS }),
    environment.startWorker({ REACT_AGENT_MODEL_LIMITS: LIMITS }),
  ]);
  assert.match(environment.workers[0]?.log ?? '', /shared limits for scripted-model/);
  const ids = Array.from({ length: RUNS }, (_, run) =>
    scenarios.add(runId(`limited-${run}`), [
      ...Array.from({ length: CALLS_PER_RUN - 1 }, (_, call) =>
        toolCall('lookup', { query: `run ${run} step ${call}` }),
      ),
      answer(`Answer ${run}.`),
    ]),
  );
  const handles = await Promise.all(ids.map((id) => environment.startRun({ question: `Limited question ${id}?` }, id)));
  const results = (await Promise.all(handles.map((handle) => handle.result()))) as ResearchRunResult[];
  for (const result of results) assert.equal(result.termination, 'answer');

  const idSet = new Set(ids);
  const records = environment.model.requests.filter((request) => idSet.has(request.workflowId ?? ''));
  const refused = records.filter((request) => request.status === 429).length;
  const served = records.filter((request) => request.status === 200);
  const tokens = served.reduce((sum, request) => sum + (request.tokens ?? 0), 0);
  const times = records.map((request) => request.receivedAt);
  const minutes = (Math.max(...times) - Math.min(...times)) / 60_000;
  // What the provider's bucket allowed over the busy period: its first minute's worth, then its refill.
  const allowed = TOKENS_PER_MINUTE * (1 + minutes);
  console.log(
    `model limits: ${RUNS} runs x ${CALLS_PER_RUN} calls on 2 workers, limit ${TOKENS_PER_MINUTE} tokens/min: ` +
      `${records.length} requests, ${refused} saw a 429, ${tokens} tokens served in ${(minutes * 60).toFixed(1)} s ` +
      `(${Math.round(tokens / minutes)} tokens/min; ${((100 * tokens) / allowed).toFixed(1)} % of the ${Math.round(allowed)} the limit allowed)`,
  );
  const ratios = served.map((request) => request.tokens ?? 0);
  console.log(`tokens per call: min ${Math.min(...ratios)}, max ${Math.max(...ratios)}`);
  const repeated = served.length - new Set(served.map((request) => `${request.workflowId}#${request.modelCall}`)).size;
  if (repeated)
    console.log(
      `repeated: ${served
        .filter((r) => served.filter((o) => o.workflowId === r.workflowId && o.modelCall === r.modelCall).length > 1)
        .map((r) => `${r.workflowId}#${r.modelCall}@${r.receivedAt} ${r.purpose ?? ''}`)
        .join(', ')}`,
    );
  assert.equal(served.length - repeated, RUNS * CALLS_PER_RUN);
  assert.ok(refused <= 0.01 * records.length, `${refused} of ${records.length} calls saw a 429`);
  assert.ok(tokens >= 0.85 * allowed, `${tokens} tokens served of the ${Math.round(allowed)} the limit allowed`);
}, 300_000);

test('a worker SIGKILLed while its call holds a reservation: the other worker goes on within the lease time, and the lease is forgotten', async () => {
  const [first, second] = environment.workers;
  assert.ok(first && second);
  // The held call: its first attempt hangs at the provider until its worker dies.
  const heldId = scenarios.add(runId('held'), (turn, request) =>
    turn === 1 && environment.requestsOf(request.workflowId ?? '').length <= 1
      ? { ...answer('late'), delayBeforeFirstChunkMs: 120_000 }
      : answer('Held answer.'),
  );
  const held = await environment.startRun({ question: 'A question whose call hangs?' }, heldId);
  const hanging = await environment.model.waitForRequest((request) => request.workflowId === heldId, 60_000);
  const limiter = environment.client.workflow.getHandle(modelLimiterWorkflowId('scripted-model'));
  await delay(500); // its lease is booked before the request, the activity started before that
  const leasesBefore = Object.keys((await limiter.query(modelLimiterStateQuery)).leases).length;
  assert.ok(leasesBefore >= 1, 'the hanging call holds a lease');
  // SIGKILL whichever worker holds it (the other keeps serving).
  const pending = (await held.describe()).raw.pendingActivities ?? [];
  const identity = pending.find((activity) => activity.activityType?.name === 'callModel')?.lastWorkerIdentity ?? '';
  const holder = [first, second].find((worker) => identity.startsWith(`${worker.pid}@`));
  assert.ok(holder, `the worker holding the call (${identity}) is one of ours`);
  await holder.crash();
  const killedAt = Date.now();

  const nextId = scenarios.add(runId('after-kill'), [answer('Still served.')]);
  const next = await environment.startRun({ question: 'Served after the kill?' }, nextId);
  const served = await environment.model.waitForRequest(
    (request) => request.workflowId === nextId && request.status === 200,
    LEASE_SECONDS * 1_000 + 10_000,
  );
  const secondsAfterKill = (served.receivedAt - killedAt) / 1000;
  assert.ok(
    secondsAfterKill <= LEASE_SECONDS,
    `the next call reached the provider ${secondsAfterKill} s after the kill`,
  );
  assert.equal(((await next.result()) as ResearchRunResult).termination, 'answer');
  // The held run's call is retried on the other worker after its heartbeat timeout.
  assert.equal(((await held.result()) as ResearchRunResult).termination, 'answer');
  assert.ok(hanging.aborted || hanging.completed === false);

  // The dead call's lease is forgotten after its lease time (at the limiter's next message).
  await delay(LEASE_SECONDS * 1_000);
  const probeId = scenarios.add(runId('probe'), [answer('Probe.')]);
  await (await environment.startRun({ question: 'Probe?' }, probeId)).result();
  const state = await limiter.query(modelLimiterStateQuery);
  assert.deepEqual(Object.keys(state.leases), [], `leases left: ${JSON.stringify(state.leases)}`);
}, 180_000);
