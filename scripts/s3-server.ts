/**
 * `npm run s3`: a local S3-compatible server (SeaweedFS `weed mini`) on 127.0.0.1 for workers
 * and the CLI on this machine to share transcripts, until Ctrl-C. Data and credentials live in
 * `<REACT_AGENT_DATA_DIR>/seaweedfs` (default `.data/seaweedfs`); the credentials are made up on
 * the first start (or taken from AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY) and kept.
 * `REACT_AGENT_S3_PORT` (default 8333) and `REACT_AGENT_S3_BUCKET` (default `react-agent`).
 */
import { join } from 'node:path';
import { loadWorkerConfig, readPositiveInteger } from '../src/config';
import { SeaweedServer } from '../src/processes/seaweed-server';

async function main(): Promise<void> {
  const directory = join(loadWorkerConfig().dataDirectory, 'seaweedfs');
  const bucket = process.env.REACT_AGENT_S3_BUCKET?.trim() || 'react-agent';
  const server = await SeaweedServer.start({
    directory,
    s3Port: readPositiveInteger(process.env, 'REACT_AGENT_S3_PORT', 8333),
    buckets: [bucket],
    ...(process.env.AWS_ACCESS_KEY_ID && process.env.AWS_SECRET_ACCESS_KEY
      ? { accessKeyId: process.env.AWS_ACCESS_KEY_ID, secretAccessKey: process.env.AWS_SECRET_ACCESS_KEY }
      : {}),
  });
  const variables = { REACT_AGENT_TRANSCRIPT_STORE: `s3://${bucket}/transcripts`, ...server.environment() };
  console.log(
    `SeaweedFS S3 at ${server.endpoint} (data ${directory}, log ${server.logFile}). Point workers and the CLI at it with:\n`,
  );
  for (const [name, value] of Object.entries(variables)) console.log(`  export ${name}=${value}`);
  console.log('\nCtrl-C stops it.');
  await new Promise<void>((resolveStop) => {
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(signal, () => resolveStop());
  });
  await server.stop();
}

main().catch((error: unknown) => {
  console.error(error instanceof Error ? error.message : error);
  process.exit(1);
});
