/**
 * `s3://bucket/prefix` URLs, read the same way wherever one is given: the transcript store
 * (REACT_AGENT_TRANSCRIPT_STORE), a batch's or an evaluation's paths and outputs, and the
 * workflows' input checks. A location users name is a local path or such a URL; this file is the
 * one place that tells them apart ({@link isS3Location}) and says whether a worker can use one
 * ({@link workerLocationProblem}); `src/storage/output-location.ts` opens them and does their
 * path arithmetic. Pure string work, so it is workflow-safe.
 */

/** An `s3://` URL taken apart. */
export interface S3Url {
  bucket: string;
  /** Key prefix without leading or trailing slash; '' for the bucket's root. */
  prefix: string;
  /** `s3://bucket/prefix`, normalised (no trailing slash). */
  url: string;
}

/** What is wrong with a text that should be an `s3://` URL. */
export type S3UrlProblem = 'not-s3' | 'bucket' | 'prefix';

/** S3's bucket-name rule: 3-63 characters, lower-case letters, digits, dots and hyphens, starting and ending with a letter or digit. */
const BUCKET_NAME = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/**
 * `s3://bucket/prefix` from its parts; the key prefix's segments are joined with `/` and empty
 * ones dropped, so `s3UrlOf('b', '')` is `s3://b` and `s3UrlOf('b', 'team', 'verdicts')` is
 * `s3://b/team/verdicts`.
 */
export function s3UrlOf(bucket: string, ...prefixSegments: string[]): string {
  const prefix = prefixSegments.filter((segment) => segment !== '').join('/');
  return `s3://${bucket}${prefix ? `/${prefix}` : ''}`;
}

/** Whether a location names S3 (`s3://…`, well formed or not) rather than a local path. */
export function isS3Location(location: string): boolean {
  return location.startsWith('s3://');
}

/**
 * Why a worker cannot use a location given in a workflow's input, or undefined when it can: it
 * must be an absolute path (on the workers' machines) or a valid `s3://bucket/prefix` URL.
 * `malformed-s3` for an `s3://` text that is not a valid URL, `not-absolute` for anything else.
 */
export function workerLocationProblem(location: string): 'malformed-s3' | 'not-absolute' | undefined {
  if (isS3Location(location)) return isValidS3Url(location) ? undefined : 'malformed-s3';
  return location.startsWith('/') ? undefined : 'not-absolute';
}

/** Parses `s3://bucket/prefix`; says what is wrong instead when it is not one. */
export function parseS3Url(value: string): S3Url | { problem: S3UrlProblem; bucket: string; prefix: string } {
  const match = /^s3:\/\/([^/]*)(?:\/(.*))?$/.exec(value);
  if (!match) return { problem: 'not-s3', bucket: '', prefix: '' };
  const bucket = match[1] ?? '';
  const prefix = (match[2] ?? '').replace(/\/+$/, '');
  if (!BUCKET_NAME.test(bucket) || bucket.includes('..')) return { problem: 'bucket', bucket, prefix };
  const segments = prefix.split('/');
  const badSegment = segments.some(
    (segment) => (segment === '' && segments.length > 1) || segment === '.' || segment === '..',
  );
  // eslint-disable-next-line no-control-regex -- rejecting control characters is the point
  if (badSegment || /[\u0000-\u001f]/.test(prefix)) return { problem: 'prefix', bucket, prefix };
  return { bucket, prefix, url: s3UrlOf(bucket, prefix) };
}

/** Whether a text is a valid `s3://bucket[/prefix]` URL. */
export function isValidS3Url(value: string): boolean {
  return !('problem' in parseS3Url(value));
}
