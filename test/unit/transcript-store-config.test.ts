import assert from 'node:assert/strict';
import { resolve } from 'node:path';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadS3ClientSettings, loadTranscriptStoreConfig } from '../../src/config/transcript-store-config';

function configurationError(run: () => unknown, variable: string, pattern: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.equal((error as Error).name, 'ConfigurationError');
    assert.ok(error instanceof ConfigurationError);
    assert.equal(error.variable, variable);
    assert.match(error.message, new RegExp(variable));
    assert.match(error.message, pattern);
    return true;
  });
}

describe('loadTranscriptStoreConfig', () => {
  test('unset: the local directory, resolved', () => {
    assert.deepEqual(loadTranscriptStoreConfig({}, 'rel/transcripts'), {
      kind: 'local',
      directory: resolve('rel/transcripts'),
    });
    assert.deepEqual(loadTranscriptStoreConfig({ REACT_AGENT_TRANSCRIPT_STORE: '  ' }, '/t'), {
      kind: 'local',
      directory: '/t',
    });
  });

  test('s3://bucket/prefix on AWS: no endpoint, virtual-hosted addresses, region from the SDK chain unless set', () => {
    assert.deepEqual(
      loadTranscriptStoreConfig({ REACT_AGENT_TRANSCRIPT_STORE: 's3://my-bucket/team/transcripts/' }, '/t'),
      {
        kind: 's3',
        url: 's3://my-bucket/team/transcripts',
        bucket: 'my-bucket',
        prefix: 'team/transcripts',
        forcePathStyle: false,
      },
    );
    const withRegion = loadTranscriptStoreConfig(
      { REACT_AGENT_TRANSCRIPT_STORE: 's3://my.bucket', AWS_REGION: 'eu-west-1' },
      '/t',
    );
    assert.equal(withRegion.kind === 's3' && withRegion.region, 'eu-west-1');
    assert.equal(withRegion.kind === 's3' && withRegion.prefix, '');
  });

  test('with AWS_ENDPOINT_URL (or AWS_ENDPOINT_URL_S3): path-style, us-east-1 unless a region is set', () => {
    const config = loadTranscriptStoreConfig(
      { REACT_AGENT_TRANSCRIPT_STORE: 's3://agent/t', AWS_ENDPOINT_URL: 'http://127.0.0.1:8333' },
      '/t',
    );
    assert.deepEqual(config, {
      kind: 's3',
      url: 's3://agent/t',
      bucket: 'agent',
      prefix: 't',
      endpoint: 'http://127.0.0.1:8333',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    const s3Specific = loadTranscriptStoreConfig(
      {
        REACT_AGENT_TRANSCRIPT_STORE: 's3://agent/t',
        AWS_ENDPOINT_URL: 'http://a:1',
        AWS_ENDPOINT_URL_S3: 'https://s3.example:9000',
        AWS_DEFAULT_REGION: 'auto',
      },
      '/t',
    );
    assert.equal(s3Specific.kind === 's3' && s3Specific.endpoint, 'https://s3.example:9000');
    assert.equal(s3Specific.kind === 's3' && s3Specific.region, 'auto');
  });

  for (const [value, pattern] of [
    ['/srv/transcripts', /must be an s3:\/\/ URL/],
    ['http://bucket/prefix', /must be an s3:\/\/ URL/],
    ['s3://', /not a valid S3 bucket name/],
    ['s3:///prefix', /not a valid S3 bucket name/],
    ['s3://My_Bucket/x', /not a valid S3 bucket name/],
    ['s3://ab', /not a valid S3 bucket name/],
    ['s3://bucket..dots', /not a valid S3 bucket name/],
    ['s3://bucket//x', /malformed key prefix/],
    ['s3://bucket/a/../b', /malformed key prefix/],
  ] as const) {
    test(`a malformed store URL names REACT_AGENT_TRANSCRIPT_STORE: ${value}`, () => {
      configurationError(
        () => loadTranscriptStoreConfig({ REACT_AGENT_TRANSCRIPT_STORE: value }, '/t'),
        'REACT_AGENT_TRANSCRIPT_STORE',
        pattern,
      );
    });
  }

  test('a malformed endpoint names its variable', () => {
    configurationError(
      () =>
        loadTranscriptStoreConfig(
          { REACT_AGENT_TRANSCRIPT_STORE: 's3://agent', AWS_ENDPOINT_URL: 'localhost:8333' },
          '/t',
        ),
      'AWS_ENDPOINT_URL',
      /http\(s\) URL/,
    );
    configurationError(
      () =>
        loadTranscriptStoreConfig({ REACT_AGENT_TRANSCRIPT_STORE: 's3://agent', AWS_ENDPOINT_URL_S3: 'ftp://x' }, '/t'),
      'AWS_ENDPOINT_URL_S3',
      /http\(s\) URL/,
    );
  });
});

describe('loadS3ClientSettings (s3:// batch outputs share them)', () => {
  test("endpoint, region and path style from AWS_* variables; nothing set means the SDK's own defaults", () => {
    assert.deepEqual(loadS3ClientSettings({}), { forcePathStyle: false });
    assert.deepEqual(loadS3ClientSettings({ AWS_ENDPOINT_URL: 'http://127.0.0.1:8333' }), {
      endpoint: 'http://127.0.0.1:8333',
      region: 'us-east-1',
      forcePathStyle: true,
    });
    assert.deepEqual(
      loadS3ClientSettings({
        AWS_ENDPOINT_URL_S3: 'https://s3.example',
        AWS_ENDPOINT_URL: 'http://other',
        AWS_REGION: 'eu-west-1',
      }),
      {
        endpoint: 'https://s3.example',
        region: 'eu-west-1',
        forcePathStyle: true,
      },
    );
    assert.deepEqual(loadS3ClientSettings({ AWS_DEFAULT_REGION: 'ap-south-1' }), {
      region: 'ap-south-1',
      forcePathStyle: false,
    });
  });

  test('a malformed endpoint names its variable', () => {
    configurationError(
      () => loadS3ClientSettings({ AWS_ENDPOINT_URL: 'not a url' }),
      'AWS_ENDPOINT_URL',
      /http\(s\) URL/,
    );
  });
});
