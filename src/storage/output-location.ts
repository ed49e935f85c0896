import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, appendFile, constants, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import type { GetObjectCommandOutput, S3Client } from '@aws-sdk/client-s3';
import { isS3Location, parseS3Url, s3UrlOf, type S3Url } from '../core/s3-url';
import type { S3SettingsProblem } from './s3-transcript-store';

/** The AWS SDK, loaded when an S3 location is first used: commands that never touch S3 start without it. */
const sdk = () => require('@aws-sdk/client-s3') as typeof import('@aws-sdk/client-s3');
const s3Store = () => require('./s3-transcript-store') as typeof import('./s3-transcript-store');

/**
 * Where a batch's (or a schedule's) output files go: a local directory or an S3 prefix. Paths are
 * relative, `/`-separated (`runs/iter1/q0.json`). Every write replaces the whole file at once, so a
 * reader sees the old content or the new, never part of it, and a retried activity replaces a
 * file rather than adding to it.
 */
export interface OutputLocation {
  /** The location as users give it: a directory path or `s3://bucket/prefix`. */
  readonly url: string;
  /** Creates it if needed and checks it can be listed and written. @throws OutputLocationError saying why. */
  check(): Promise<void>;
  /** A file's text; undefined when there is none. */
  readText(path: string): Promise<string | undefined>;
  /** A file's lines (without line ends); undefined when there is no such file. */
  readLines(path: string): Promise<AsyncIterable<string> | undefined>;
  /** Writes a whole file at once. */
  writeText(path: string, text: string): Promise<void>;
  /**
   * Adds text at the end of a file, creating it when there is none (evaluation's summary.jsonl).
   * A local directory appends in place; an S3 prefix reads the object and puts it back whole,
   * conditionally on its ETag, so a concurrent writer is detected and the append retried.
   */
  appendText(path: string, text: string): Promise<void>;
  /** A file's name as users give it: a local path, or `s3://bucket/key`. */
  urlOf(path: string): string;
  /** A file written in pieces that appears whole, or not at all, on `close()`. */
  openWriter(path: string): Promise<OutputWriter>;
  /** The size of a file in bytes; undefined when there is none. */
  sizeOf(path: string): Promise<number | undefined>;
  /** The names directly in a directory ('' for the top): files and subdirectories; [] when there is none. */
  list(directory: string): Promise<string[]>;
}

/** A file being written; see {@link OutputLocation.openWriter}. */
export interface OutputWriter {
  write(text: string): Promise<void>;
  /** Makes the file appear with everything written. */
  close(): Promise<void>;
  /** Gives up: the file is left as it was. */
  abort(): Promise<void>;
}

/** The output location cannot be used (no such bucket, refused credentials, not a directory, not writable); the message says why and where. */
export class OutputLocationError extends Error {
  override readonly name: string = 'OutputLocationError';

  /** @param problem what was wrong with an S3 location's settings, when that was it (a missing bucket, credentials). */
  constructor(
    message: string,
    readonly problem?: S3SettingsProblem,
  ) {
    super(message);
  }
}

/**
 * `s3://bucket/prefix` → bucket and prefix (no leading or trailing slash).
 * @throws OutputLocationError for a malformed bucket name or prefix.
 */
export function parseS3OutputUrl(url: string): S3Url {
  const parsed = parseS3Url(url);
  if (!('problem' in parsed)) return parsed;
  if (parsed.problem === 'prefix') {
    throw new OutputLocationError(
      `${JSON.stringify(url)} has a malformed key prefix (empty, "." or ".." segments, control characters); use s3://my-bucket/batches/nightly.`,
    );
  }
  throw new OutputLocationError(
    `${JSON.stringify(url)} does not name a valid S3 bucket (3-63 lower-case letters, digits, dots and hyphens); use s3://my-bucket/batches/nightly.`,
  );
}

/** S3 client settings for `s3://` outputs (from src/config's `loadS3ClientSettings`); credentials come from the SDK's chain. */
export interface S3OutputSettings {
  /** An S3-compatible endpoint; default: AWS. */
  endpoint?: string;
  /** Region; default: the SDK's chain. */
  region?: string;
  /** Path-style addressing, which S3-compatible servers need. Default false. */
  forcePathStyle?: boolean;
}

/** Opens a local directory, or an S3 prefix for `s3://…`. @throws OutputLocationError for a malformed s3:// URL. */
export function openOutputLocation(output: string, s3: S3OutputSettings = {}): OutputLocation {
  if (!isS3Location(output)) return new LocalDirectoryOutput(output);
  const { bucket, prefix } = parseS3OutputUrl(output);
  const location = { bucket, prefix, ...s3 };
  return new S3Output(bucket, prefix, s3Store().createS3Client(location));
}

/** Opens a location from what users give: a directory path or `s3://bucket/prefix` (e.g. {@link openOutputLocation} with S3 settings). */
export type OpenLocation = (url: string) => OutputLocation;

/**
 * A location as the workers get it: a local path made absolute (from the current directory), an
 * `s3://` URL as given.
 */
export function absoluteLocation(location: string): string {
  return isS3Location(location) ? location : resolve(location);
}

/**
 * A file or folder inside a location: `join(dir, name)` for a path, `s3://bucket/prefix/name` for
 * a URL (normalised). @throws OutputLocationError for a malformed s3:// URL.
 */
export function locationChild(location: string, name: string): string {
  if (!isS3Location(location)) return join(location, name);
  const { bucket, prefix } = parseS3OutputUrl(location);
  return s3UrlOf(bucket, prefix, name);
}

/**
 * The file's or folder's name and the location holding it: `/a/b/iter1.jsonl` → `/a/b` and
 * `iter1.jsonl`; `s3://b/p/iter1.jsonl` → `s3://b/p` and `iter1.jsonl`.
 * @throws OutputLocationError for a malformed s3:// URL, or one that names a bucket and no key.
 */
export function splitLocation(location: string): { parent: string; name: string } {
  if (!isS3Location(location)) return { parent: dirname(location), name: basename(location) };
  const { bucket, prefix } = parseS3OutputUrl(location);
  if (!prefix)
    throw new OutputLocationError(`${location} names a bucket, not a file in it; use s3://${bucket}/folder/file.`);
  const cut = prefix.lastIndexOf('/');
  return { parent: s3UrlOf(bucket, cut > 0 ? prefix.slice(0, cut) : ''), name: prefix.slice(cut + 1) };
}

/**
 * The location holding a file named by a path or an `s3://bucket/key` URL, opened, and the file's
 * name in it: `s3://b/p/iter1.jsonl` → the prefix `s3://b/p` and `iter1.jsonl`.
 * @throws OutputLocationError as {@link splitLocation}.
 */
export function locationOfFile(
  file: string,
  openLocation: OpenLocation = openOutputLocation,
): { location: OutputLocation; name: string } {
  const { parent, name } = splitLocation(file);
  return { location: openLocation(parent), name };
}

/** What a location (or a path that is one) is as an {@link OutputLocation}. */
export function outputLocationOf(output: string | OutputLocation): OutputLocation {
  return typeof output === 'string' ? new LocalDirectoryOutput(output) : output;
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a part of the path is not a directory';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'ENOSPC') return 'no space left';
  return (error as Error).message;
}

/**
 * `mkdir -p`, one level at a time. (Node 20's `mkdir(path, { recursive: true })` spins forever
 * on some paths it cannot create, e.g. under /proc; this fails with the parent's error instead.)
 */
export async function makeDirectories(path: string): Promise<void> {
  try {
    if ((await stat(path)).isDirectory()) return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const parent = dirname(path);
  if (parent !== path) await makeDirectories(parent);
  try {
    await mkdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (!(await stat(path)).isDirectory()) throw error;
  }
}

/** Writes a file so a reader sees the old content or the new, never part of it. */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  await makeDirectories(dirname(path));
  const temporary = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(text, 'utf8');
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}

const isMissing = (error: unknown) => ['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '');

/** A local directory: files written to a temporary name, synced and renamed into place. */
export class LocalDirectoryOutput implements OutputLocation {
  constructor(readonly directory: string) {}

  get url(): string {
    return this.directory;
  }

  private pathOf(path: string): string {
    return path ? join(this.directory, ...path.split('/')) : this.directory;
  }

  async check(): Promise<void> {
    const output = this.directory;
    try {
      await makeDirectories(output);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST')
        throw new OutputLocationError(`The output path ${output} is not a directory.`);
      throw new OutputLocationError(`Cannot create the output directory ${output} (${describeFsError(error)}).`);
    }
    const info = await stat(output);
    if (!info.isDirectory()) throw new OutputLocationError(`The output path ${output} is not a directory.`);
    try {
      await access(output, constants.R_OK | constants.W_OK | constants.X_OK);
      await readdir(output);
      const probe = join(output, `.write-check-${randomUUID()}`);
      await writeFileAtomically(probe, 'ok');
      await rm(probe, { force: true });
    } catch (error) {
      throw new OutputLocationError(
        `The output directory ${output} is not readable and writable (${describeFsError(error)}).`,
      );
    }
  }

  async readText(path: string): Promise<string | undefined> {
    try {
      return await readFile(this.pathOf(path), 'utf8');
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async readLines(path: string): Promise<AsyncIterable<string> | undefined> {
    if ((await this.sizeOf(path)) === undefined) return undefined;
    return createInterface({ input: createReadStream(this.pathOf(path), 'utf8'), crlfDelay: Infinity });
  }

  writeText(path: string, text: string): Promise<void> {
    return writeFileAtomically(this.pathOf(path), text);
  }

  /** Appends in place (`O_APPEND`): concurrent appenders each add their text whole when it is small. */
  async appendText(path: string, text: string): Promise<void> {
    await makeDirectories(dirname(this.pathOf(path)));
    await appendFile(this.pathOf(path), text, 'utf8');
  }

  urlOf(path: string): string {
    return this.pathOf(path);
  }

  async openWriter(path: string): Promise<OutputWriter> {
    const target = this.pathOf(path);
    await makeDirectories(dirname(target));
    const temporary = `${target}.${randomUUID()}.tmp`;
    const handle = await open(temporary, 'w');
    let handleOpen = true;
    return {
      write: async (text) => {
        await handle.write(text);
      },
      close: async () => {
        try {
          await handle.datasync();
        } finally {
          await handle.close();
          handleOpen = false;
        }
        await rename(temporary, target);
      },
      abort: async () => {
        if (handleOpen) await handle.close().catch(() => undefined);
        handleOpen = false;
        await rm(temporary, { force: true });
      },
    };
  }

  async sizeOf(path: string): Promise<number | undefined> {
    try {
      const info = await stat(this.pathOf(path));
      return info.isFile() ? info.size : undefined;
    } catch (error) {
      if (isMissing(error)) return undefined;
      throw error;
    }
  }

  async list(directory: string): Promise<string[]> {
    try {
      return await readdir(this.pathOf(directory));
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }
}

interface SdkError {
  name?: string;
  message?: string;
  $metadata?: { httpStatusCode?: number };
}

const statusOf = (error: unknown) => (error as SdkError | undefined)?.$metadata?.httpStatusCode;
const CREDENTIAL_VARIABLES = 'AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY (or AWS_PROFILE)';
/** S3's smallest multipart part (except the last). */
const MINIMUM_PART_BYTES = 5 * 1024 * 1024;
/** Tries of an S3 append whose object another writer changed in between (412 on the conditional put). */
export const S3_APPEND_ATTEMPTS = 5;

/**
 * An S3 prefix: `<prefix>/<path>` keys. A put replaces an object at once, so every file is
 * written whole; files written in pieces (the iter files) go up as one put when small and as a
 * multipart upload (parts of `partBytes`, default 8 MiB) otherwise, which appears only on completion.
 */
export class S3Output implements OutputLocation {
  readonly partBytes: number;

  constructor(
    readonly bucket: string,
    readonly prefix: string,
    readonly client: S3Client,
    options: { partBytes?: number } = {},
  ) {
    this.partBytes = Math.max(options.partBytes ?? 8 * 1024 * 1024, MINIMUM_PART_BYTES);
  }

  get url(): string {
    return s3UrlOf(this.bucket, this.prefix);
  }

  keyOf(path: string): string {
    return [this.prefix, path].filter((part) => part !== '').join('/');
  }

  /** HEAD bucket (exists, credentials), then a probe object written and removed (may write). */
  async check(): Promise<void> {
    try {
      await this.client.send(new (sdk().HeadBucketCommand)({ Bucket: this.bucket }));
      const probe = this.keyOf(`.write-check-${randomUUID()}`);
      await this.client.send(new (sdk().PutObjectCommand)({ Bucket: this.bucket, Key: probe, Body: 'ok' }));
      await this.client.send(new (sdk().DeleteObjectCommand)({ Bucket: this.bucket, Key: probe }));
    } catch (error) {
      throw this.explain(error, 'checking it');
    }
  }

  /** A clear error for a missing bucket or refused credentials; anything else (the server is down) passes through, so activities retry. */
  private explain(error: unknown, doing: string): Error {
    const { name = 'Error', message = String(error) } = (error ?? {}) as SdkError;
    const status = statusOf(error);
    const problem = s3Store().s3SettingsProblemOf(error);
    // HEAD bucket answers a missing bucket with a bare 404 (NotFound); object reads say NoSuchKey before they get here.
    if (problem === 'bucket-missing' || status === 404 || name === 'NotFound') {
      return new OutputLocationError(
        `The bucket "${this.bucket}" of the output ${this.url} does not exist (${doing}). Create it, or give another s3:// output.`,
        'bucket-missing',
      );
    }
    if (problem === 'credentials-missing') {
      return new OutputLocationError(
        `No credentials for the output ${this.url} (${doing}): set ${CREDENTIAL_VARIABLES}.`,
        problem,
      );
    }
    if (problem === 'credentials-refused') {
      return new OutputLocationError(
        `The output ${this.url} refused these credentials (${doing}: ${status ?? ''} ${name}). Check ${CREDENTIAL_VARIABLES} and the identity's permissions on the bucket.`,
        problem,
      );
    }
    return error instanceof Error ? error : new Error(message);
  }

  private async object(path: string): Promise<GetObjectCommandOutput | undefined> {
    try {
      return await this.client.send(new (sdk().GetObjectCommand)({ Bucket: this.bucket, Key: this.keyOf(path) }));
    } catch (error) {
      if (
        (error as SdkError).name === 'NoSuchKey' ||
        (statusOf(error) === 404 && (error as SdkError).name !== 'NoSuchBucket')
      )
        return undefined;
      throw this.explain(error, `reading ${path}`);
    }
  }

  private async body(path: string): Promise<Readable | undefined> {
    return (await this.object(path))?.Body as Readable | undefined;
  }

  private static async textOf(body: Readable | undefined): Promise<string> {
    if (!body) return '';
    const chunks: Buffer[] = [];
    for await (const chunk of body) chunks.push(Buffer.from(chunk as Uint8Array));
    return Buffer.concat(chunks).toString('utf8');
  }

  async readText(path: string): Promise<string | undefined> {
    const body = await this.body(path);
    if (!body) return undefined;
    return S3Output.textOf(body);
  }

  async readLines(path: string): Promise<AsyncIterable<string> | undefined> {
    const body = await this.body(path);
    return body ? createInterface({ input: body, crlfDelay: Infinity }) : undefined;
  }

  async writeText(path: string, text: string): Promise<void> {
    try {
      await this.client.send(
        new (sdk().PutObjectCommand)({
          Bucket: this.bucket,
          Key: this.keyOf(path),
          Body: Buffer.from(text, 'utf8'),
          ContentType: contentTypeOf(path),
        }),
      );
    } catch (error) {
      throw this.explain(error, `writing ${path}`);
    }
  }

  /**
   * Read-modify-write, made safe by a conditional put: the object goes back with `If-Match` on the
   * ETag it was read with (`If-None-Match: *` when there was none), so when another writer changed
   * it in between (412) the append is read and tried again, up to {@link S3_APPEND_ATTEMPTS} times.
   * A server that ignores `If-Match` makes this last-writer-wins: then run one writer at a time.
   * @throws OutputLocationError when the object kept changing for every try.
   */
  async appendText(path: string, text: string): Promise<void> {
    const key = this.keyOf(path);
    for (let attempt = 1; ; attempt += 1) {
      const current = await this.object(path);
      const before = current ? await S3Output.textOf(current.Body as Readable | undefined) : '';
      const condition = current ? (current.ETag ? { IfMatch: current.ETag } : {}) : { IfNoneMatch: '*' };
      try {
        await this.client.send(
          new (sdk().PutObjectCommand)({
            Bucket: this.bucket,
            Key: key,
            Body: Buffer.from(before + text, 'utf8'),
            ContentType: contentTypeOf(path),
            ...condition,
          }),
        );
        return;
      } catch (error) {
        const status = statusOf(error);
        const name = (error as SdkError | undefined)?.name;
        // 412: changed since read; 409 ConditionalRequestConflict: AWS saw two conditional writes at once.
        const changed = status === 412 || name === 'PreconditionFailed' || name === 'ConditionalRequestConflict';
        if (!changed) throw this.explain(error, `appending to ${path}`);
        if (attempt >= S3_APPEND_ATTEMPTS) {
          throw new OutputLocationError(
            `${this.urlOf(path)} changed under every one of ${S3_APPEND_ATTEMPTS} tries to append to it: other writers are appending at the same time. Try again.`,
          );
        }
      }
    }
  }

  urlOf(path: string): string {
    return s3UrlOf(this.bucket, this.keyOf(path));
  }

  async openWriter(path: string): Promise<OutputWriter> {
    const key = this.keyOf(path);
    const pending: Buffer[] = [];
    let pendingBytes = 0;
    let uploadId: string | undefined;
    const parts: { ETag?: string; PartNumber: number }[] = [];
    const uploadPart = async (): Promise<void> => {
      if (!uploadId) {
        const created = await this.client.send(
          new (sdk().CreateMultipartUploadCommand)({ Bucket: this.bucket, Key: key, ContentType: contentTypeOf(path) }),
        );
        uploadId = created.UploadId;
      }
      const partNumber = parts.length + 1;
      const body = Buffer.concat(pending);
      pending.length = 0;
      pendingBytes = 0;
      const uploaded = await this.client.send(
        new (sdk().UploadPartCommand)({
          Bucket: this.bucket,
          Key: key,
          UploadId: uploadId,
          PartNumber: partNumber,
          Body: body,
        }),
      );
      parts.push({ ETag: uploaded.ETag, PartNumber: partNumber });
    };
    const abort = async (): Promise<void> => {
      if (uploadId)
        await this.client
          .send(new (sdk().AbortMultipartUploadCommand)({ Bucket: this.bucket, Key: key, UploadId: uploadId }))
          .catch(() => undefined);
      uploadId = undefined;
    };
    return {
      write: async (text) => {
        const bytes = Buffer.from(text, 'utf8');
        pending.push(bytes);
        pendingBytes += bytes.length;
        if (pendingBytes >= this.partBytes)
          await uploadPart().catch(async (error: unknown) => Promise.reject(this.explain(error, `writing ${path}`)));
      },
      close: async () => {
        try {
          if (!uploadId) {
            await this.client.send(
              new (sdk().PutObjectCommand)({
                Bucket: this.bucket,
                Key: key,
                Body: Buffer.concat(pending),
                ContentType: contentTypeOf(path),
              }),
            );
            return;
          }
          if (pendingBytes > 0) await uploadPart();
          await this.client.send(
            new (sdk().CompleteMultipartUploadCommand)({
              Bucket: this.bucket,
              Key: key,
              UploadId: uploadId,
              MultipartUpload: { Parts: parts },
            }),
          );
        } catch (error) {
          await abort();
          throw this.explain(error, `writing ${path}`);
        }
      },
      abort,
    };
  }

  async sizeOf(path: string): Promise<number | undefined> {
    try {
      const head = await this.client.send(
        new (sdk().HeadObjectCommand)({ Bucket: this.bucket, Key: this.keyOf(path) }),
      );
      return head.ContentLength ?? 0;
    } catch (error) {
      if (statusOf(error) === 404 || (error as SdkError).name === 'NotFound') return undefined;
      throw this.explain(error, `looking for ${path}`);
    }
  }

  async list(directory: string): Promise<string[]> {
    const keyPrefix = [this.prefix, directory].filter((part) => part !== '').join('/');
    const listed = keyPrefix ? `${keyPrefix}/` : '';
    const names = new Set<string>();
    let continuationToken: string | undefined;
    do {
      let page;
      try {
        page = await this.client.send(
          new (sdk().ListObjectsV2Command)({
            Bucket: this.bucket,
            Prefix: listed,
            Delimiter: '/',
            ContinuationToken: continuationToken,
          }),
        );
      } catch (error) {
        throw this.explain(error, `listing ${directory || 'it'}`);
      }
      for (const common of page.CommonPrefixes ?? [])
        if (common.Prefix) names.add(common.Prefix.slice(listed.length).replace(/\/$/, ''));
      for (const object of page.Contents ?? []) if (object.Key) names.add(object.Key.slice(listed.length));
      continuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (continuationToken);
    names.delete('');
    return [...names];
  }
}

function contentTypeOf(path: string): string {
  if (path.endsWith('.jsonl')) return 'application/x-ndjson; charset=utf-8';
  if (path.endsWith('.json')) return 'application/json; charset=utf-8';
  return 'text/plain; charset=utf-8';
}
