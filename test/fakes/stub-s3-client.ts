import type { S3Client } from '@aws-sdk/client-s3';

/** An S3 client stand-in for unit tests: `send` hands each command (its class name and input) to `answer`. */
export function fakeClient(
  answer: (command: { constructor: { name: string }; input: Record<string, unknown> }) => unknown,
): S3Client {
  return { send: async (command: never) => answer(command), config: { endpoint: undefined } } as unknown as S3Client;
}

/** An error shaped like the AWS SDK's: a name and, when given, `$metadata.httpStatusCode`. */
export function sdkError(name: string, status?: number, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(`${name} happened`), {
    name,
    ...(status ? { $metadata: { httpStatusCode: status } } : {}),
    ...extra,
  });
}
