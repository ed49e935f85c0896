import assert from 'node:assert/strict';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import {
  answerReply,
  batchId,
  iterFileProblems,
  iterLines,
  pairOf,
  questions,
  runLinesWritten,
  startBatch,
  toolReply,
  turnOf,
  waitFor,
} from './support/batch-helpers';

/**
 * A batch through process failures: a worker SIGKILLed, the dev server SIGKILLed and restarted.
 * A batch's bookkeeping (iter files, summary, cancellation, resume) is in the workflow tier
 * (test/workflow/research-batch.test.ts).
 */

/** Each batch's model behaviour, by batch id: the reply to a run's model call. */
const behaviours = new Map<
  string,
  (pair: { index: number; rollout: number }, turn: number, request: ScriptedRequest) => ScriptedReply
>();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: (request) => {
      const pair = pairOf(request);
      const behaviour = pair ? behaviours.get(pair.batchId) : undefined;
      if (!pair || !behaviour) return { status: 500, errorMessage: `no behaviour for ${request.workflowId}` };
      return behaviour(pair, turnOf(request), request);
    },
  });
});

afterAll(async () => {
  await environment?.close();
});

/** Look something up, then answer `A<index>-r<rollout>`. */
const lookupThenAnswer =
  (extra: Partial<ScriptedReply> = {}) =>
  ({ index, rollout }: { index: number; rollout: number }, turn: number): ScriptedReply =>
    turn === 1 ? toolReply('lookup', { query: `q${index}` }, extra) : answerReply(`A${index}-r${rollout}`, extra);

/** Completed model requests per run of a batch. */
function completedRequestsPerRun(id: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of environment.model.requests) {
    if (request.completed && request.workflowId?.startsWith(`${id}/`))
      counts.set(request.workflowId, (counts.get(request.workflowId) ?? 0) + 1);
  }
  return counts;
}

test('a worker SIGKILLed mid-batch: a new worker finishes it, with no duplicate and no missing line', async () => {
  await environment.crashAllWorkers();
  const first = await environment.startWorker();
  const id = batchId('batch-kill');
  behaviours.set(id, lookupThenAnswer({ delayBeforeFirstChunkMs: 300 }));
  const output = join(environment.directory, 'out-kill');
  const handle = await startBatch(environment, id, questions(12), {
    rollouts: 2,
    concurrency: 4,
    output,
    runsPerContinuation: 10,
  });
  await waitFor('a few lines', () => runLinesWritten(output) >= 6);
  await first.crash();
  await environment.startWorker();

  const summary = await handle.result();
  assert.equal(summary.lines, 24);
  for (const rollout of [1, 2]) {
    const lines = iterLines(output, rollout);
    assert.deepEqual(iterFileProblems(lines, 12, rollout), []);
    assert.ok(lines.every((line) => line.termination === 'answer' && line.prediction === `A${line.index}-r${rollout}`));
  }
  assert.equal(completedRequestsPerRun(id).size, 24, 'every pair ran, as one run each');
}, 300_000);

test('the dev server SIGKILLed and restarted mid-batch: the batch finishes with every line once', async () => {
  await environment.crashAllWorkers();
  await environment.startWorker();
  const id = batchId('batch-server');
  behaviours.set(id, lookupThenAnswer({ delayBeforeFirstChunkMs: 300 }));
  const output = join(environment.directory, 'out-server');
  await startBatch(environment, id, questions(10), { rollouts: 1, concurrency: 3, output });
  await waitFor('a few lines', () => runLinesWritten(output) >= 3);
  await environment.server.kill();
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await environment.server.restart();

  const summary = await environment.client.workflow.getHandle(id).result();
  assert.equal(summary.lines, 10);
  assert.deepEqual(iterFileProblems(iterLines(output, 1), 10, 1), []);
}, 300_000);
