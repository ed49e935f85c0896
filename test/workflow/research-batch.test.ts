import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApplicationFailure } from '@temporalio/common';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { BatchProgress } from '../../src/core/batch-progress';
import { FailureTypes } from '../../src/core/failure-types';
import type { ChatMessage } from '../../src/core/messages';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { ScriptedReply } from '../fakes/scripted-model-server';
import { protocolProblems } from '../integration/support/agent-environment';
import {
  answerReply,
  batchId,
  iterFileProblems,
  iterLines,
  questions,
  startBatch,
  toolReply,
  waitFor,
} from '../integration/support/batch-helpers';
import { WorkflowEnvironment } from './support/workflow-environment';

/**
 * A batch's bookkeeping on the real workflows, in process (moved from test/integration/research-batch.test.ts,
 * which keeps a worker SIGKILLed and the dev server SIGKILLed mid-batch): the iter files, the
 * summary, continue-as-new, the search attributes, cancellation and resume. A run whose model
 * rejects the key gets the typed failure the OpenAI adapter throws for a 401.
 */
let environment: WorkflowEnvironment;

beforeAll(async () => {
  environment = await WorkflowEnvironment.start();
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

/** Look something up, then answer `A<index>-r<rollout>`. */
const lookupThenAnswer =
  (extra: Partial<ScriptedReply> = {}) =>
  ({ index, rollout }: { index: number; rollout: number }, turn: number): ScriptedReply =>
    turn === 1 ? toolReply('lookup', { query: `q${index}` }, extra) : answerReply(`A${index}-r${rollout}`, extra);

/** Model requests per run of a batch. */
function completedRequestsPerRun(id: string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const request of environment.requests) {
    if (request.workflowId?.startsWith(`${id}/`))
      counts.set(request.workflowId, (counts.get(request.workflowId) ?? 0) + 1);
  }
  return counts;
}

async function visibleCount(query: string): Promise<number> {
  return (await environment.client.workflow.count(query)).count;
}

test('a 20-question batch with 2 rollouts: both iter files complete and correct, runs tagged, results out of the batch’s history', async () => {
  const id = batchId('batch-20x2');
  environment.addBatch(id, lookupThenAnswer());
  const output = join(environment.directory, 'out-20x2');
  const items = questions(20);
  const handle = await startBatch(environment, id, items, {
    rollouts: 2,
    concurrency: 4,
    output,
    runsPerContinuation: 15,
    name: 'twenty',
  });
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

  await waitFor(
    'visibility to list the batch’s runs',
    async () => (await visibleCount(`ReactBatchId = '${id}'`)) === 40,
    20_000,
  );
  assert.equal(await visibleCount(`ReactBatchId = '${id}' AND ReactRollout = 2`), 20);

  // The batch's last run carried at most 15 runs; its history holds no messages and no lines.
  const history = await environment.client.workflow.getHandle(id).fetchHistory();
  const size = Buffer.byteLength(JSON.stringify(history));
  assert.ok((history.events?.length ?? 0) < 200, `${history.events?.length} events in the last run`);
  assert.ok(!JSON.stringify(history).includes('system prompt'), 'no transcript in the batch history');
  assert.ok(size < 200_000, `last run history ${size} bytes`);
}, 240_000);

test('a cancelled batch starts no new runs; the running ones end cancelled with valid transcripts and their lines; the batch returns its summary', async () => {
  const id = batchId('batch-cancel');
  environment.addBatch(id, (_pair, turn) =>
    turn === 1 ? toolReply('wait', { seconds: 60 }) : answerReply('too late'),
  );
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
  const output = join(environment.directory, 'out-resume');
  const items = questions(6);
  const first = batchId('batch-resume-1');
  environment.addBatch(first, (pair, turn) =>
    [2, 5].includes(pair.index)
      ? ApplicationFailure.nonRetryable('Incorrect API key provided', FailureTypes.modelRequestRejected)
      : lookupThenAnswer()(pair, turn),
  );
  const firstSummary = await (await startBatch(environment, first, items, { rollouts: 1, output })).result();
  assert.deepEqual({ ...firstSummary.perRollout[0]?.terminations }, { answer: 4, error: 2 });

  const second = batchId('batch-resume-2');
  environment.addBatch(second, lookupThenAnswer());
  const secondSummary = await (
    await startBatch(environment, second, items, { rollouts: 1, output, resume: true })
  ).result();
  assert.equal(secondSummary.perRollout[0]?.kept, 4);
  assert.deepEqual({ ...secondSummary.perRollout[0]?.terminations }, { answer: 6 });
  assert.deepEqual(
    [...completedRequestsPerRun(second).keys()].sort(),
    [`${second}/q2-r1`, `${second}/q5-r1`],
    'only the errored pairs ran again',
  );
  const lines = iterLines(output, 1);
  assert.deepEqual(iterFileProblems(lines, 6, 1), []);
  assert.deepEqual(
    lines.map((line) => [line.index, line.termination, line.runId]),
    items.map((_, index) => [index, 'answer', `${[2, 5].includes(index) ? second : first}/q${index}-r1`]),
  );
  assert.deepEqual(JSON.parse(readFileSync(join(output, 'batch.json'), 'utf8')).resumed, [first]);
}, 240_000);

test('a batch whose runs may delegate (run.subruns): each run’s sub-runs answer its parts, and the batch’s usage is the trees’', async () => {
  const id = batchId('batch-subruns');
  environment.addBatch(id, ({ index, rollout }, turn, request) => {
    if ((request.workflowId ?? '').includes('/sub-'))
      return turn === 1 ? toolReply('lookup', { query: 'part' }) : answerReply('part found');
    return turn === 1
      ? toolReply('delegate', {
          tasks: [{ question: `Part one of q${index}?` }, { question: `Part two of q${index}?` }],
        })
      : answerReply(
          `A${index}-r${rollout} from ${(request.messages.at(-1)?.content ?? '').match(/part found/g)?.length} reports`,
        );
  });
  const output = join(environment.directory, 'out-subruns');
  const handle = await startBatch(environment, id, questions(3), {
    rollouts: 1,
    concurrency: 3,
    output,
    run: { subruns: { maxParallel: 2 }, limits: { maxModelCalls: 20 } },
  });
  const summary = await handle.result();
  assert.deepEqual({ ...summary.perRollout[0]?.terminations }, { answer: 3 });
  const lines = iterLines(output, 1);
  assert.deepEqual(
    lines.map((line) => line.prediction),
    ['A0-r1 from 2 reports', 'A1-r1 from 2 reports', 'A2-r1 from 2 reports'],
  );
  // Each run's sub-runs ran under it, and the batch's usage holds the whole trees'.
  const subRunRequests = environment.requests.filter(
    (request) => request.workflowId?.startsWith(`${id}/`) && request.workflowId.includes('/sub-'),
  );
  assert.equal(new Set(subRunRequests.map((request) => request.workflowId)).size, 6);
  let treeTokens = 0;
  for (let index = 0; index < 3; index += 1) {
    const result = (await environment.client.workflow.getHandle(`${id}/q${index}-r1`).result()) as ResearchRunResult;
    assert.equal(result.subRuns?.runs.length, 2);
    treeTokens += result.usage.totalTokens;
  }
  assert.equal(summary.perRollout[0]?.usage.totalTokens, treeTokens);
}, 120_000);
