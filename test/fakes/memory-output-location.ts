import {
  OutputLocationError,
  parseS3OutputUrl,
  type OpenLocation,
  type OutputLocation,
  type OutputWriter,
} from '../../src/storage/output-location';

/**
 * In-memory S3 buckets for unit tests: `open` gives an `OutputLocation` for `s3://bucket/prefix`
 * over one shared map of `bucket/key` → text, so files written through one location are seen
 * through another (a batch's prefix and its `evaluation/` below it). A bucket not created answers
 * like S3 (an `OutputLocationError` with problem `bucket-missing`); every operation is counted.
 */
export class MemoryBuckets {
  readonly objects = new Map<string, string>();
  /** Operations in order: `read p/iter1.jsonl`, `write …`, `append …`, `list …`. */
  readonly operations: string[] = [];

  constructor(readonly buckets: string[]) {}

  /** Opens `s3://bucket/prefix` (throws like {@link parseS3OutputUrl} for a malformed URL). */
  readonly open: OpenLocation = (url) => {
    const { bucket, prefix } = parseS3OutputUrl(url);
    return new MemoryOutputLocation(this, bucket, prefix);
  };

  /** The text of `s3://bucket/key`, for assertions. */
  text(url: string): string | undefined {
    const { bucket, prefix } = parseS3OutputUrl(url);
    return this.objects.get(`${bucket}/${prefix}`);
  }
}

/** One prefix of {@link MemoryBuckets}. */
export class MemoryOutputLocation implements OutputLocation {
  constructor(
    private readonly buckets: MemoryBuckets,
    readonly bucket: string,
    readonly prefix: string,
  ) {}

  get url(): string {
    return `s3://${this.bucket}${this.prefix ? `/${this.prefix}` : ''}`;
  }

  private keyOf(path: string): string {
    this.requireBucket();
    return `${this.bucket}/${[this.prefix, path].filter((part) => part !== '').join('/')}`;
  }

  private requireBucket(): void {
    if (!this.buckets.buckets.includes(this.bucket)) {
      throw new OutputLocationError(
        `The bucket "${this.bucket}" of the output ${this.url} does not exist (in memory).`,
        'bucket-missing',
      );
    }
  }

  async check(): Promise<void> {
    this.requireBucket();
  }

  async readText(path: string): Promise<string | undefined> {
    this.buckets.operations.push(`read ${path}`);
    return this.buckets.objects.get(this.keyOf(path));
  }

  async readLines(path: string): Promise<AsyncIterable<string> | undefined> {
    const text = await this.readText(path);
    return text === undefined
      ? undefined
      : (async function* lines() {
          yield* text.replace(/\n$/, '').split('\n');
        })();
  }

  async writeText(path: string, text: string): Promise<void> {
    this.buckets.operations.push(`write ${path}`);
    this.buckets.objects.set(this.keyOf(path), text);
  }

  async appendText(path: string, text: string): Promise<void> {
    this.buckets.operations.push(`append ${path}`);
    const key = this.keyOf(path);
    this.buckets.objects.set(key, (this.buckets.objects.get(key) ?? '') + text);
  }

  urlOf(path: string): string {
    return `s3://${this.keyOf(path)}`;
  }

  async openWriter(path: string): Promise<OutputWriter> {
    const pieces: string[] = [];
    return {
      write: async (text) => {
        pieces.push(text);
      },
      close: () => this.writeText(path, pieces.join('')),
      abort: async () => undefined,
    };
  }

  /** Like S3's HEAD object, which answers a missing bucket with a bare 404: undefined. */
  async sizeOf(path: string): Promise<number | undefined> {
    if (!this.buckets.buckets.includes(this.bucket)) return undefined;
    const text = this.buckets.objects.get(this.keyOf(path));
    return text === undefined ? undefined : Buffer.byteLength(text);
  }

  async list(directory: string): Promise<string[]> {
    this.buckets.operations.push(`list ${directory}`);
    const listed = `${this.keyOf(directory).replace(/\/+$/, '')}/`;
    const names = new Set<string>();
    for (const key of this.buckets.objects.keys())
      if (key.startsWith(listed)) names.add(key.slice(listed.length).split('/')[0] as string);
    return [...names];
  }
}
