/**
 * Transcript store: the local directory (the embedded default, the baseline) beside SeaweedFS
 * (the S3TranscriptStore over a real S3-compatible server, `weed mini` on loopback, started here
 * and stopped at the end), in the same run:
 *
 * - put and get latency, p50/p95, of distinct texts of a typical message (4 KiB) and a large
 *   observation (256 KiB), one at a time;
 * - the same on SeaweedFS behind the worker's read cache (CachedTranscriptStore, as worker/main.ts
 *   builds it by default): gets of texts it wrote or read before never reach the store;
 * - the wall time of a 100-call scripted run (99 lookup tool calls, then an answer; model latency
 *   0) on an in-process worker writing its transcript to each store.
 *
 *   npm run benchmark:store                           (200 puts/gets per size, a 100-call run)
 *   npm run benchmark:store -- --operations 500 --calls 100
 */
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LocalDirectoryTranscriptStore } from '../activities';
import { DevServer } from '../src/processes/dev-server';
import { SeaweedServer } from '../src/processes/seaweed-server';
import type { ResearchRunResult } from '../src/core/run-result';
import { CachedTranscriptStore } from '../src/storage/cached-transcript-store';
import { createS3Client, S3TranscriptStore } from '../src/storage/s3-transcript-store';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { scriptFromTurns, ScriptedModelServer } from '../test/fakes/scripted-model-server';
import { argument, createScriptedWorker, describeLoad, lookupThenAnswer, percentile } from './fleet-helpers';

const OPERATIONS = Number(argument('operations', '200'));
const CALLS = Number(argument('calls', '100'));
const SIZES = [4 * 1024, 256 * 1024];
const BUCKET = 'benchmark';

const milliseconds = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;
const format = (values: number[]) =>
  `${percentile(values, 0.5).toFixed(2)} / ${percentile(values, 0.95).toFixed(2)} ms`;

/** Put OPERATIONS distinct texts of `size` bytes one at a time, then get each back; latencies in ms. */
async function putAndGet(store: TranscriptStore, size: number): Promise<{ put: number[]; get: number[] }> {
  const put: number[] = [];
  const get: number[] = [];
  const references: string[] = [];
  for (let index = 0; index < OPERATIONS; index += 1) {
    const text = randomBytes(size / 2).toString('hex');
    const started = process.hrtime.bigint();
    references.push(await store.putText(text));
    put.push(milliseconds(started));
  }
  for (const reference of references) {
    const started = process.hrtime.bigint();
    await store.getText(reference);
    get.push(milliseconds(started));
  }
  return { put, get };
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const directory = mkdtempSync(join(tmpdir(), 'react-agent-store-benchmark-'));
  const [server, seaweed, model] = await Promise.all([
    DevServer.start({ port: 0, uiPort: false, databaseFile: join(directory, 'temporal.sqlite') }),
    SeaweedServer.start({ directory: join(directory, 'seaweedfs'), buckets: [BUCKET] }),
    ScriptedModelServer.start({ script: scriptFromTurns(lookupThenAnswer(CALLS)) }),
  ]);
  const location = {
    bucket: BUCKET,
    prefix: 'transcripts',
    endpoint: seaweed.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
  };
  const stores: Array<[string, TranscriptStore]> = [
    ['local directory', new LocalDirectoryTranscriptStore(join(directory, 'transcripts'))],
    [
      'SeaweedFS (S3)',
      new S3TranscriptStore(
        location,
        createS3Client(location, {
          credentials: { accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey },
        }),
      ),
    ],
  ];
  // The worker's default: S3 behind its read cache (REACT_AGENT_TRANSCRIPT_CACHE_MB, 256 MB).
  stores.push(['S3 + read cache', new CachedTranscriptStore(stores[1]![1], { maxCharacters: 128 * 1024 * 1024 })]);
  const connection = await Connection.connect({ address: server.address });
  const client = new Client({ connection });
  const workerConnection = await NativeConnection.connect({ address: server.address });

  console.log(
    `Transcript store: local directory (baseline) vs SeaweedFS on loopback; ${OPERATIONS} distinct puts then gets per size, one at a time; a ${CALLS}-call scripted run (model latency 0)`,
  );
  console.log('');
  console.log(
    [
      'store'.padEnd(16),
      ...SIZES.flatMap((size) => [
        `put ${size / 1024} KiB p50/p95`.padStart(22),
        `get ${size / 1024} KiB p50/p95`.padStart(22),
      ]),
      `${CALLS}-call run`.padStart(13),
      '  load (1/5/15 min)',
    ].join('  '),
  );
  try {
    for (const [label, store] of stores) {
      // A few warm-up operations (connections, the directory's first folders).
      await putAndGet(store, 1024).catch((error: unknown) => {
        throw new Error(`${label}: ${(error as Error).message}`);
      });
      const cells: string[] = [];
      for (const size of SIZES) {
        const { put, get } = await putAndGet(store, size);
        cells.push(format(put).padStart(22), format(get).padStart(22));
      }
      const taskQueue = `store-${label.replace(/\W+/g, '-')}`;
      const worker = await createScriptedWorker({
        connection: workerConnection,
        taskQueue,
        modelBaseUrl: model.baseUrl,
        store,
      });
      const seconds = await worker.runUntil(async () => {
        const started = Date.now();
        const result = (await client.workflow.execute('researchAgent', {
          taskQueue,
          workflowId: `${taskQueue}-${Date.now()}`,
          args: [
            {
              question: 'Which company sold more cars in 2024, BYD or Tesla?',
              limits: { maxModelCalls: CALLS + 5, maxContextTokens: 1_000_000 },
              loop: { stuckDetection: false },
            },
          ],
        })) as ResearchRunResult;
        if (result.termination !== 'answer' || result.iterations !== CALLS)
          throw new Error(`${label}: the run ended ${result.termination} after ${result.iterations} calls`);
        return (Date.now() - started) / 1000;
      });
      console.log(
        [label.padEnd(16), ...cells, `${seconds.toFixed(1)} s`.padStart(13), `  ${describeLoad()}`].join('  '),
      );
    }
    console.log('');
    console.log(
      'Latencies are one operation at a time from this process (no concurrency); the run includes the Temporal round trips of every step.',
    );
  } finally {
    await workerConnection.close();
    await connection.close();
    await Promise.all([model.close(), seaweed.stop(), server.stop()]);
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
