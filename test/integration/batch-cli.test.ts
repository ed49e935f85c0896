import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { BatchProgress } from '../../src/core/batch-progress';
import { AgentEnvironment } from './support/agent-environment';
import { answerReply, iterFileProblems, iterLines, pairOf, toolReply, turnOf, waitFor } from './support/batch-helpers';
import { CliProcess } from './support/cli-process';

/** Questions whose text says how the scripted model answers them: "slow" ones wait in a tool. */
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: (request) => {
      const pair = pairOf(request);
      const question = String(request.messages[1]?.content ?? '');
      if (!pair) return { status: 500, errorMessage: 'not a batch run' };
      if (question.includes('slow') && turnOf(request) === 1) return toolReply('wait', { seconds: 60 });
      return turnOf(request) === 1
        ? toolReply('lookup', { query: question })
        : answerReply(`A${pair.index}-r${pair.rollout}`);
    },
  });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

async function cli(
  argumentsList: string[],
  timeoutMs = 180_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const process = CliProcess.start(argumentsList, { environment: environment.environment, timeoutMs });
  const { code } = await process.exited;
  return { code, stdout: process.stdout, stderr: process.stderr };
}

async function batchCount(): Promise<number> {
  return (await environment.client.workflow.count(`WorkflowType = 'researchBatch'`)).count;
}

function file(name: string, text: string): string {
  const path = join(environment.directory, name);
  writeFileSync(path, text);
  return path;
}

test('batch --wait runs a .csv file with 2 rollouts to the end: progress lines, the summary, complete iter files, exit 0', async () => {
  const input = file(
    'questions.csv',
    `question,answer\n${Array.from({ length: 6 }, (_, index) => `"Question ${index}, please?",ref-${index}`).join('\n')}\n`,
  );
  const output = join(environment.directory, 'cli-wait');
  const outcome = await cli([
    'batch',
    input,
    '--output',
    output,
    '--rollouts',
    '2',
    '--concurrency',
    '3',
    '--name',
    'cli wait',
    '--max-calls',
    '5',
    '--wait',
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);
  const [id] = outcome.stdout.trim().split('\n');
  assert.match(id as string, /^batch-cli-wait-\d{8}-\d{6}-[0-9a-z]+$/);
  assert.match(outcome.stderr, new RegExp(`Batch ${id} started: 6 questions × 2 rollouts → ${output}`));
  assert.match(outcome.stderr, /\[[#-]{24}\] \d+\/12/, 'a plain progress line (stderr is not a terminal)');
  assert.match(outcome.stdout, /completed after .*: 12 lines in/);
  assert.match(outcome.stdout, /iter1\.jsonl: answer 6\n {2}iter2\.jsonl: answer 6/);
  for (const rollout of [1, 2]) {
    const lines = iterLines(output, rollout);
    assert.deepEqual(iterFileProblems(lines, 6, rollout), []);
    assert.deepEqual(
      lines.map((line) => [line.question, line.answer, line.prediction]),
      Array.from({ length: 6 }, (_, index) => [`Question ${index}, please?`, `ref-${index}`, `A${index}-r${rollout}`]),
    );
  }
  const description = await environment.client.workflow.getHandle(id as string).describe();
  assert.equal(await description.staticSummary(), `6 questions × 2 rollouts → ${output}`);

  const listed = await cli(['list', '--batches']);
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, new RegExp(`^${id}\\tCOMPLETED\\t6×2\\t${output}\\t`, 'm'));

  const again = await cli(['batch', input, '--output', output]);
  assert.equal(again.code, 2, 'results there and no --resume');
  assert.match(again.stderr, new RegExp(`already holds results of batch ${id}\\. Add --resume`));
}, 240_000);

test('bad input exits 2 with every bad line and starts nothing; so do --rollouts 0, an unknown extension and an unusable output directory', async () => {
  const before = await batchCount();
  const bad = file(
    'bad.jsonl',
    ['{"question":"fine"}', 'not json at all', '{"answer":"no question"}', `{"question":"${'x'.repeat(20_001)}"}`].join(
      '\n',
    ),
  );
  const outcome = await cli(['batch', bad, '--output', join(environment.directory, 'never')]);
  assert.equal(outcome.code, 2);
  assert.match(outcome.stderr, /bad\.jsonl:2: not JSON/);
  assert.match(outcome.stderr, /bad\.jsonl:3: no question/);
  assert.match(outcome.stderr, /bad\.jsonl:4: question too long: 20001 characters/);
  assert.match(outcome.stderr, /3 problems; nothing was started\./);

  const empty = await cli(['batch', file('empty.jsonl', ''), '--output', join(environment.directory, 'never')]);
  assert.equal(empty.code, 2);
  assert.match(empty.stderr, /empty\.jsonl: the file has no questions/);
  const zero = await cli([
    'batch',
    file('ok.jsonl', '{"question":"q"}\n'),
    '--output',
    join(environment.directory, 'never'),
    '--rollouts',
    '0',
  ]);
  assert.equal(zero.code, 2);
  assert.match(zero.stderr, /--rollouts must be a whole number from 1 to 100, got "0"/);
  const extension = await cli([
    'batch',
    file('questions.yaml', 'question: q'),
    '--output',
    join(environment.directory, 'never'),
  ]);
  assert.equal(extension.code, 2);
  assert.match(extension.stderr, /unknown input format "\.yaml"; use \.jsonl, \.json, \.csv/);
  const unusable = await cli([
    'batch',
    join(environment.directory, 'ok.jsonl'),
    '--output',
    join(environment.directory, 'ok.jsonl', 'below'),
  ]);
  assert.equal(unusable.code, 2);
  assert.match(
    unusable.stderr,
    /Cannot create the output directory .*a part of the path is not a directory.*Nothing was started\./,
  );
  assert.equal(await batchCount(), before, 'no batch was started');
}, 120_000);

test('status, follow and cancel take a batch id: counts per rollout, then a clean cancel that follow reports', async () => {
  const input = file(
    'slow.jsonl',
    Array.from({ length: 5 }, (_, index) => JSON.stringify({ question: `slow question ${index}` })).join('\n'),
  );
  const output = join(environment.directory, 'cli-cancel');
  const started = await cli(['batch', input, '--output', output, '--concurrency', '2']);
  assert.equal(started.code, 0, started.stderr);
  const id = started.stdout.trim();
  const handle = environment.client.workflow.getHandle(id);
  await waitFor(
    'two runs in their tool',
    async () =>
      ((await handle.query('progress')) as BatchProgress).totals.running === 2 &&
      environment.model.requests.filter((request) => request.completed && request.workflowId?.startsWith(`${id}/`))
        .length === 2,
  );

  const status = await cli(['status', id]);
  assert.equal(status.code, 0, status.stderr);
  const described = JSON.parse(status.stdout);
  assert.equal(described.status, 'RUNNING');
  assert.equal(described.summary, `5 questions × 1 rollout → ${output}`);
  assert.deepEqual(described.progress.perRollout, [
    { rollout: 1, queued: 3, running: 2, done: {}, failed: 0, kept: 0 },
  ]);

  const following = CliProcess.start(['follow', id], { environment: environment.environment, timeoutMs: 120_000 });
  await following.waitForStderr(/\[[#-]{24}\] 0\/5 · running 2/);
  const cancelled = await cli(['cancel', id]);
  assert.equal(cancelled.code, 0, cancelled.stderr);
  assert.match(cancelled.stdout, new RegExp(`Cancellation requested for batch ${id}`));
  const { code } = await following.exited;
  assert.equal(code, 1, 'a cancelled batch is not a complete one');
  assert.match(following.stdout, /was cancelled after .*: 2 lines in/);
  assert.match(following.stdout, /iter1\.jsonl: cancelled 2 \(3 not run\)/);
  assert.deepEqual(
    iterLines(output, 1).map((line) => [line.index, line.termination]),
    [
      [0, 'cancelled'],
      [1, 'cancelled'],
    ],
  );
  const after = JSON.parse((await cli(['status', id])).stdout);
  assert.equal(after.status, 'COMPLETED');
  assert.equal(after.result.cancelled, true);
}, 240_000);
