import { s3UrlOf } from '../core/s3-url';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  HeadBucketCommand,
  HeadObjectCommand,
  ListObjectsV2Command,
  PutObjectCommand,
  S3Client,
  type S3ClientConfig,
} from '@aws-sdk/client-s3';
import {
  REFERENCE_PREFIX,
  TranscriptCorruptError,
  TranscriptMissingError,
  TranscriptStoreUnavailableError,
  isReference,
  referenceOf,
  type ListableTranscriptStore,
  type StoredBlob,
} from './transcript-store';

/** Where an S3 transcript store lives: `s3://<bucket>/<prefix>`, with the client settings that are not the SDK's own defaults. */
export interface S3TranscriptStoreLocation {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' for the bucket's root. */
  prefix: string;
  /** An S3-compatible endpoint (SeaweedFS, MinIO, R2); default: AWS, from the SDK's own settings. */
  endpoint?: string;
  /** Region; default: the SDK's chain (`AWS_REGION`, the profile). */
  region?: string;
  /** Path-style URLs (`<endpoint>/<bucket>/<key>`), which S3-compatible servers need. */
  forcePathStyle?: boolean;
}

/** The variable that selects the store, named in messages about the bucket. */
const STORE_VARIABLE = 'REACT_AGENT_TRANSCRIPT_STORE';
const CREDENTIAL_VARIABLES = 'AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)';

/**
 * An S3 client for a transcript store. Credentials, and region and endpoint when not given, come
 * from the SDK's default chain (`AWS_*` variables, `~/.aws` profiles, instance roles). The SDK
 * tries each request twice; Temporal owns the retries beyond that. Requests time out, so a store
 * that hangs fails the activity instead of holding it.
 */
export function createS3Client(location: S3TranscriptStoreLocation, overrides: Partial<S3ClientConfig> = {}): S3Client {
  return new S3Client({
    ...(location.endpoint ? { endpoint: location.endpoint } : {}),
    ...(location.region ? { region: location.region } : {}),
    forcePathStyle: location.forcePathStyle ?? false,
    maxAttempts: 2,
    requestHandler: { connectionTimeout: 5_000, requestTimeout: 60_000 },
    ...overrides,
  });
}

interface SdkError {
  name?: string;
  code?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

function statusOf(error: unknown): number | undefined {
  return (error as SdkError | undefined)?.$metadata?.httpStatusCode;
}

/** What an S3 error says about the settings, when it is about them: no credentials, refused credentials, no such bucket. */
export type S3SettingsProblem = 'credentials-missing' | 'credentials-refused' | 'bucket-missing';

/** Reads an SDK error for a settings problem; undefined for anything else (the server is down, a timeout, a 5xx). */
export function s3SettingsProblemOf(error: unknown): S3SettingsProblem | undefined {
  const { name = 'Error', message = String(error) } = (error ?? {}) as SdkError;
  if (name === 'CredentialsProviderError' || /Could not load credentials/i.test(message)) return 'credentials-missing';
  if (statusOf(error) === 403 || ['AccessDenied', 'InvalidAccessKeyId', 'SignatureDoesNotMatch'].includes(name))
    return 'credentials-refused';
  if (name === 'NoSuchBucket') return 'bucket-missing';
  return undefined;
}

/**
 * A transcript store in an S3 bucket: `<prefix>/<first two hex digits>/<hash>`, the same layout
 * as the local directory. Puts are conditional (`If-None-Match: *`), so a blob is written once
 * whatever retries and concurrent workers do; reads check the SHA-256 against the reference.
 * A put that finds the blob already there (412) does not change its `LastModified`.
 */
export class S3TranscriptStore implements ListableTranscriptStore {
  readonly client: S3Client;
  readonly bucket: string;
  readonly prefix: string;

  constructor(location: S3TranscriptStoreLocation, client: S3Client = createS3Client(location)) {
    this.client = client;
    this.bucket = location.bucket;
    this.prefix = location.prefix.replace(/^\/+|\/+$/g, '');
  }

  /** `s3://bucket/prefix`, for messages. */
  get url(): string {
    return s3UrlOf(this.bucket, this.prefix);
  }

  keyOf(reference: string): string {
    if (!isReference(reference))
      throw new TypeError(`Not a transcript reference: ${JSON.stringify(reference).slice(0, 100)}`);
    const hash = reference.slice(REFERENCE_PREFIX.length);
    return `${this.prefix ? `${this.prefix}/` : ''}${hash.slice(0, 2)}/${hash}`;
  }

  async putText(text: string): Promise<string> {
    const bytes = Buffer.from(text, 'utf8');
    const reference = referenceOf(bytes);
    const key = this.keyOf(reference);
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: bytes,
          IfNoneMatch: '*',
          ContentType: 'text/plain; charset=utf-8',
        }),
      );
    } catch (error) {
      const status = statusOf(error);
      // 412: the blob is already there (content-addressed, so it is this text). 409: a concurrent
      // conditional put of the same key is in flight; whichever wins wrote these same bytes.
      if (status === 412) return reference;
      if (status === 409 && (await this.exists(reference))) return reference;
      throw this.classify(error, `storing ${reference}`);
    }
    return reference;
  }

  async getText(reference: string): Promise<string> {
    const key = this.keyOf(reference);
    let bytes: Uint8Array;
    try {
      const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      if (!response.Body)
        throw new TranscriptStoreUnavailableError(`${this.url} answered reading ${reference} without a body.`);
      bytes = await response.Body.transformToByteArray();
    } catch (error) {
      if (
        (error as SdkError).name === 'NoSuchKey' ||
        (statusOf(error) === 404 && (error as SdkError).name !== 'NoSuchBucket')
      ) {
        throw new TranscriptMissingError(reference, this.url, STORE_VARIABLE);
      }
      throw this.classify(error, `reading ${reference}`);
    }
    const actual = referenceOf(bytes);
    if (actual !== reference) throw new TranscriptCorruptError(reference, this.url, actual);
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
  }

  /** Lists the blob keys under the prefix (`<prefix>/<two hex>/<hash>`), a page of up to 1,000 at a time; other keys are skipped. */
  async *listBlobs(): AsyncIterable<StoredBlob> {
    const keyPrefix = this.prefix ? `${this.prefix}/` : '';
    let continuationToken: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new ListObjectsV2Command({ Bucket: this.bucket, Prefix: keyPrefix, ContinuationToken: continuationToken }),
        );
      } catch (error) {
        throw this.classify(error, 'listing the blobs');
      }
      for (const object of page.Contents ?? []) {
        const match = /^([0-9a-f]{2})\/([0-9a-f]{64})$/.exec((object.Key ?? '').slice(keyPrefix.length));
        if (!match || !(match[2] as string).startsWith(match[1] as string)) continue;
        yield {
          reference: REFERENCE_PREFIX + match[2],
          sizeBytes: object.Size ?? 0,
          lastModified: new Date(object.LastModified?.getTime() ?? 0),
        };
      }
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);
  }

  async deleteBlob(reference: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.keyOf(reference) }));
    } catch (error) {
      if ((error as SdkError).name === 'NoSuchKey' || statusOf(error) === 404) return;
      throw this.classify(error, `deleting ${reference}`);
    }
  }

  /** Whether a blob is stored (HEAD). */
  async exists(reference: string): Promise<boolean> {
    try {
      await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.keyOf(reference) }));
      return true;
    } catch (error) {
      if (statusOf(error) === 404 || (error as SdkError).name === 'NotFound') return false;
      throw this.classify(error, `looking for ${reference}`);
    }
  }

  /**
   * Checks at start that the bucket exists and these credentials may use it (HEAD bucket).
   * @throws TranscriptStoreUnavailableError whose `variable` names the setting to fix.
   */
  async checkAccess(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (error) {
      if (statusOf(error) === 404) {
        throw new TranscriptStoreUnavailableError(
          `The bucket "${this.bucket}" of ${STORE_VARIABLE}=${this.url} does not exist at ${this.endpointText()}. Create it, or point ${STORE_VARIABLE} at an existing bucket.`,
          error,
          STORE_VARIABLE,
        );
      }
      throw this.classify(error, 'checking the bucket');
    }
  }

  private endpointText(): string {
    const endpoint = this.client.config.endpoint;
    return endpoint ? 'the configured endpoint (AWS_ENDPOINT_URL)' : 'AWS S3';
  }

  /** Turns an SDK or network error into a retryable store error whose message says what to fix. */
  private classify(error: unknown, doing: string): Error {
    if (error instanceof TranscriptStoreUnavailableError) return error;
    const { name = 'Error', message = String(error), code } = (error ?? {}) as SdkError;
    const status = statusOf(error);
    const problem = s3SettingsProblemOf(error);
    if (problem === 'credentials-missing') {
      return new TranscriptStoreUnavailableError(
        `No credentials for the transcript store ${this.url} (${doing}): set ${CREDENTIAL_VARIABLES}. ${message}`,
        error,
        'AWS_ACCESS_KEY_ID',
      );
    }
    if (problem === 'credentials-refused') {
      return new TranscriptStoreUnavailableError(
        `The transcript store ${this.url} refused this worker's credentials (${doing}: ${status ?? ''} ${name}). Check ${CREDENTIAL_VARIABLES} and the identity's permissions on the bucket.`,
        error,
        'AWS_ACCESS_KEY_ID',
      );
    }
    if (problem === 'bucket-missing') {
      return new TranscriptStoreUnavailableError(
        `The bucket "${this.bucket}" of ${STORE_VARIABLE}=${this.url} does not exist (${doing}).`,
        error,
        STORE_VARIABLE,
      );
    }
    const what = status ? `HTTP ${status} ${name}` : `${code ?? name}: ${message}`;
    return new TranscriptStoreUnavailableError(
      `The transcript store ${this.url} is unavailable (${doing}): ${what}. Temporal retries; the run resumes when the store is back.`,
      error,
    );
  }
}
