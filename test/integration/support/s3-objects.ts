import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';

/** Reading back what a test wrote to S3 (SeaweedFS), straight through the SDK. */
export class S3Objects {
  constructor(
    readonly client: S3Client,
    readonly bucket: string,
  ) {}

  /** An object's text. */
  async text(key: string): Promise<string> {
    const response = await this.client.send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
    return (await response.Body?.transformToString('utf8')) ?? '';
  }

  /** Every key under a prefix, sorted (all pages). */
  async keysUnder(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }),
      );
      keys.push(...(page.Contents ?? []).map((object) => object.Key as string));
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
    return keys.sort();
  }

  /** Deletes every object under a prefix; resolves with how many there were. */
  async deleteUnder(prefix: string): Promise<number> {
    const keys = await this.keysUnder(prefix);
    for (const key of keys) await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
    return keys.length;
  }
}
