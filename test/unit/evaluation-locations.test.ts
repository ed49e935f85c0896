import assert from 'node:assert/strict';
import { chatModelOver } from '../fakes/fake-chat-completions';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, jest, test } from '@jest/globals';
import { createEvaluationActivities } from '../../activities/evaluation-activities';
import { EvaluationFailureTypes, EXACT_MATCH_JUDGE } from '../../src/core/evaluation/evaluation-contract';
import { buildEvaluationReport, exactMatchVerdict, runKey } from '../../src/domain/evaluation/evaluation-scoring';
import { readEvaluationFile, readEvaluationInputs, resolveEvaluationFiles } from '../../src/storage/evaluation-input';
import {
  defaultEvaluationDirectory,
  readEvaluationReport,
  writeEvaluationFile,
  writeEvaluationOutputs,
} from '../../src/storage/evaluation-output';
import { LocalDirectoryOutput, locationOfFile, S3_APPEND_ATTEMPTS, S3Output } from '../../src/storage/output-location';
import { fakeOpenAI } from '../fakes/fake-chat-completions';
import { MemoryBuckets } from '../fakes/memory-output-location';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';
import { fakeClient, sdkError } from '../fakes/stub-s3-client';

/**
 * Evaluation inputs and outputs through an OutputLocation (issue 13): iter files of an s3://
 * prefix, explicit s3:// files, outputs written to an s3:// evaluation prefix, a report read back
 * from there — over in-memory buckets; and S3Output's conditional append over a stubbed client.
 */
const line = (question: string, answer: string, prediction: string) =>
  JSON.stringify({ question, answer, prediction, termination: 'answer', messages: [] });

function batchIn(buckets: MemoryBuckets, prefix: string, rollouts: string[][]): void {
  rollouts.forEach((lines, index) =>
    buckets.objects.set(`evals/${prefix}/iter${index + 1}.jsonl`, `${lines.join('\n')}\n`),
  );
}

describe('inputs in S3', () => {
  test('an s3:// prefix gives its iter files by rollout number as s3:// URLs; a file URL is a file; both read their lines', async () => {
    const buckets = new MemoryBuckets(['evals']);
    batchIn(buckets, 'nightly/b1', [[line('q1?', 'a', 'a')], [line('q1?', 'a', 'b')]]);
    buckets.objects.set('evals/nightly/b1/iter10.jsonl', `${line('q1?', 'a', 'a')}\n`);
    buckets.objects.set('evals/nightly/b1/batch.json', '{}');
    buckets.objects.set('evals/nightly/b1/runs/iter1/q0.json', '{}');
    const resolved = await resolveEvaluationFiles(['s3://evals/nightly/b1/'], { openLocation: buckets.open });
    expect(resolved).toEqual({
      files: [
        's3://evals/nightly/b1/iter1.jsonl',
        's3://evals/nightly/b1/iter2.jsonl',
        's3://evals/nightly/b1/iter10.jsonl',
      ],
      directory: 's3://evals/nightly/b1',
    });
    const inputs = await readEvaluationInputs(resolved.files, { openLocation: buckets.open });
    expect(
      inputs.rollouts.map((runs) => runs.map((run) => [run.question, run.prediction, run.file, run.line])),
    ).toEqual([
      [['q1?', 'a', 's3://evals/nightly/b1/iter1.jsonl', 1]],
      [['q1?', 'b', 's3://evals/nightly/b1/iter2.jsonl', 1]],
      [['q1?', 'a', 's3://evals/nightly/b1/iter10.jsonl', 1]],
    ]);
    const files = await resolveEvaluationFiles(
      ['s3://evals/nightly/b1/iter2.jsonl', 's3://evals/nightly/b1/iter1.jsonl'],
      { openLocation: buckets.open },
    );
    expect(files).toEqual({ files: ['s3://evals/nightly/b1/iter2.jsonl', 's3://evals/nightly/b1/iter1.jsonl'] });
    assert.equal(defaultEvaluationDirectory(resolved), 's3://evals/nightly/b1/evaluation');
    assert.equal(defaultEvaluationDirectory(files), 's3://evals/nightly/b1/evaluation');
    assert.equal(defaultEvaluationDirectory({ files: ['s3://evals/iter1.jsonl'] }), 's3://evals/evaluation');
  });

  test('bad input names the location: an empty or missing prefix, a missing bucket, a missing file, a prefix among files, a malformed URL', async () => {
    const buckets = new MemoryBuckets(['evals']);
    batchIn(buckets, 'b1', [[line('q?', 'a', 'a')]]);
    const open = { openLocation: buckets.open };
    await expect(resolveEvaluationFiles(['s3://evals/no/such/prefix'], open)).rejects.toThrow(
      's3://evals/no/such/prefix holds no iter*.jsonl files (no batch output under that prefix).',
    );
    await expect(resolveEvaluationFiles(['s3://nobucket/b1'], open)).rejects.toThrow(
      's3://nobucket/b1 cannot be evaluated: its bucket "nobucket" does not exist (listing it).',
    );
    await expect(resolveEvaluationFiles(['s3://evals/b1/iter1.jsonl', 's3://evals/b1'], open)).rejects.toThrow(
      /s3:\/\/evals\/b1 is no object: give one batch output \(a directory or an s3:\/\/ prefix\), or rollout files, not both/,
    );
    await expect(resolveEvaluationFiles(['s3://Bad_Bucket/b1'], open)).rejects.toThrow(
      /does not name a valid S3 bucket/,
    );
    await expect(readEvaluationFile('s3://evals/b1/iter9.jsonl', open)).rejects.toThrow(
      'Cannot read s3://evals/b1/iter9.jsonl (no such object).',
    );
    await expect(readEvaluationInputs(['s3://nobucket/b1/iter1.jsonl'], open)).rejects.toThrow(
      /s3:\/\/nobucket\/b1\/iter1\.jsonl cannot be evaluated: its bucket "nobucket" does not exist \(reading it\)/,
    );
    await expect(resolveEvaluationFiles(['s3://evals/nothing'], open)).rejects.toHaveProperty(
      'name',
      'EvaluationInputError',
    );
  });
});

describe('outputs in S3', () => {
  test('report.json, scored/iter<k>.jsonl (from the original S3 lines) and summary.jsonl appended go to the s3:// evaluation prefix; the report reads back from the prefix or the file', async () => {
    const buckets = new MemoryBuckets(['evals']);
    batchIn(buckets, 'b1', [[line('Capital?', 'Paris', 'paris'), line('Sum?', '4', 'five')]]);
    const open = { openLocation: buckets.open };
    const resolved = await resolveEvaluationFiles(['s3://evals/b1'], open);
    const inputs = await readEvaluationInputs(resolved.files, open);
    const verdicts = new Map(inputs.rollouts.flat().map((run) => [runKey(run), exactMatchVerdict(run)]));
    const report = buildEvaluationReport({
      rollouts: inputs.rollouts,
      verdicts,
      method: 'exact_match',
      createdAt: 't',
      source: { paths: ['s3://evals/b1'] },
    });
    const output = defaultEvaluationDirectory(resolved);
    const written = await writeEvaluationOutputs(
      output,
      report,
      inputs.rollouts,
      verdicts,
      '<html>report</html>',
      open,
    );
    expect(written).toEqual({
      report: 's3://evals/b1/evaluation/report.json',
      scored: ['s3://evals/b1/evaluation/scored/iter1.jsonl'],
      summary: 's3://evals/b1/evaluation/summary.jsonl',
      html: 's3://evals/b1/evaluation/report.html',
    });
    await writeEvaluationOutputs(output, report, inputs.rollouts, verdicts, undefined, open);
    const scored = (buckets.text('s3://evals/b1/evaluation/scored/iter1.jsonl') ?? '')
      .trim()
      .split('\n')
      .map((text) => JSON.parse(text) as Record<string, unknown>);
    expect(scored.map((entry) => [entry.question, entry.is_correct, entry.em, Array.isArray(entry.messages)])).toEqual([
      ['Capital?', true, 1, true],
      ['Sum?', false, 0, true],
    ]);
    assert.equal(
      (buckets.text(written.summary) ?? '').trim().split('\n').length,
      2,
      'one summary line appended per evaluation',
    );
    assert.equal(buckets.operations.filter((operation) => operation === 'append summary.jsonl').length, 2);
    assert.equal(buckets.text(written.html as string), '<html>report</html>');

    const fromPrefix = await readEvaluationReport('s3://evals/b1/evaluation', open);
    assert.equal(fromPrefix.path, 's3://evals/b1/evaluation/report.json');
    assert.equal(fromPrefix.report.metrics.meanPassAt1, 0.5);
    assert.equal(
      (await readEvaluationReport('s3://evals/b1/evaluation/report.json', open)).path,
      's3://evals/b1/evaluation/report.json',
    );
    await expect(readEvaluationReport('s3://evals/b1/nothing', open)).rejects.toThrow(
      's3://evals/b1/nothing holds no report.json and is no object: give an evaluation folder (with report.json) or a report.json.',
    );
    await expect(readEvaluationReport('s3://nobucket/e', open)).rejects.toThrow(
      's3://nobucket/e cannot be read: its bucket "nobucket" does not exist.',
    );
    buckets.objects.set('evals/b1/not-a-report.json', '{"x": 1}');
    await expect(readEvaluationReport('s3://evals/b1/not-a-report.json', open)).rejects.toThrow(
      /s3:\/\/evals\/b1\/not-a-report\.json is not an evaluation report/,
    );

    assert.equal(
      await writeEvaluationFile('s3://evals/b1/evaluation/compare.html', '<html>compare</html>', open),
      's3://evals/b1/evaluation/compare.html',
    );
    assert.equal(buckets.text('s3://evals/b1/evaluation/compare.html'), '<html>compare</html>');
  });

  test('locationOfFile: the folder holding a file, local or s3://, and its name there', () => {
    const buckets = new MemoryBuckets(['evals']);
    const nested = locationOfFile('s3://evals/a/b/report.json', buckets.open);
    assert.equal(nested.location.url, 's3://evals/a/b');
    assert.equal(nested.name, 'report.json');
    assert.equal(locationOfFile('s3://evals/report.json', buckets.open).location.url, 's3://evals');
    assert.throws(() => locationOfFile('s3://evals', buckets.open), /names a bucket, not a file in it/);
    const local = locationOfFile('/tmp/x/report.json');
    assert.ok(local.location instanceof LocalDirectoryOutput);
    assert.equal(local.location.url, '/tmp/x');
    assert.equal(local.location.urlOf(local.name), '/tmp/x/report.json');
  });
});

describe('the evaluation activities over S3', () => {
  function activitiesOver(buckets: MemoryBuckets, renderReportHtml?: () => Promise<string>) {
    const { openai } = fakeOpenAI(async () => {
      throw new Error('exact match asks no judge');
    });
    const store = new MemoryTranscriptStore();
    const verdicts = { get: async () => undefined, put: async () => undefined };
    return createEvaluationActivities({
      judgeModel: chatModelOver(openai),
      endpoint: { model: 'judge', baseUrl: 'http://judge.test/v1' },
      store,
      verdicts,
      openLocation: buckets.open,
      ...(renderReportHtml ? { renderReportHtml } : {}),
    });
  }

  test('prepareEvaluation reads an s3:// batch output, writeEvaluation writes to s3://…/evaluation and returns its report URL', async () => {
    const buckets = new MemoryBuckets(['evals']);
    batchIn(buckets, 'b1', [[line('Capital?', 'Paris', 'Paris')], [line('Capital?', 'Paris', 'Lyon')]]);
    const activities = activitiesOver(buckets);
    const prepared = await activities.prepareEvaluation({
      paths: ['s3://evals/b1'],
      judge: EXACT_MATCH_JUDGE,
      batchId: 'b1',
    });
    assert.equal(prepared.runs, 2);
    const written = await activities.writeEvaluation({
      input: prepared.input,
      output: 's3://evals/b1/evaluation',
      createdAt: 't',
      judgeCalls: { made: 0, stored: 0 },
    });
    assert.equal(written.reportPath, 's3://evals/b1/evaluation/report.json');
    expect(written.headline.perRolloutPassAt1).toEqual([1, 0]);
    const report = JSON.parse(buckets.text(written.reportPath) ?? '{}') as {
      source: { paths: string[]; batchId: string };
    };
    expect(report.source).toEqual({ paths: ['s3://evals/b1'], batchId: 'b1' });
    assert.ok(buckets.text('s3://evals/b1/evaluation/scored/iter2.jsonl')?.includes('"is_correct":false'));
    assert.equal(written.htmlPath, 's3://evals/b1/evaluation/report.html');
    assert.equal(written.htmlProblem, undefined);
    assert.match(
      buckets.text('s3://evals/b1/evaluation/report.html') ?? '',
      /<table class="questions"[\s\S]*Capital\?/,
    );
  });

  test('a report.html that cannot be rendered loses nothing else: report.json, scored/ and summary.jsonl are written, the result says why', async () => {
    const buckets = new MemoryBuckets(['evals']);
    batchIn(buckets, 'b3', [[line('Capital?', 'Paris', 'Paris')]]);
    const activities = activitiesOver(buckets, async () => {
      throw new Error('vega is broken');
    });
    const prepared = await activities.prepareEvaluation({ paths: ['s3://evals/b3'], judge: EXACT_MATCH_JUDGE });
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const written = await activities.writeEvaluation({
        input: prepared.input,
        output: 's3://evals/b3/evaluation',
        createdAt: 't',
        judgeCalls: { made: 0, stored: 0 },
      });
      assert.equal(written.reportPath, 's3://evals/b3/evaluation/report.json');
      assert.equal(written.htmlPath, undefined);
      assert.equal(written.htmlProblem, 'report.html could not be rendered: vega is broken');
      assert.ok(buckets.text('s3://evals/b3/evaluation/report.json'));
      assert.ok(buckets.text('s3://evals/b3/evaluation/scored/iter1.jsonl'));
      assert.ok(buckets.text('s3://evals/b3/evaluation/summary.jsonl'));
      assert.equal(buckets.text('s3://evals/b3/evaluation/report.html'), undefined);
      expect(warn).toHaveBeenCalledWith(expect.stringContaining('report.html could not be rendered: vega is broken'));
    } finally {
      warn.mockRestore();
    }
  });

  test('a missing prefix or bucket is a non-retryable invalid-input failure naming the location', async () => {
    const buckets = new MemoryBuckets(['evals']);
    const activities = activitiesOver(buckets);
    await expect(
      activities.prepareEvaluation({ paths: ['s3://evals/nothing'], judge: EXACT_MATCH_JUDGE }),
    ).rejects.toMatchObject({
      name: 'ApplicationFailure',
      type: EvaluationFailureTypes.invalidInput,
      nonRetryable: true,
      message: 's3://evals/nothing holds no iter*.jsonl files (no batch output under that prefix).',
    });
    batchIn(buckets, 'b2', [[line('q?', 'a', 'a')]]);
    const prepared = await activities.prepareEvaluation({ paths: ['s3://evals/b2'], judge: EXACT_MATCH_JUDGE });
    await expect(
      activities.writeEvaluation({
        input: prepared.input,
        output: 's3://nobucket/evaluation',
        createdAt: 't',
        judgeCalls: { made: 0, stored: 0 },
      }),
    ).rejects.toMatchObject({
      name: 'ApplicationFailure',
      type: EvaluationFailureTypes.invalidInput,
      nonRetryable: true,
    });
  });
});

describe('local outputs are unchanged', () => {
  const scratch = mkdtempSync(join(tmpdir(), 'evaluation-locations-'));
  afterAll(() => rmSync(scratch, { recursive: true, force: true }));

  test('a directory gets the same files and paths; summary.jsonl is appended in place', async () => {
    const file = join(scratch, 'iter1.jsonl');
    writeFileSync(file, `${line('q?', 'a', 'a')}\n`);
    const inputs = await readEvaluationInputs([file]);
    const verdicts = new Map(inputs.rollouts.flat().map((run) => [runKey(run), exactMatchVerdict(run)]));
    const report = buildEvaluationReport({
      rollouts: inputs.rollouts,
      verdicts,
      method: 'exact_match',
      createdAt: 't',
      source: { paths: [file] },
    });
    const output = join(scratch, 'evaluation');
    const written = await writeEvaluationOutputs(output, report, inputs.rollouts, verdicts);
    expect(written).toEqual({
      report: join(output, 'report.json'),
      scored: [join(output, 'scored', 'iter1.jsonl')],
      summary: join(output, 'summary.jsonl'),
    });
    await new LocalDirectoryOutput(output).appendText('summary.jsonl', 'extra\n');
    assert.equal(readFileSync(join(output, 'summary.jsonl'), 'utf8').split('\n').length, 3);
  });
});

describe('S3Output.appendText (stubbed client)', () => {
  test('a missing object is created with If-None-Match: *; an existing one is put back with If-Match on the ETag it was read with', async () => {
    let stored: { text: string; etag: string } | undefined;
    const puts: Array<Record<string, unknown>> = [];
    const output = new S3Output(
      'evals',
      'b1/evaluation',
      fakeClient((command) => {
        if (command.constructor.name === 'GetObjectCommand') {
          if (!stored) throw sdkError('NoSuchKey', 404);
          return { Body: Readable.from([Buffer.from(stored.text)]), ETag: stored.etag };
        }
        puts.push(command.input);
        stored = { text: String(command.input.Body), etag: `"etag-${puts.length}"` };
        return { ETag: stored.etag };
      }),
    );
    await output.appendText('summary.jsonl', 'one\n');
    await output.appendText('summary.jsonl', 'two\n');
    assert.equal(stored?.text, 'one\ntwo\n');
    expect(puts.map((put) => [put.Key, put.IfNoneMatch, put.IfMatch])).toEqual([
      ['b1/evaluation/summary.jsonl', '*', undefined],
      ['b1/evaluation/summary.jsonl', undefined, '"etag-1"'],
    ]);
    assert.equal(output.urlOf('summary.jsonl'), 's3://evals/b1/evaluation/summary.jsonl');
  });

  test('another writer in between (412): read again and appended after its line; always changing: an OutputLocationError after the tries', async () => {
    let text = 'theirs-1\n';
    let version = 1;
    let conflicts = 1;
    const output = new S3Output(
      'evals',
      'e',
      fakeClient((command) => {
        if (command.constructor.name === 'GetObjectCommand')
          return { Body: Readable.from([Buffer.from(text)]), ETag: `"v${version}"` };
        if (conflicts > 0) {
          conflicts -= 1;
          text += 'theirs-2\n';
          version += 1;
          throw sdkError('PreconditionFailed', 412);
        }
        assert.equal(command.input.IfMatch, `"v${version}"`);
        text = String(command.input.Body);
        return {};
      }),
    );
    await output.appendText('summary.jsonl', 'mine\n');
    assert.equal(text, 'theirs-1\ntheirs-2\nmine\n', 'no line lost');

    let tries = 0;
    const busy = new S3Output(
      'evals',
      'e',
      fakeClient((command) => {
        if (command.constructor.name === 'GetObjectCommand')
          return { Body: Readable.from([Buffer.from('x\n')]), ETag: '"v"' };
        tries += 1;
        throw sdkError('PreconditionFailed', 412);
      }),
    );
    await expect(busy.appendText('summary.jsonl', 'mine\n')).rejects.toMatchObject({
      name: 'OutputLocationError',
      message: `s3://evals/e/summary.jsonl changed under every one of ${S3_APPEND_ATTEMPTS} tries to append to it: other writers are appending at the same time. Try again.`,
    });
    assert.equal(tries, S3_APPEND_ATTEMPTS);
  });

  test('a missing bucket while appending is an OutputLocationError naming it', async () => {
    const output = new S3Output(
      'nobucket',
      'e',
      fakeClient(() => Promise.reject(sdkError('NoSuchBucket', 404))),
    );
    await expect(output.appendText('summary.jsonl', 'x\n')).rejects.toMatchObject({
      name: 'OutputLocationError',
      problem: 'bucket-missing',
    });
  });
});
