import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import type { SeaweedServer } from '../../src/processes/seaweed-server';
import { S3Output } from '../../src/storage/output-location';
import { AgentEnvironment } from './support/agent-environment';
import { answerReply, iterFileProblems, pairOf, toolReply, turnOf, type ResultLine } from './support/batch-helpers';
import { CliProcess } from './support/cli-process';
import { S3Objects } from './support/s3-objects';

/**
 * `react-agent batch --output s3://…` on SeaweedFS: the workers write batch.json, the run lines,
 * the iter files and summary.json through S3 (the transcript store stays the local directory, so
 * only the output is on S3), the test reads them back from S3, and --resume works there too.
 */
const BUCKET = 'batch-outputs';
let environment: AgentEnvironment;
let seaweed: SeaweedServer;
let s3: S3Client;

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: (request) => {
      const pair = pairOf(request);
      if (!pair) return { status: 500, errorMessage: 'not a batch run' };
      return turnOf(request) === 1
        ? toolReply('lookup', { query: `q${pair.index}` })
        : answerReply(`A${pair.index}-r${pair.rollout}`);
    },
  });
  seaweed = await environment.startS3([BUCKET]);
  s3 = seaweed.client();
  await environment.startWorker(seaweed.environment());
}, 120_000);

afterAll(async () => {
  s3?.destroy();
  await environment?.close();
}, 60_000);

function cli(argumentsList: string[], extra: Record<string, string> = {}) {
  return CliProcess.complete(argumentsList, {
    environment: { ...environment.environment, ...seaweed.environment(), ...extra },
    timeoutMs: 180_000,
  });
}

const objectText = (key: string) => new S3Objects(s3, BUCKET).text(key);
const keysUnder = (prefix: string) => new S3Objects(s3, BUCKET).keysUnder(prefix);

async function iterLinesOnS3(prefix: string, rollout: number): Promise<ResultLine[]> {
  return (await objectText(`${prefix}/iter${rollout}.jsonl`))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ResultLine);
}

function batchRunsOf(id: string): number {
  return new Set(
    environment.model.requests
      .filter((request) => request.workflowId?.startsWith(`${id}/`))
      .map((request) => request.workflowId),
  ).size;
}

const questionsFile = () => {
  const path = join(environment.directory, 'questions.jsonl');
  writeFileSync(
    path,
    Array.from({ length: 3 }, (_, index) =>
      JSON.stringify({ question: `Question ${index}?`, answer: `ref-${index}` }),
    ).join('\n'),
  );
  return path;
};

test('a batch to s3:// writes batch.json, run lines, iter files and summary.json to the bucket; --resume there reruns only what is missing', async () => {
  const input = questionsFile();
  const prefix = 'nightly/first';
  const output = `s3://${BUCKET}/${prefix}`;
  const outcome = await cli([
    'batch',
    input,
    '--output',
    output,
    '--rollouts',
    '2',
    '--concurrency',
    '3',
    '--max-calls',
    '5',
    '--wait',
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);
  const id = outcome.stdout.trim().split('\n')[0] as string;
  assert.match(
    outcome.stderr,
    new RegExp(`Batch ${id} started: 3 questions × 2 rollouts → s3://${BUCKET}/nightly/first`),
  );
  assert.match(outcome.stdout, /completed after .*: 6 lines in/);

  expect(await keysUnder(`${prefix}/`)).toEqual(
    [
      'batch.json',
      'iter1.jsonl',
      'iter2.jsonl',
      ...[1, 2].flatMap((rollout) => [0, 1, 2].map((index) => `runs/iter${rollout}/q${index}.json`)),
      'summary.json',
    ]
      .map((name) => `${prefix}/${name}`)
      .sort(),
  );
  for (const rollout of [1, 2]) {
    const lines = await iterLinesOnS3(prefix, rollout);
    assert.deepEqual(iterFileProblems(lines, 3, rollout), []);
    assert.deepEqual(
      lines.map((line) => [line.question, line.answer, line.prediction, line.termination]),
      [0, 1, 2].map((index) => [`Question ${index}?`, `ref-${index}`, `A${index}-r${rollout}`, 'answer']),
    );
    assert.ok(
      lines.every((line) => line.messages.length >= 4),
      'lines carry their messages',
    );
  }
  const record = JSON.parse(await objectText(`${prefix}/batch.json`));
  expect(record).toMatchObject({ id, output, status: 'completed', rollouts: 2, questions: 3 });
  const summary = JSON.parse(await objectText(`${prefix}/summary.json`));
  assert.equal(summary.lines, 6);
  assert.equal(existsSync(resolve('s3:')), false, 'nothing was written to a local folder named after the URL');

  const again = await cli(['batch', input, '--output', output]);
  assert.equal(again.code, 2, 'results there and no --resume');
  assert.match(again.stderr, new RegExp(`${output} already holds results of batch ${id}\\. Add --resume`));

  // Lose the run lines and question 2's line of rollout 1: a resume seeds run lines from the iter
  // files and reruns only (q2, r1).
  for (const key of await keysUnder(`${prefix}/runs/`))
    await s3.send(new DeleteObjectCommand({ Bucket: BUCKET, Key: key }));
  const kept = (await iterLinesOnS3(prefix, 1)).filter((line) => line.index !== 2);
  await s3.send(
    new PutObjectCommand({
      Bucket: BUCKET,
      Key: `${prefix}/iter1.jsonl`,
      Body: kept.map((line) => JSON.stringify(line)).join('\n') + '\n',
    }),
  );
  const resumed = await cli([
    'batch',
    input,
    '--output',
    output,
    '--rollouts',
    '2',
    '--concurrency',
    '3',
    '--max-calls',
    '5',
    '--resume',
    '--wait',
  ]);
  assert.equal(resumed.code, 0, resumed.stderr);
  const resumedId = resumed.stdout.trim().split('\n')[0] as string;
  assert.equal(batchRunsOf(resumedId), 1, 'only the missing pair ran again');
  for (const rollout of [1, 2])
    assert.deepEqual(iterFileProblems(await iterLinesOnS3(prefix, rollout), 3, rollout), []);
  const line = (await iterLinesOnS3(prefix, 1)).find((entry) => entry.index === 2);
  assert.equal(line?.runId, `${resumedId}/q2-r1`);
  expect(JSON.parse(await objectText(`${prefix}/batch.json`))).toMatchObject({
    id: resumedId,
    resumed: [id],
    status: 'completed',
  });
}, 300_000);

test('the CLI checks an s3:// output before starting: a missing bucket, refused credentials and a malformed URL exit 2 naming the problem', async () => {
  const input = questionsFile();
  const before = (await environment.client.workflow.count(`WorkflowType = 'researchBatch'`)).count;
  const missing = await cli(['batch', input, '--output', 's3://no-such-bucket/x']);
  assert.equal(missing.code, 2, missing.stderr);
  assert.match(
    missing.stderr,
    /The bucket "no-such-bucket" of the output s3:\/\/no-such-bucket\/x does not exist \(checking it\)\. Create it, or give another s3:\/\/ output\. Nothing was started\./,
  );
  const refused = await cli(['batch', input, '--output', `s3://${BUCKET}/x`], {
    AWS_SECRET_ACCESS_KEY: 'not-the-secret',
  });
  assert.equal(refused.code, 2, refused.stderr);
  assert.match(
    refused.stderr,
    /The output s3:\/\/batch-outputs\/x refused these credentials .*Check AWS_ACCESS_KEY_ID \/ AWS_SECRET_ACCESS_KEY/,
  );
  const malformed = await cli(['batch', input, '--output', 's3://Not_A_Bucket/x']);
  assert.equal(malformed.code, 2, malformed.stderr);
  assert.match(malformed.stderr, /"s3:\/\/Not_A_Bucket\/x" does not name a valid S3 bucket/);
  assert.equal(
    (await environment.client.workflow.count(`WorkflowType = 'researchBatch'`)).count,
    before,
    'nothing was started',
  );
}, 120_000);

test('S3Output: a large file goes up in parts and appears only on close; abort leaves the old object; listing sees folders and files', async () => {
  const output = new S3Output(BUCKET, 'writer-check', s3, { partBytes: 5 * 1024 * 1024 });
  await output.check();
  await output.writeText('iter1.jsonl', 'old\n');
  const line = `${JSON.stringify({ text: '研究 data '.repeat(100) })}\n`;
  const lines = Math.ceil((11 * 1024 * 1024) / Buffer.byteLength(line));
  const writer = await output.openWriter('iter1.jsonl');
  for (let index = 0; index < lines; index += 1) await writer.write(line);
  assert.equal(await output.readText('iter1.jsonl'), 'old\n', 'the old object until the upload completes');
  await writer.close();
  assert.equal(await output.sizeOf('iter1.jsonl'), Buffer.byteLength(line) * lines);
  let read = 0;
  for await (const text of (await output.readLines('iter1.jsonl')) ?? []) if (`${text}\n` === line) read += 1;
  assert.equal(read, lines);

  const abandoned = await output.openWriter('iter1.jsonl');
  for (let index = 0; index < lines; index += 1) await abandoned.write('x'.repeat(1024));
  await abandoned.abort();
  assert.equal(
    await output.sizeOf('iter1.jsonl'),
    Buffer.byteLength(line) * lines,
    'an aborted upload changes nothing',
  );

  await output.writeText('runs/iter1/q0.json', '{}');
  expect((await output.list('')).sort()).toEqual(['iter1.jsonl', 'runs']);
  expect(await output.list('runs/iter1')).toEqual(['q0.json']);
  expect(await output.list('nothing-here')).toEqual([]);
  assert.equal(await output.readText('missing.json'), undefined);
  assert.equal(await output.sizeOf('missing.json'), undefined);
}, 120_000);
