import { resolve } from 'node:path';
import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';
import { parseS3Url as parseS3UrlText } from '../core/s3-url';

/**
 * Which transcript store workers and the CLI use, read by {@link loadTranscriptStoreConfig}:
 * a local directory (the embedded default) or an S3 bucket shared by machines.
 */
export type TranscriptStoreConfig =
  | { kind: 'local'; directory: string }
  | {
      kind: 's3';
      /** `s3://bucket/prefix` as given, normalised. */
      url: string;
      bucket: string;
      /** Key prefix without leading or trailing slash; '' for the bucket's root. */
      prefix: string;
      /** `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`: an S3-compatible server; unset for AWS. */
      endpoint?: string;
      /** `AWS_REGION` or `AWS_DEFAULT_REGION`; `us-east-1` with an endpoint and no region; unset otherwise (the SDK reads the profile). */
      region?: string;
      /** True when an endpoint is set: S3-compatible servers want path-style addresses. */
      forcePathStyle: boolean;
    };

const VARIABLE = 'REACT_AGENT_TRANSCRIPT_STORE';

/**
 * Parses `s3://bucket/prefix`.
 * @throws ConfigurationError naming REACT_AGENT_TRANSCRIPT_STORE.
 */
export function parseS3Url(value: string, variable = VARIABLE): { bucket: string; prefix: string; url: string } {
  const parsed = parseS3UrlText(value);
  if (!('problem' in parsed)) return parsed;
  const example = `${variable}=s3://my-bucket/transcripts`;
  if (parsed.problem === 'not-s3')
    throw new ConfigurationError(
      variable,
      `${variable} must be an s3:// URL like ${example} (or unset for the local directory), got ${JSON.stringify(value)}`,
    );
  if (parsed.problem === 'bucket') {
    throw new ConfigurationError(
      variable,
      `${variable} names the bucket ${JSON.stringify(parsed.bucket)}, which is not a valid S3 bucket name (3-63 lower-case letters, digits, dots and hyphens), in ${JSON.stringify(value)}; e.g. ${example}`,
    );
  }
  throw new ConfigurationError(
    variable,
    `${variable} has a malformed key prefix ${JSON.stringify(parsed.prefix)} (empty, "." or ".." segments, control characters) in ${JSON.stringify(value)}; e.g. ${example}`,
  );
}

/**
 * Reads `REACT_AGENT_TRANSCRIPT_STORE`; unset means the local directory `transcriptDirectory`
 * (`REACT_AGENT_TRANSCRIPT_DIR`). Credentials are not read here: the AWS SDK takes them from its
 * own default chain (`AWS_ACCESS_KEY_ID`/`AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, roles).
 *
 * @throws ConfigurationError naming the variable when the URL or the endpoint is malformed.
 */
export function loadTranscriptStoreConfig(
  environment: Environment,
  transcriptDirectory: string,
): TranscriptStoreConfig {
  const value = readString(environment, VARIABLE);
  if (value === undefined) return { kind: 'local', directory: resolve(transcriptDirectory) };
  const { bucket, prefix, url } = parseS3Url(value);
  const { endpoint, region, forcePathStyle } = loadS3ClientSettings(environment);
  return {
    kind: 's3',
    url,
    bucket,
    prefix,
    ...(endpoint ? { endpoint } : {}),
    ...(region ? { region } : {}),
    forcePathStyle,
  };
}

/** The S3 client settings that are not the SDK's own defaults, shared by the transcript store and `s3://` batch outputs. */
export interface S3ClientSettings {
  /** `AWS_ENDPOINT_URL_S3` or `AWS_ENDPOINT_URL`: an S3-compatible server; unset for AWS. */
  endpoint?: string;
  /** `AWS_REGION` or `AWS_DEFAULT_REGION`; `us-east-1` with an endpoint and no region; unset otherwise (the SDK reads the profile). */
  region?: string;
  /** True when an endpoint is set: S3-compatible servers want path-style addresses. */
  forcePathStyle: boolean;
}

/**
 * Reads the endpoint and region of an S3-compatible store (credentials stay with the SDK's chain).
 * @throws ConfigurationError naming the endpoint variable when it is not an http(s) URL.
 */
export function loadS3ClientSettings(environment: Environment): S3ClientSettings {
  const endpointVariable =
    readString(environment, 'AWS_ENDPOINT_URL_S3') !== undefined ? 'AWS_ENDPOINT_URL_S3' : 'AWS_ENDPOINT_URL';
  const endpoint = readString(environment, endpointVariable);
  if (endpoint !== undefined) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(endpoint);
    } catch {
      parsed = undefined;
    }
    if (!parsed || !['http:', 'https:'].includes(parsed.protocol) || !parsed.hostname) {
      throw new ConfigurationError(
        endpointVariable,
        `${endpointVariable} must be an http(s) URL of the S3-compatible server, like http://127.0.0.1:8333, got ${JSON.stringify(endpoint)}`,
      );
    }
  }
  const region =
    readString(environment, 'AWS_REGION') ??
    readString(environment, 'AWS_DEFAULT_REGION') ??
    (endpoint ? 'us-east-1' : undefined);
  return { ...(endpoint ? { endpoint } : {}), ...(region ? { region } : {}), forcePathStyle: endpoint !== undefined };
}
