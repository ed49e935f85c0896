import assert from 'node:assert/strict';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { S3Client } from '@aws-sdk/client-s3';
import type { EvaluationReport } from '../../src/core/evaluation/evaluation-report';
import type { SeaweedServer } from '../../src/processes/seaweed-server';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import { answerReply, pairOf } from './support/batch-helpers';
import { CliProcess } from './support/cli-process';
import { S3Objects } from './support/s3-objects';

/*
 * Evaluation through S3 (issue 13) on SeaweedFS: a batch to s3:// with --evaluate (the workers
 * read the iter files from the bucket and write evaluation/ there), `react-agent eval s3://…`
 * (exact match here in the CLI; with --judge gaia the workers read and write S3), `eval compare`
 * of two s3:// evaluations, and bad s3:// inputs. The transcript store stays local; everything
 * the evaluation reads and writes is read back from the bucket.
 */
const BUCKET = 'evaluations';
let environment: AgentEnvironment;
let seaweed: SeaweedServer;
let s3: S3Client;

/** Batch runs: rollout 1 answers right, rollout 2 wrong. The gaia judge: Correct when the prediction is the reference. */
function script(request: ScriptedRequest): ScriptedReply {
  const pair = pairOf(request);
  if (pair) {
    const question = String(request.messages[1]?.content ?? '');
    return answerReply(pair.rollout === 1 ? (question.includes('France') ? 'Paris' : '4') : 'no idea');
  }
  const prompt = String(request.messages[0]?.content ?? '');
  const reference = /Reference answer: (.*)/.exec(prompt)?.[1];
  const prediction = /Predicted answer: (.*)/.exec(prompt)?.[1];
  if (reference === undefined || prediction === undefined)
    return { status: 400, errorMessage: 'unexpected judge prompt' };
  return { content: reference.trim() === prediction.trim() ? 'Correct' : 'Incorrect' };
}

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script });
  seaweed = await environment.startS3([BUCKET]);
  s3 = seaweed.client();
  await environment.startWorker(seaweed.environment());
}, 180_000);

afterAll(async () => {
  s3?.destroy();
  await environment?.close();
}, 60_000);

function cli(argumentsList: string[]) {
  return CliProcess.complete(argumentsList, {
    environment: { ...environment.environment, ...seaweed.environment() },
    timeoutMs: 240_000,
  });
}

const objectText = (key: string) => new S3Objects(s3, BUCKET).text(key);
const keysUnder = (prefix: string) => new S3Objects(s3, BUCKET).keysUnder(prefix);

const jsonLines = async (key: string) =>
  (await objectText(key))
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

test('batch --output s3://… --evaluate --wait: the evaluation child reads the iter files from S3 and writes report.json, scored/ and summary.jsonl there, and report.html (the worker renders it); the CLI prints its URL', async () => {
  const input = join(environment.directory, 'questions.jsonl');
  writeFileSync(
    input,
    `${JSON.stringify({ question: 'Capital of France?', answer: 'Paris' })}\n${JSON.stringify({ question: 'What is 2+2?', answer: '4' })}\n`,
  );
  const prefix = 'nightly/evaluated';
  const output = `s3://${BUCKET}/${prefix}`;
  const outcome = await cli([
    'batch',
    input,
    '--output',
    output,
    '--rollouts',
    '2',
    '--evaluate',
    '--wait',
    '--max-calls',
    '3',
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);
  const [batchId] = outcome.stdout.trim().split('\n');
  assert.match(outcome.stdout, /mean_pass_at_1\s+50\.00% \(Avg\. Pass@2\)/);
  assert.match(outcome.stdout, new RegExp(`Report: ${output}/evaluation/report\\.html`));

  expect(await keysUnder(`${prefix}/evaluation/`)).toEqual(
    ['report.html', 'report.json', 'scored/iter1.jsonl', 'scored/iter2.jsonl', 'summary.jsonl'].map(
      (name) => `${prefix}/evaluation/${name}`,
    ),
  );
  const report = JSON.parse(await objectText(`${prefix}/evaluation/report.json`)) as EvaluationReport;
  assert.equal(report.method, 'exact_match');
  assert.equal(report.source.batchId, batchId);
  expect(report.source.paths).toEqual([output]);
  assert.deepEqual(
    report.metrics.perRollout.map((rollout) => rollout.passAt1),
    [1, 0],
  );
  assert.equal(report.metrics.passAtAllRollouts, 1);
  for (const rollout of [1, 2]) {
    const scored = await jsonLines(`${prefix}/evaluation/scored/iter${rollout}.jsonl`);
    expect(scored.map((line) => [line.question, line.is_correct, line.em])).toEqual([
      ['Capital of France?', rollout === 1, rollout === 1 ? 1 : 0],
      ['What is 2+2?', rollout === 1, rollout === 1 ? 1 : 0],
    ]);
    assert.ok(
      scored.every((line) => Array.isArray(line.messages) && (line.messages as unknown[]).length >= 2),
      'scored lines keep the original line',
    );
  }
  assert.equal((await jsonLines(`${prefix}/evaluation/summary.jsonl`)).length, 1);
  assert.match(await objectText(`${prefix}/evaluation/report.html`), /Capital of France\?/);
  const child = await environment.client.workflow.getHandle(`${batchId}/evaluation`).describe();
  assert.equal(child.status.name, 'COMPLETED');
  assert.equal(existsSync(resolve('s3:')), false, 'nothing was written to a local folder named after the URL');

  // Again from the CLI (exact match, no server needed): the table, report.html on S3, one more summary line.
  const again = await cli(['eval', output]);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /mean_pass_at_1\s+50\.00% \(Avg\. Pass@2\)/);
  assert.match(again.stdout, new RegExp(`Report: ${output}/evaluation/report\\.html`));
  assert.equal((await jsonLines(`${prefix}/evaluation/summary.jsonl`)).length, 2, 'appended on S3');

  // The gaia judge in an evaluation workflow over explicit s3:// iter files, written to another s3:// folder.
  const judged = await cli([
    'eval',
    `${output}/iter1.jsonl`,
    `${output}/iter2.jsonl`,
    '--judge',
    'gaia',
    '--output',
    `${output}/judged`,
  ]);
  assert.equal(judged.code, 0, judged.stderr);
  assert.match(judged.stdout, /mean_pass_at_1\s+50\.00%/);
  const judgedReport = JSON.parse(await objectText(`${prefix}/judged/report.json`)) as EvaluationReport;
  assert.equal(judgedReport.method, 'judge');
  assert.deepEqual(
    judgedReport.metrics.perRollout.map((rollout) => rollout.passAt1),
    [1, 0],
  );
  assert.equal((await jsonLines(`${prefix}/judged/scored/iter1.jsonl`))[0]?.judgement, 'Correct');
  assert.match(await objectText(`${prefix}/judged/report.html`), /gaia/);

  const compared = await cli(['eval', 'compare', `${output}/evaluation`, `${output}/judged/report.json`]);
  assert.equal(compared.code, 0, compared.stderr);
  assert.match(compared.stdout, /mean_pass_at_1\s+50\.00%\s+50\.00%\s+\+0\.00 pt/);
  assert.match(compared.stdout, new RegExp(`Comparison page: ${output}/judged/compare\\.html`));
  assert.match(await objectText(`${prefix}/judged/compare.html`), /data-metric="mean_pass_at_1"/);
}, 600_000);

test('bad s3:// input exits 2 naming the location: a prefix with no iter files, a missing bucket, a missing evaluation', async () => {
  const empty = await cli(['eval', `s3://${BUCKET}/no/such/batch`]);
  assert.equal(empty.code, 2, empty.stderr);
  assert.match(
    empty.stderr,
    /react-agent eval: s3:\/\/evaluations\/no\/such\/batch holds no iter\*\.jsonl files \(no batch output under that prefix\)\./,
  );
  const bucket = await cli(['eval', 's3://no-such-bucket/batch']);
  assert.equal(bucket.code, 2, bucket.stderr);
  assert.match(
    bucket.stderr,
    /react-agent eval: s3:\/\/no-such-bucket\/batch cannot be evaluated: its bucket "no-such-bucket" does not exist/,
  );
  const compare = await cli(['eval', 'compare', `s3://${BUCKET}/none/a`, `s3://${BUCKET}/none/b`]);
  assert.equal(compare.code, 2, compare.stderr);
  assert.match(compare.stderr, /s3:\/\/evaluations\/none\/a holds no report\.json and is no object/);
}, 120_000);
