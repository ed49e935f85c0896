import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { ApplicationFailure } from '@temporalio/common';
import { transcriptFailure } from '../../activities/transcript-failures';
import { SeaweedServer } from '../../src/processes/seaweed-server';
import { FailureTypes } from '../../src/core/failure-types';
import { S3TranscriptStore, createS3Client } from '../../src/storage/s3-transcript-store';

/*
 * The S3TranscriptStore contract against a real S3-compatible server: SeaweedFS (`weed mini`)
 * on free loopback ports with real SigV4 credentials, stopped at the end.
 */

const sha256 = (text: string) => `sha256:${createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')}`;
const BUCKET = 'transcripts-test';

let directory: string;
let seaweed: SeaweedServer;

function storeWith(
  credentials: { accessKeyId: string; secretAccessKey: string },
  prefix = 'runs',
  bucket = BUCKET,
): S3TranscriptStore {
  const location = { bucket, prefix, endpoint: seaweed.endpoint, region: 'us-east-1', forcePathStyle: true };
  return new S3TranscriptStore(
    location,
    createS3Client(location, { credentials, requestHandler: { connectionTimeout: 2_000, requestTimeout: 10_000 } }),
  );
}
const store = () => storeWith({ accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey });

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'react-agent-s3-test-'));
  seaweed = await SeaweedServer.start({ directory, buckets: [BUCKET] });
}, 60_000);

afterAll(async () => {
  // SIGKILL, not a graceful stop (2.2 s on 2 cores): the folder is removed next.
  await seaweed?.kill();
  rmSync(directory, { recursive: true, force: true });
}, 30_000);

describe('S3TranscriptStore on SeaweedFS', () => {
  test('put, get and exists round trip CJK, emoji, the empty string and 5 MB', async () => {
    const s3 = store();
    for (const text of [
      '深度研究：日本語のテキスト',
      'emoji 🧪🚀👩🏽‍🔬',
      '',
      'line\r\n\ttab\u0000nul',
      '研究🧪 research data '.repeat(270_000),
    ]) {
      const reference = await s3.putText(text);
      assert.equal(reference, sha256(text));
      assert.equal(await s3.exists(reference), true);
      const back = await s3.getText(reference);
      assert.equal(back.length, text.length);
      assert.ok(back === text, 'comes back unchanged');
    }
    assert.equal(await s3.exists(sha256('never stored')), false);
  }, 60_000);

  test('a repeated put is idempotent: the object is not rewritten (conditional put answered 412)', async () => {
    const s3 = store();
    const reference = await s3.putText('written once');
    const client = seaweed.client();
    try {
      const first = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: s3.keyOf(reference) }));
      await first.Body?.transformToString();
      const concurrent = await Promise.all(Array.from({ length: 6 }, () => s3.putText('written once')));
      assert.deepEqual([...new Set(concurrent)], [reference]);
      const second = await client.send(new GetObjectCommand({ Bucket: BUCKET, Key: s3.keyOf(reference) }));
      assert.equal(await second.Body?.transformToString(), 'written once');
      assert.equal(second.ETag, first.ETag);
      assert.equal(second.LastModified?.getTime(), first.LastModified?.getTime(), 'not rewritten');
    } finally {
      client.destroy();
    }
  }, 30_000);

  test('a corrupted object fails the SHA-256 check: TranscriptCorruptError, a non-retryable failure', async () => {
    const s3 = store();
    const reference = await s3.putText('the original content');
    const client = seaweed.client();
    try {
      await client.send(new PutObjectCommand({ Bucket: BUCKET, Key: s3.keyOf(reference), Body: 'tampered content' }));
    } finally {
      client.destroy();
    }
    await assert.rejects(s3.getText(reference), (error: unknown) => {
      assert.equal((error as Error).name, 'TranscriptCorruptError');
      assert.match((error as Error).message, new RegExp(reference));
      const failure = transcriptFailure(error) as ApplicationFailure;
      assert.equal(failure.type, FailureTypes.transcriptCorrupt);
      assert.equal(failure.nonRetryable, true);
      return true;
    });
  }, 30_000);

  test('a missing blob: TranscriptMissingError naming the reference and store, a non-retryable ReactAgent.Transcript.Missing', async () => {
    const missing = sha256('not in the bucket');
    await assert.rejects(store().getText(missing), (error: unknown) => {
      assert.equal((error as Error).name, 'TranscriptMissingError');
      assert.match((error as Error).message, new RegExp(`${missing}.*s3://${BUCKET}/runs`));
      const failure = transcriptFailure(error);
      assert.ok(failure instanceof ApplicationFailure);
      expect({ type: failure.type, nonRetryable: failure.nonRetryable }).toEqual({
        type: FailureTypes.transcriptMissing,
        nonRetryable: true,
      });
      return true;
    });
  }, 30_000);

  test('wrong credentials: a clear error naming AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY, at checkAccess and on every call', async () => {
    const wrong = storeWith({ accessKeyId: seaweed.accessKeyId, secretAccessKey: 'not-the-secret' });
    for (const attempt of [wrong.checkAccess(), wrong.putText('x'), wrong.getText(sha256('x'))]) {
      await assert.rejects(attempt, (error: unknown) => {
        assert.equal((error as Error).name, 'TranscriptStoreUnavailableError');
        assert.equal((error as { variable?: string }).variable, 'AWS_ACCESS_KEY_ID');
        assert.match(
          (error as Error).message,
          /refused this worker's credentials.*AWS_ACCESS_KEY_ID \/ AWS_SECRET_ACCESS_KEY/,
        );
        return true;
      });
    }
    const unknownKey = storeWith({ accessKeyId: 'AKNOBODY', secretAccessKey: 'x' });
    await assert.rejects(
      unknownKey.checkAccess(),
      (error: unknown) => (error as { variable?: string }).variable === 'AWS_ACCESS_KEY_ID',
    );
  }, 30_000);

  test('a missing bucket: checkAccess names REACT_AGENT_TRANSCRIPT_STORE', async () => {
    await store().checkAccess();
    await assert.rejects(
      storeWith(
        { accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey },
        'p',
        'no-such-bucket',
      ).checkAccess(),
      (error: unknown) => {
        assert.equal((error as { variable?: string }).variable, 'REACT_AGENT_TRANSCRIPT_STORE');
        assert.match((error as Error).message, /bucket "no-such-bucket".*does not exist/);
        return true;
      },
    );
  }, 30_000);

  test('listBlobs pages through more than 1,000 blobs under the prefix only, skipping other keys; deleteBlob removes one, twice is fine', async () => {
    const credentials = { accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey };
    const s3 = storeWith(credentials, 'gc-listing');
    const texts = Array.from({ length: 1_050 }, (_, index) => `listed blob ${index}`);
    for (let start = 0; start < texts.length; start += 25)
      await Promise.all(texts.slice(start, start + 25).map((text) => s3.putText(text)));
    await storeWith(credentials, 'gc-other').putText('a blob under another prefix');
    const client = seaweed.client();
    try {
      await client.send(
        new PutObjectCommand({ Bucket: BUCKET, Key: 'gc-listing/batches/batch-1/batch.json', Body: '{}' }),
      );
      await client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: `gc-listing/00/${'1'.repeat(64)}`,
          Body: 'a key whose shard does not match its hash',
        }),
      );
    } finally {
      client.destroy();
    }
    const listed = [];
    for await (const blob of s3.listBlobs()) listed.push(blob);
    expect(listed.map((blob) => blob.reference).sort()).toEqual(texts.map(sha256).sort());
    const first = listed.find((blob) => blob.reference === sha256('listed blob 0'));
    assert.equal(first?.sizeBytes, Buffer.byteLength('listed blob 0'));
    assert.ok(Math.abs((first?.lastModified.getTime() ?? 0) - Date.now()) < 120_000, 'LastModified is the put time');

    await s3.deleteBlob(sha256('listed blob 0'));
    await s3.deleteBlob(sha256('listed blob 0'));
    await s3.deleteBlob(sha256('never stored anywhere'));
    await assert.rejects(
      s3.getText(sha256('listed blob 0')),
      (error: unknown) => (error as Error).name === 'TranscriptMissingError',
    );
    assert.equal(await s3.getText(sha256('listed blob 1')), 'listed blob 1');
    let count = 0;
    for await (const blob of s3.listBlobs()) if (blob.reference) count += 1;
    assert.equal(count, texts.length - 1);
  }, 120_000);

  test('listBlobs and deleteBlob with wrong credentials fail as TranscriptStoreUnavailableError naming AWS_ACCESS_KEY_ID', async () => {
    const wrong = storeWith({ accessKeyId: seaweed.accessKeyId, secretAccessKey: 'not-the-secret' }, 'gc-listing');
    const isCredentialError = (error: unknown) =>
      (error as Error).name === 'TranscriptStoreUnavailableError' &&
      (error as { variable?: string }).variable === 'AWS_ACCESS_KEY_ID';
    await assert.rejects(async () => {
      for await (const blob of wrong.listBlobs()) void blob;
    }, isCredentialError);
    await assert.rejects(wrong.deleteBlob(sha256('listed blob 1')), isCredentialError);
  }, 60_000);

  test('server down: retryable ReactAgent.Transcript.Unavailable; after a restart on the same folder every blob is back', async () => {
    const s3 = store();
    const kept = await s3.putText('stored before the outage');
    await seaweed.kill();
    for (const attempt of [s3.getText(kept), s3.putText('written during the outage')]) {
      await assert.rejects(attempt, (error: unknown) => {
        assert.equal((error as Error).name, 'TranscriptStoreUnavailableError');
        assert.match((error as Error).message, /unavailable .*ECONNREFUSED/);
        const failure = transcriptFailure(error) as ApplicationFailure;
        assert.equal(failure.type, FailureTypes.transcriptUnavailable);
        assert.equal(failure.nonRetryable, false);
        return true;
      });
    }
    await seaweed.restart();
    // The S3 port answers before the restarted volume server has re-registered: for a moment reads
    // fail as the same retryable Unavailable (HTTP 500), which Temporal retries; wait that out.
    const deadline = Date.now() + 30_000;
    let read: string | undefined;
    while (read === undefined) {
      try {
        read = await s3.getText(kept);
      } catch (error) {
        assert.equal((error as Error).name, 'TranscriptStoreUnavailableError');
        assert.ok(
          transcriptFailure(error) instanceof ApplicationFailure &&
            (transcriptFailure(error) as ApplicationFailure).nonRetryable === false,
        );
        if (Date.now() > deadline) throw error;
        await new Promise((resolveSleep) => setTimeout(resolveSleep, 250));
      }
    }
    assert.equal(read, 'stored before the outage');
    const during = await s3.putText('written during the outage');
    assert.equal(await s3.getText(during), 'written during the outage');
  }, 60_000);
});
