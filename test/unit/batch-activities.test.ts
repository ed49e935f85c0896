import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createBatchActivities } from '../../activities/batch-activities';
import { putConversation, putMessage } from '../../src/storage/conversation';
import type { BatchRecord, BatchSummary } from '../../src/core/batch-contract';
import { storeBatchInput } from '../../src/storage/batch-input-file';
import { BatchFailureTypes } from '../../src/core/batch-messages';
import { runLinePath } from '../../src/storage/batch-output';
import type { ResearchRunResult } from '../../src/core/run-result';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const root = mkdtempSync(join(tmpdir(), 'batch-activities-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let directories = 0;
const freshDirectory = () => join(root, `out-${++directories}`);

const environment = new MockActivityEnvironment({}, { logger: new DefaultLogger('ERROR') });
const run = <A extends unknown[], R>(activity: (...args: A) => Promise<R>, ...args: A): Promise<R> =>
  environment.run(activity, ...args) as Promise<R>;

async function setUp(
  questions = [{ question: 'q0', answer: 'a0' }, { question: 'q1' }, { question: 'q2', answer: 'a2' }],
) {
  const store = new MemoryTranscriptStore();
  const input = await storeBatchInput(store, questions);
  const results = new Map<string, ResearchRunResult>();
  const reads: string[] = [];
  const activities = createBatchActivities({
    store,
    defaultModel: 'worker-model',
    resultOf: async (workflowId) => {
      reads.push(workflowId);
      const result = results.get(workflowId);
      if (!result) throw new Error(`no result for ${workflowId}`);
      return result;
    },
  });
  const record = (output: string, id = 'batch-1'): BatchRecord => ({
    id,
    input,
    questions: questions.length,
    rollouts: 2,
    concurrency: 2,
    run: {},
    output,
    startedAt: '2026-01-01T00:00:00.000Z',
    status: 'running',
  });
  const addResult = async (
    workflowId: string,
    question: string,
    termination: ResearchRunResult['termination'],
    prediction = `answer to ${question}`,
  ) => {
    const transcript = await putConversation(store, [
      await putMessage(store, { role: 'system', content: 'system prompt' }),
      await putMessage(store, { role: 'user', content: question }),
      await putMessage(store, {
        role: 'assistant',
        content: `<answer>${prediction}</answer>`,
        reasoning: 'thinking it over',
      }),
    ]);
    results.set(workflowId, {
      question,
      answer: '',
      prediction,
      termination,
      transcript,
      iterations: 1,
      toolCalls: 0,
      usage: { promptTokens: 10, completionTokens: 2, totalTokens: 12 },
      contextTokens: 12,
      durationMs: 1234,
      details: { protocol: 'deep-research', compressions: [], stuckNudges: 0, continuedAsNew: 0 },
    });
  };
  return { store, input, activities, record, addResult, reads };
}

function failureType(error: unknown): string | undefined {
  return error instanceof ApplicationFailure ? (error.type ?? undefined) : undefined;
}

describe('openBatchOutput', () => {
  test('creates the directory and writes batch.json with the model the runs use', async () => {
    const { activities, record } = await setUp();
    const output = join(freshDirectory(), 'nested', 'dir');
    assert.deepEqual(await run(activities.openBatchOutput, { record: record(output), resume: false }), {
      model: 'worker-model',
    });
    const written = JSON.parse(readFileSync(join(output, 'batch.json'), 'utf8'));
    assert.equal(written.id, 'batch-1');
    assert.equal(written.model, 'worker-model');
    assert.equal(written.status, 'running');
    const named = await run(activities.openBatchOutput, {
      record: { ...record(freshDirectory()), run: { model: { model: 'run-model' } } },
      resume: false,
    });
    assert.equal(named.model, 'run-model');
    assert.deepEqual(
      await run(activities.openBatchOutput, { record: record(output), resume: false }),
      { model: 'worker-model' },
      'a retried open of the same batch is fine',
    );
  });

  test('an unusable directory, or another batch’s results without --resume, is refused for good', async () => {
    const { activities, record } = await setUp();
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    for (const output of [file, join(file, 'below')]) {
      await assert.rejects(
        run(activities.openBatchOutput, { record: record(output), resume: false }),
        (error: unknown) => {
          assert.equal(failureType(error), BatchFailureTypes.outputUnusable);
          assert.equal((error as ApplicationFailure).nonRetryable, true);
          assert.match((error as Error).message, /is not a directory|a part of the path is not a directory/);
          return true;
        },
      );
    }
    const output = freshDirectory();
    await run(activities.openBatchOutput, { record: record(output), resume: false });
    mkdirSync(join(output, 'runs', 'iter1'), { recursive: true });
    writeFileSync(runLinePath(output, 1, 0), '{"termination":"answer"}\n');
    await assert.rejects(
      run(activities.openBatchOutput, { record: record(output, 'batch-2'), resume: false }),
      /already holds results of batch batch-1; add --resume/,
    );
    await assert.rejects(
      run(activities.openBatchOutput, {
        record: { ...record(output, 'batch-2'), input: `sha256:${'b'.repeat(64)}` },
        resume: true,
      }),
      /holds results of batch batch-1 over other questions/,
    );
    await run(activities.openBatchOutput, { record: record(output, 'batch-2'), resume: true });
    assert.deepEqual(JSON.parse(readFileSync(join(output, 'batch.json'), 'utf8')).resumed, ['batch-1']);
  });
});

describe('prepareBatchChunk', () => {
  test('gives each ordinal its question, rollout by rollout', async () => {
    const { activities, input } = await setUp();
    const { items } = await run(activities.prepareBatchChunk, {
      input,
      output: freshDirectory(),
      questions: 3,
      rollouts: 2,
      from: 2,
      to: 5,
      resume: false,
    });
    assert.deepEqual(items, [
      { ordinal: 2, question: 'q2', answer: 'a2' },
      { ordinal: 3, question: 'q0', answer: 'a0' },
      { ordinal: 4, question: 'q1' },
    ]);
  });

  test('when resuming, pairs whose line did not end error are kept; errored and missing ones run again', async () => {
    const { activities, input } = await setUp();
    const output = freshDirectory();
    mkdirSync(join(output, 'runs', 'iter1'), { recursive: true });
    writeFileSync(runLinePath(output, 1, 0), '{"termination":"answer"}\n');
    writeFileSync(runLinePath(output, 1, 1), '{"termination":"error"}\n');
    writeFileSync(runLinePath(output, 1, 2), '{"termination":"max_calls"}\n');
    const { items } = await run(activities.prepareBatchChunk, {
      input,
      output,
      questions: 3,
      rollouts: 2,
      from: 0,
      to: 4,
      resume: true,
    });
    assert.deepEqual(items, [
      { ordinal: 0, kept: 'answer' },
      { ordinal: 1, question: 'q1' },
      { ordinal: 2, kept: 'max_calls' },
      { ordinal: 3, question: 'q0', answer: 'a0' },
    ]);
  });

  test('missing stored questions fail for good, naming the reference', async () => {
    const { activities } = await setUp();
    const missing = `sha256:${'c'.repeat(64)}`;
    await assert.rejects(
      run(activities.prepareBatchChunk, {
        input: missing,
        output: freshDirectory(),
        questions: 3,
        rollouts: 1,
        from: 0,
        to: 1,
        resume: false,
      }),
      (error: unknown) => {
        assert.equal(failureType(error), BatchFailureTypes.inputMissing);
        assert.match((error as Error).message, new RegExp(missing));
        return true;
      },
    );
  });
});

describe('writeBatchLine and finishBatchOutput', () => {
  test('a run’s line in DeepResearch’s shape, written once however often the activity runs; the iter files assembled in question order', async () => {
    const { activities, record, addResult, reads } = await setUp();
    const output = freshDirectory();
    await run(activities.openBatchOutput, { record: record(output), resume: false });
    await addResult('batch-1/q0-r1', 'q0', 'answer');
    await addResult('batch-1/q2-r1', 'q2', 'max_calls');
    await addResult('batch-1/q0-r2', 'q0', 'cancelled');
    const write = (workflowId: string, index: number, rollout: number) =>
      run(activities.writeBatchLine, { output, batchId: 'batch-1', workflowId, index, rollout });
    assert.deepEqual(await write('batch-1/q2-r1', 2, 1), { termination: 'max_calls' });
    assert.deepEqual(await write('batch-1/q0-r1', 0, 1), { termination: 'answer' });
    assert.deepEqual(await write('batch-1/q0-r1', 0, 1), { termination: 'answer' }, 'a retry');
    await write('batch-1/q0-r2', 0, 2);
    assert.deepEqual(
      await run(activities.writeBatchLine, {
        output,
        batchId: 'batch-1',
        workflowId: 'batch-1/q1-r1',
        index: 1,
        rollout: 1,
        failure: { message: 'Invalid run input: bad', question: 'q1' },
      }),
      { termination: 'error' },
    );
    assert.deepEqual(
      reads,
      ['batch-1/q2-r1', 'batch-1/q0-r1', 'batch-1/q0-r1', 'batch-1/q0-r2'],
      'the line writer read each result itself; a failure needs none',
    );
    assert.deepEqual(
      [...readdirSync(join(output, 'runs', 'iter1'))].sort(),
      ['q0.json', 'q1.json', 'q2.json'],
      'no temporary files left behind',
    );

    const summary = {
      batchId: 'batch-1',
      output,
      rollouts: 2,
      questions: 3,
      cancelled: true,
      endedAt: '2026-01-01T01:00:00.000Z',
      perRollout: [],
    } as unknown as BatchSummary;
    assert.deepEqual(await run(activities.finishBatchOutput, { output, summary }), { lines: [3, 1] });
    const iter1 = readFileSync(join(output, 'iter1.jsonl'), 'utf8')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    assert.deepEqual(
      iter1.map((line) => [line.index, line.termination]),
      [
        [0, 'answer'],
        [1, 'error'],
        [2, 'max_calls'],
      ],
    );
    const first = iter1[0];
    assert.deepEqual(
      Object.keys(first).slice(0, 5),
      ['question', 'answer', 'messages', 'prediction', 'termination'],
      'DeepResearch’s fields first',
    );
    assert.deepEqual(Object.keys(first).slice(5), [
      'runId',
      'batchId',
      'index',
      'rollout',
      'usage',
      'iterations',
      'toolCalls',
      'contextTokens',
      'durationMs',
    ]);
    assert.equal(first.runId, 'batch-1/q0-r1');
    assert.equal(first.prediction, 'answer to q0');
    assert.deepEqual(
      first.messages.map((message: { role: string }) => message.role),
      ['system', 'user', 'assistant'],
    );
    assert.equal(
      first.messages[2].content,
      '<think>thinking it over</think>\n<answer>answer to q0</answer>',
      'reasoning kept as the <think> part',
    );
    assert.equal(iter1[1].error, 'Invalid run input: bad');
    assert.equal(iter1[1].question, 'q1');
    assert.equal(
      readFileSync(join(output, 'iter2.jsonl'), 'utf8').trimEnd().split('\n').length,
      1,
      'only the pair that ran',
    );
    assert.equal(JSON.parse(readFileSync(join(output, 'summary.json'), 'utf8')).lines, 4);
    const closed = JSON.parse(readFileSync(join(output, 'batch.json'), 'utf8'));
    assert.equal(closed.status, 'cancelled');
    assert.equal(closed.endedAt, '2026-01-01T01:00:00.000Z');

    assert.deepEqual(
      await run(activities.finishBatchOutput, { output, summary }),
      { lines: [3, 1] },
      'assembling again gives the same files',
    );
    assert.equal(readFileSync(join(output, 'iter1.jsonl'), 'utf8').trimEnd().split('\n').length, 3);
  });

  test('resuming from iter files alone: their lines become run lines, so none is lost or doubled', async () => {
    const { activities, record } = await setUp();
    const output = freshDirectory();
    mkdirSync(output, { recursive: true });
    writeFileSync(
      join(output, 'iter1.jsonl'),
      `${JSON.stringify({ question: 'q0', termination: 'answer', index: 0 })}\n${JSON.stringify({ question: 'q2', termination: 'error', index: 2 })}\nnot json\n`,
    );
    await run(activities.openBatchOutput, { record: record(output, 'batch-9'), resume: true });
    assert.ok(existsSync(runLinePath(output, 1, 0)));
    assert.ok(existsSync(runLinePath(output, 1, 2)));
    assert.ok(!existsSync(runLinePath(output, 1, 1)));
  });
});

describe('the data roots', () => {
  test('every activity that touches the output refuses one outside the roots, for good, and makes nothing there (a continued batch never opens its output again)', async () => {
    const { store, input, record } = await setUp();
    const inside = join(root, 'roots-inside');
    const activities = createBatchActivities({
      store,
      defaultModel: 'worker-model',
      dataRoots: [inside],
      resultOf: () => Promise.reject(new Error('not asked')),
    });
    const outside = freshDirectory();
    const refused = (error: unknown) => {
      assert.equal(failureType(error), BatchFailureTypes.outputOutsideDataRoots, String(error));
      assert.ok(
        (error as Error).message.includes(JSON.stringify(outside)) && (error as Error).message.includes(inside),
        (error as Error).message,
      );
      assert.equal((error as ApplicationFailure).nonRetryable, true);
      return true;
    };
    await assert.rejects(run(activities.openBatchOutput, { record: record(outside), resume: false }), refused);
    await assert.rejects(
      run(activities.prepareBatchChunk, {
        input,
        output: outside,
        questions: 3,
        rollouts: 2,
        from: 0,
        to: 1,
        resume: true,
      }),
      refused,
    );
    await assert.rejects(
      run(activities.writeBatchLine, {
        output: outside,
        batchId: 'batch-1',
        workflowId: 'batch-1/q0-r1',
        index: 0,
        rollout: 1,
        failure: { message: 'failed', question: 'q0' },
      }),
      refused,
    );
    const summary = {
      batchId: 'batch-1',
      output: outside,
      input,
      questions: 3,
      rollouts: 2,
    } as unknown as BatchSummary;
    await assert.rejects(run(activities.finishBatchOutput, { output: outside, summary }), refused);
    assert.equal(existsSync(outside), false);
    await run(activities.openBatchOutput, { record: record(join(inside, 'out')), resume: false });
    assert.ok(existsSync(join(inside, 'out', 'batch.json')));
  });
});
