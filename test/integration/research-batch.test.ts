import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { BatchProgress } from '../../src/core/batch-progress';
import type { ChatMessage } from '../../src/core/messages';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answerReply, batchId, iterFileProblems, iterLines, pairOf, questions, runLinesWritten, startBatch, toolReply, turnOf, waitFor } from './support/batch-helpers';

/** Each batch's model behaviour, by batch id: the reply to a run's model call. */
const behaviours = new Map<string, (pair: { index: number; rollout: number }, turn: number, request: ScriptedRequest) => ScriptedReply>();
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
    if (request.completed && request.workflowId?.startsWith(`${id}/`)) counts.set(request.workflowId, (counts.get(request.workflowId) ?? 0) + 1);
  }
  return counts;
}

async function visibleCount(query: string): Promise<number> {
  return (await environment.client.workflow.count(query)).count;
}

test('a 20-question batch with 2 rollouts: both iter files complete and correct, runs tagged, results out of the batch’s history', async () => {
  await environment.crashAllWorkers();
  await environment.startWorker();
  const id = batchId('batch-20x2');
  behaviours.set(id, lookupThenAnswer());
  const output = join(environment.directory, 'out-20x2');
  const items = questions(20);
  const handle = await startBatch(environment, id, items, { rollouts: 2, concurrency: 4, output, runsPerContinuation: 15, name: 'twenty' });
  const summary = await handle.result();

  assert.equal(summary.cancelled, false);
  assert.equal(summary.lines, 40);
  assert.equal(summary.continuedAsNew, 2, '40 runs, 15 per continuation');
  assert.deepEqual(
    summary.perRollout.map((entry) => [entry.rollout, { ...entry.terminations }, entry.failed, entry.notRun]),
    [
      [1, { answer: 20 }, 0, 0],
      [2, { answer: 20 }, 0, 0],
    ],
  );
  assert.ok(summary.perRollout.every((entry) => entry.usage.totalTokens > 0 && entry.durationMs.max > 0));
  for (const rollout of [1, 2]) {
    const lines = iterLines(output, rollout);
    assert.deepEqual(iterFileProblems(lines, 20, rollout), []);
    lines.forEach((line, index) => {
      assert.equal(line.question, items[index]?.question);
      assert.equal(line.answer, `ref-${index}`);
      assert.equal(line.prediction, `A${index}-r${rollout}`);
      assert.equal(line.termination, 'answer');
      assert.equal(line.runId, `${id}/q${index}-r${rollout}`);
      assert.deepEqual(
        line.messages.map((message) => message.role),
        ['system', 'user', 'assistant', 'user', 'assistant'],
      );
      assert.deepEqual(protocolProblems(line.messages as ChatMessage[]), []);
    });
  }
  const written = JSON.parse(readFileSync(join(output, 'summary.json'), 'utf8'));
  assert.equal(written.lines, 40);
  const record = JSON.parse(readFileSync(join(output, 'batch.json'), 'utf8'));
  assert.equal(record.status, 'completed');
  assert.equal(record.model, 'scripted-model');
  assert.equal(record.name, 'twenty');
  assert.match(record.input, /^sha256:[0-9a-f]{64}$/);

  const perRun = completedRequestsPerRun(id);
  assert.equal(perRun.size, 40);
  assert.ok(
    [...perRun.values()].every((count) => count === 2),
    'every run made its two model calls once',
  );

  await waitFor('visibility to list the batch’s runs', async () => (await visibleCount(`ReactBatchId = '${id}'`)) === 40, 20_000);
  assert.equal(await visibleCount(`ReactBatchId = '${id}' AND ReactRollout = 2`), 20);

  // The batch's last run carried at most 15 runs; its history holds no messages and no lines.
  const history = await environment.client.workflow.getHandle(id).fetchHistory();
  const size = Buffer.byteLength(JSON.stringify(history));
  assert.ok((history.events?.length ?? 0) < 200, `${history.events?.length} events in the last run`);
  assert.ok(!JSON.stringify(history).includes('system prompt'), 'no transcript in the batch history');
  assert.ok(size < 200_000, `last run history ${size} bytes`);
}, 240_000);

test('a worker SIGKILLed mid-batch: a new worker finishes it, with no duplicate and no missing line', async () => {
  await environment.crashAllWorkers();
  const first = await environment.startWorker();
  const id = batchId('batch-kill');
  behaviours.set(id, lookupThenAnswer({ delayBeforeFirstChunkMs: 300 }));
  const output = join(environment.directory, 'out-kill');
  const handle = await startBatch(environment, id, questions(12), { rollouts: 2, concurrency: 4, output, runsPerContinuation: 10 });
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

test('a cancelled batch starts no new runs; the running ones end cancelled with valid transcripts and their lines; the batch returns its summary', async () => {
  await environment.crashAllWorkers();
  await environment.startWorker();
  const id = batchId('batch-cancel');
  behaviours.set(id, (_pair, turn) => (turn === 1 ? toolReply('wait', { seconds: 60 }) : answerReply('too late')));
  const output = join(environment.directory, 'out-cancel');
  const handle = await startBatch(environment, id, questions(10), { rollouts: 1, concurrency: 3, output });
  let progress: BatchProgress | undefined;
  await waitFor('three runs waiting in their tool', async () => {
    progress = (await handle.query('progress')) as BatchProgress;
    return completedRequestsPerRun(id).size === 3;
  });
  assert.equal(progress?.state, 'running');
  assert.deepEqual({ ...progress?.perRollout[0] }, { rollout: 1, queued: 7, running: 3, done: {}, failed: 0, kept: 0 });

  await handle.cancel();
  const summary = await handle.result();
  assert.equal(summary.cancelled, true);
  assert.equal(summary.lines, 3);
  assert.deepEqual({ ...summary.perRollout[0]?.terminations }, { cancelled: 3 });
  assert.equal(summary.perRollout[0]?.notRun, 7);
  assert.equal((await handle.describe()).status.name, 'COMPLETED', 'the batch ended cleanly');
  const lines = iterLines(output, 1);
  assert.deepEqual(
    lines.map((line) => line.index),
    [0, 1, 2],
  );
  for (const line of lines) {
    assert.equal(line.termination, 'cancelled');
    assert.deepEqual(protocolProblems(line.messages as ChatMessage[]), []);
  }
  assert.equal(completedRequestsPerRun(id).size, 3, 'no run started after the cancel');
  assert.equal(JSON.parse(readFileSync(join(output, 'batch.json'), 'utf8')).status, 'cancelled');
}, 240_000);

test('resume reruns only the runs that ended in error; their new lines replace the old ones', async () => {
  await environment.crashAllWorkers();
  await environment.startWorker();
  const output = join(environment.directory, 'out-resume');
  const items = questions(6);
  const first = batchId('batch-resume-1');
  behaviours.set(first, (pair, turn) => ([2, 5].includes(pair.index) ? { status: 401, errorMessage: 'Incorrect API key provided' } : lookupThenAnswer()(pair, turn)));
  const firstSummary = await (await startBatch(environment, first, items, { rollouts: 1, output })).result();
  assert.deepEqual({ ...firstSummary.perRollout[0]?.terminations }, { answer: 4, error: 2 });

  const second = batchId('batch-resume-2');
  behaviours.set(second, lookupThenAnswer());
  const secondSummary = await (await startBatch(environment, second, items, { rollouts: 1, output, resume: true })).result();
  assert.equal(secondSummary.perRollout[0]?.kept, 4);
  assert.deepEqual({ ...secondSummary.perRollout[0]?.terminations }, { answer: 6 });
  assert.deepEqual([...completedRequestsPerRun(second).keys()].sort(), [`${second}/q2-r1`, `${second}/q5-r1`], 'only the errored pairs ran again');
  const lines = iterLines(output, 1);
  assert.deepEqual(iterFileProblems(lines, 6, 1), []);
  assert.deepEqual(
    lines.map((line) => [line.index, line.termination, line.runId]),
    items.map((_, index) => [index, 'answer', `${[2, 5].includes(index) ? second : first}/q${index}-r1`]),
  );
  assert.deepEqual(JSON.parse(readFileSync(join(output, 'batch.json'), 'utf8')).resumed, [first]);
}, 240_000);
