import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { transcriptFailure, withTranscriptFailures } from '../../activities/transcript-failures';
import { FailureTypes } from '../../src/core/failure-types';
import { S3TranscriptStore } from '../../src/storage/s3-transcript-store';
import { TranscriptMissingError } from '../../src/storage/transcript-store';
import { fakeClient, sdkError } from '../fakes/stub-s3-client';

const sha256 = (text: string) => `sha256:${createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')}`;

describe('S3TranscriptStore (stubbed client)', () => {
  test('keys are <prefix>/<two hex>/<hash>, puts are conditional, 412 means already stored', async () => {
    const seen: Array<Record<string, unknown>> = [];
    const store = new S3TranscriptStore(
      { bucket: 'agent', prefix: '/runs/' },
      fakeClient((command) => {
        seen.push(command.input);
        throw sdkError('PreconditionFailed', 412);
      }),
    );
    const reference = await store.putText('hello');
    assert.equal(reference, sha256('hello'));
    const hash = reference.slice(7);
    assert.equal(seen[0]?.Key, `runs/${hash.slice(0, 2)}/${hash}`);
    assert.equal(seen[0]?.IfNoneMatch, '*');
    assert.equal(seen[0]?.Bucket, 'agent');
    assert.equal(store.url, 's3://agent/runs');
    assert.equal(
      new S3TranscriptStore(
        { bucket: 'agent', prefix: '' },
        fakeClient(() => ({})),
      ).keyOf(reference),
      `${hash.slice(0, 2)}/${hash}`,
    );
  });

  test('a malformed reference is refused before any request', async () => {
    let requests = 0;
    const store = new S3TranscriptStore(
      { bucket: 'agent', prefix: 'p' },
      fakeClient(() => (requests += 1)),
    );
    await assert.rejects(store.getText('sha256:../../x'), TypeError);
    assert.equal(requests, 0);
  });

  test('NoSuchKey is TranscriptMissingError naming the reference, the bucket and REACT_AGENT_TRANSCRIPT_STORE', async () => {
    const store = new S3TranscriptStore(
      { bucket: 'agent', prefix: 'p' },
      fakeClient(() => Promise.reject(sdkError('NoSuchKey', 404))),
    );
    const missing = sha256('gone');
    await assert.rejects(store.getText(missing), (error: unknown) => {
      assert.ok(error instanceof TranscriptMissingError);
      assert.equal(error.reference, missing);
      assert.match(error.message, /s3:\/\/agent\/p/);
      assert.match(error.message, /REACT_AGENT_TRANSCRIPT_STORE/);
      return true;
    });
  });

  test('a body that does not hash to its reference is TranscriptCorruptError', async () => {
    const store = new S3TranscriptStore(
      { bucket: 'agent', prefix: 'p' },
      fakeClient(() => ({ Body: { transformToByteArray: async () => new Uint8Array(Buffer.from('tampered')) } })),
    );
    await assert.rejects(
      store.getText(sha256('original')),
      (error: unknown) =>
        (error as Error).name === 'TranscriptCorruptError' && (error as Error).message.includes(sha256('tampered')),
    );
  });

  for (const [label, error, variable, pattern] of [
    [
      'connection refused',
      Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
      undefined,
      /unavailable .*ECONNREFUSED/,
    ],
    ['503 SlowDown', sdkError('SlowDown', 503), undefined, /unavailable .*HTTP 503/],
    [
      'wrong secret',
      sdkError('SignatureDoesNotMatch', 403),
      'AWS_ACCESS_KEY_ID',
      /refused this worker's credentials.*AWS_SECRET_ACCESS_KEY/,
    ],
    [
      'no credentials at all',
      sdkError('CredentialsProviderError'),
      'AWS_ACCESS_KEY_ID',
      /No credentials .*AWS_ACCESS_KEY_ID/,
    ],
    ['missing bucket', sdkError('NoSuchBucket', 404), 'REACT_AGENT_TRANSCRIPT_STORE', /bucket "agent".*does not exist/],
  ] as const) {
    test(`${label}: a retryable TranscriptStoreUnavailableError saying what to fix`, async () => {
      const store = new S3TranscriptStore(
        { bucket: 'agent', prefix: 'p' },
        fakeClient(() => Promise.reject(error)),
      );
      for (const attempt of [store.getText(sha256('x')), store.putText('x')]) {
        await assert.rejects(attempt, (thrown: unknown) => {
          assert.equal((thrown as Error).name, 'TranscriptStoreUnavailableError');
          assert.equal((thrown as { variable?: string }).variable, variable);
          assert.match((thrown as Error).message, pattern);
          const failure = transcriptFailure(thrown);
          assert.ok(failure instanceof ApplicationFailure);
          assert.equal(failure.type, FailureTypes.transcriptUnavailable);
          assert.equal(failure.nonRetryable, false);
          return true;
        });
      }
    });
  }

  test('checkAccess: a missing bucket (HEAD 404) names REACT_AGENT_TRANSCRIPT_STORE', async () => {
    const store = new S3TranscriptStore(
      { bucket: 'agent', prefix: 'p' },
      fakeClient(() => Promise.reject(sdkError('NotFound', 404))),
    );
    await assert.rejects(
      store.checkAccess(),
      (error: unknown) =>
        (error as { variable?: string }).variable === 'REACT_AGENT_TRANSCRIPT_STORE' &&
        /does not exist/.test((error as Error).message),
    );
  });
});

describe('withTranscriptFailures', () => {
  test('a missing blob becomes a non-retryable ReactAgent.Transcript.Missing failure naming the reference', async () => {
    const missing = sha256('never');
    const store = withTranscriptFailures({
      putText: async () => 'x',
      getText: async (reference) => Promise.reject(new TranscriptMissingError(reference, 'here')),
    });
    await assert.rejects(store.getText(missing), (error: unknown) => {
      assert.ok(error instanceof ApplicationFailure);
      assert.equal(error.type, FailureTypes.transcriptMissing);
      assert.equal(error.nonRetryable, true);
      assert.match(error.message, new RegExp(missing));
      return true;
    });
  });

  test('other errors pass through unchanged', async () => {
    const original = new RangeError('something else');
    const store = withTranscriptFailures({ putText: async () => Promise.reject(original), getText: async () => 'x' });
    await assert.rejects(store.putText('a'), (error: unknown) => error === original);
  });
});
