import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import {
  assembleIterFile,
  hasBatchResults,
  readRunLineTermination,
  seedRunLinesFromIterFiles,
  writeRunLine,
} from '../../src/storage/batch-output';
import { isS3Location, workerLocationProblem } from '../../src/core/s3-url';
import {
  absoluteLocation,
  LocalDirectoryOutput,
  locationChild,
  S3Output,
  openOutputLocation,
  parseS3OutputUrl,
  splitLocation,
} from '../../src/storage/output-location';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-output-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
let count = 0;
const fresh = () => new LocalDirectoryOutput(join(scratch, `output-${++count}`));

describe('openOutputLocation', () => {
  test('a path is a local directory; s3://bucket/prefix an S3 prefix with the bucket and prefix parsed', () => {
    const local = openOutputLocation('/tmp/out');
    assert.ok(local instanceof LocalDirectoryOutput);
    assert.equal(local.url, '/tmp/out');
    const s3 = openOutputLocation('s3://batch-outputs/nightly/run-1/', {
      endpoint: 'http://127.0.0.1:8333',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    assert.ok(s3 instanceof S3Output);
    assert.equal(s3.url, 's3://batch-outputs/nightly/run-1');
    assert.equal((s3 as S3Output).keyOf('runs/iter1/q0.json'), 'nightly/run-1/runs/iter1/q0.json');
    assert.equal((openOutputLocation('s3://batch-outputs') as S3Output).keyOf('batch.json'), 'batch.json');
    assert.equal(isS3Location('s3://x'), true);
    assert.equal(isS3Location('/s3://x'), false);
  });

  test.each([
    ['s3://Bad_Bucket/x', /does not name a valid S3 bucket/],
    ['s3:///x', /does not name a valid S3 bucket/],
    ['s3://bucket/a//b', /malformed key prefix/],
    ['s3://bucket/a/../b', /malformed key prefix/],
  ])('%s is refused with an OutputLocationError', (url, message) => {
    assert.throws(
      () => parseS3OutputUrl(url),
      (error: unknown) => (error as Error).name === 'OutputLocationError' && message.test((error as Error).message),
    );
  });
});

describe('one location type: a path or an s3:// URL', () => {
  test('what a worker can use: an absolute path or a valid s3:// URL', () => {
    assert.equal(workerLocationProblem('/data/out'), undefined);
    assert.equal(workerLocationProblem('s3://bucket/prefix'), undefined);
    assert.equal(workerLocationProblem('s3://Bad_Bucket/x'), 'malformed-s3');
    assert.equal(workerLocationProblem('out'), 'not-absolute');
    assert.equal(workerLocationProblem('S3://bucket'), 'not-absolute');
  });

  test('absolute: a path from the current directory, a URL as given', () => {
    assert.equal(absoluteLocation('out/x'), join(process.cwd(), 'out/x'));
    assert.equal(absoluteLocation('/a/b'), '/a/b');
    assert.equal(absoluteLocation('s3://bucket/p/'), 's3://bucket/p/');
  });

  test('a child and a parent, the same for either kind', () => {
    assert.equal(locationChild('/a/b', 'evaluation'), '/a/b/evaluation');
    assert.equal(locationChild('s3://bucket/p/', 'evaluation'), 's3://bucket/p/evaluation');
    assert.equal(locationChild('s3://bucket', 'evaluation'), 's3://bucket/evaluation');
    assert.deepEqual(splitLocation('/a/b/iter1.jsonl'), { parent: '/a/b', name: 'iter1.jsonl' });
    assert.deepEqual(splitLocation('iter1.jsonl'), { parent: '.', name: 'iter1.jsonl' });
    assert.deepEqual(splitLocation('s3://bucket/p/q/iter1.jsonl'), { parent: 's3://bucket/p/q', name: 'iter1.jsonl' });
    assert.deepEqual(splitLocation('s3://bucket/iter1.jsonl'), { parent: 's3://bucket', name: 'iter1.jsonl' });
    assert.throws(() => splitLocation('s3://bucket'), /names a bucket, not a file in it/);
    assert.throws(() => locationChild('s3://bucket/a//b', 'x'), /malformed key prefix/);
  });
});

describe('LocalDirectoryOutput', () => {
  test('writes, reads, sizes and lists files in nested folders; missing ones are undefined or empty', async () => {
    const output = fresh();
    await output.check();
    await output.writeText('runs/iter1/q0.json', '{"a":1}\n');
    await output.writeText('batch.json', '{}');
    assert.equal(await output.readText('runs/iter1/q0.json'), '{"a":1}\n');
    assert.equal(await output.sizeOf('batch.json'), 2);
    assert.equal(await output.readText('nope.json'), undefined);
    assert.equal(await output.sizeOf('runs'), undefined, 'a directory has no size');
    expect((await output.list('')).sort()).toEqual(['batch.json', 'runs']);
    expect(await output.list('runs/iter1')).toEqual(['q0.json']);
    expect(await output.list('missing/folder')).toEqual([]);
    assert.equal(await output.readLines('nope.jsonl'), undefined);
  });

  test('a writer shows the file only on close, whole; abort leaves the old file and no temporary', async () => {
    const output = fresh();
    await output.writeText('iter1.jsonl', 'old\n');
    const writer = await output.openWriter('iter1.jsonl');
    await writer.write('new 1\n');
    assert.equal(await output.readText('iter1.jsonl'), 'old\n');
    await writer.write('new 2\n');
    await writer.close();
    assert.equal(await output.readText('iter1.jsonl'), 'new 1\nnew 2\n');
    const abandoned = await output.openWriter('iter1.jsonl');
    await abandoned.write('never');
    await abandoned.abort();
    assert.equal(await output.readText('iter1.jsonl'), 'new 1\nnew 2\n');
    expect(readdirSync(output.directory).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  test('check refuses a path through a file, naming why', async () => {
    const file = join(scratch, 'a-file');
    writeFileSync(file, 'x');
    await assert.rejects(
      new LocalDirectoryOutput(join(file, 'below')).check(),
      (error: unknown) =>
        (error as Error).name === 'OutputLocationError' &&
        /a part of the path is not a directory/.test((error as Error).message),
    );
  });

  test('the batch-output functions take a location: run lines, results, seeding from iter files, assembly', async () => {
    const output = fresh();
    assert.equal(await hasBatchResults(output), false);
    await writeRunLine(output, 1, 1, `${JSON.stringify({ index: 1, termination: 'answer' })}\n`);
    assert.equal(await hasBatchResults(output), true);
    assert.equal(await readRunLineTermination(output, 1, 1), 'answer');
    assert.equal(await readRunLineTermination(output, 1, 0), undefined);
    writeFileSync(
      join(output.directory, 'iter1.jsonl'),
      `${JSON.stringify({ index: 0, termination: 'max_calls' })}\nnot json\n${JSON.stringify({ index: 9 })}\n`,
    );
    assert.equal(
      await seedRunLinesFromIterFiles(output, 1, 3),
      1,
      'only q0 lacked a run line; index 9 is out of range',
    );
    assert.equal(await readRunLineTermination(output, 1, 0), 'max_calls');
    assert.equal(await assembleIterFile(output, 1, 3), 2);
    expect(
      readFileSync(join(output.directory, 'iter1.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line).index),
    ).toEqual([0, 1]);
  });
});
