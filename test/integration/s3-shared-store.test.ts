import assert from 'node:assert/strict';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, test } from '@jest/globals';
import type { SeaweedServer } from '../../src/processes/seaweed-server';
import { loadConversation } from '../../src/storage/conversation';
import { S3TranscriptStore, createS3Client } from '../../src/storage/s3-transcript-store';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { Scenarios, answer, runId, toolCall } from './support/scenarios';
import { WorkerProcess } from './support/worker-process';

/*
 * Workers that share only Temporal and an S3 store (SeaweedFS): each has its own data and
 * transcript directory, the run survives the store going down mid-run and a worker crash, and
 * `react-agent result` from a third directory materialises the transcript from S3. No local
 * transcript directory is ever written.
 */

const BUCKET = 'agent-transcripts';
const scenarios = new Scenarios();
let environment: AgentEnvironment;
let seaweed: SeaweedServer;

function s3Environment(): Record<string, string> {
  return { ...seaweed.environment(), REACT_AGENT_TRANSCRIPT_STORE: `s3://${BUCKET}/team-a` };
}

function machine(name: string): Record<string, string> {
  const data = join(environment.directory, name);
  mkdirSync(data, { recursive: true });
  return { ...s3Environment(), REACT_AGENT_DATA_DIR: data, REACT_AGENT_TRANSCRIPT_DIR: join(data, 'transcripts') };
}

beforeAll(async () => {
  // Model attempts cover the store outage too (the model activity reads the conversation first).
  environment = await AgentEnvironment.start({
    script: scenarios.script,
    workerEnvironment: { REACT_AGENT_MODEL_MAX_ATTEMPTS: '12' },
  });
  seaweed = await environment.startS3([BUCKET]);
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** A pending activity's heartbeat details as text (JSON payloads), to read what it waits for. */
function heartbeatTexts(payloads: Array<{ data?: Uint8Array | null }> | null | undefined): string[] {
  return (payloads ?? []).map((payload) => (payload.data ? Buffer.from(payload.data).toString('utf8') : ''));
}

test('two workers share only Temporal and S3: the store down for 10 s and a worker SIGKILLed mid-run, the run finishes; result materialises from S3', async () => {
  const first = await environment.startWorker(machine('machine-1'));
  const second = await environment.startWorker(machine('machine-2'));
  assert.match(first.log, new RegExp(`transcripts s3://${BUCKET}/team-a`));

  const id = scenarios.add(runId('s3-shared'), [
    toolCall('lookup', { query: 'BYD 2024' }),
    toolCall('wait', { seconds: 2 }),
    toolCall('lookup', { query: 'Tesla 2024' }),
    answer('BYD sold about 2.48 million more.'),
  ]);
  const handle = await environment.startRun({ question: 'BYD or Tesla in 2024?', tools: ['lookup', 'wait'] }, id);

  const deadline = Date.now() + 60_000;
  while (environment.requestsOf(id).length < 2) {
    assert.ok(Date.now() < deadline, 'the run reached its second model call');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await seaweed.kill();
  await first.crash();
  // The store stays down until an activity of the run has failed on it, or a tool call waits for
  // it to store its output (its heartbeats say so), and 10 s more.
  const storeFailure = /transcript store s3:\/\/agent-transcripts\/team-a is unavailable/;
  const outageDeadline = Date.now() + 120_000;
  let failedOnStore: string | undefined;
  while (failedOnStore === undefined) {
    assert.ok(Date.now() < outageDeadline, 'an activity of the run failed on the store while it was down');
    const pending = (await handle.describe()).raw.pendingActivities ?? [];
    failedOnStore = pending
      .flatMap((activity) => [
        activity.lastFailure?.message ?? '',
        ...heartbeatTexts(activity.heartbeatDetails?.payloads),
      ])
      .find((message) => storeFailure.test(message));
    if (failedOnStore === undefined) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  await seaweed.restart();

  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'BYD sold about 2.48 million more.');
  assert.match(second.log, /react-agent worker:/);

  const location = {
    bucket: BUCKET,
    prefix: 'team-a',
    endpoint: seaweed.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
  };
  const store = new S3TranscriptStore(
    location,
    createS3Client(location, {
      credentials: { accessKeyId: seaweed.accessKeyId, secretAccessKey: seaweed.secretAccessKey },
    }),
  );
  const messages = await loadConversation(store, result.transcript);
  assert.equal(messages.length, 9, 'system, question, 4 replies, 3 observations');

  assert.match(failedOnStore, /Temporal retries; the run resumes when the store is back/);

  const third = machine('machine-3');
  const cli = CliProcess.start(['result', id], {
    environment: { ...environment.environment, ...third },
    timeoutMs: 60_000,
  });
  const exit = await cli.exited;
  assert.equal(exit.code, 0, cli.stderr);
  const printed = JSON.parse(cli.stdout) as { messages: Array<{ role: string; content: string }>; termination: string };
  assert.equal(printed.termination, 'answer');
  expect(printed.messages.map((message) => message.role)).toEqual(messages.map((message) => message.role));
  assert.match(
    printed.messages.map((message) => message.content).join('\n'),
    /Facts about Tesla 2024: BYD sold 4,272,145/,
  );

  for (const name of ['machine-1', 'machine-2', 'machine-3']) {
    assert.equal(
      existsSync(join(environment.directory, name, 'transcripts')),
      false,
      `${name} wrote no local transcripts`,
    );
  }
  assert.equal(existsSync(join(environment.directory, 'transcripts')), false, 'nor the shared test directory');
}, 240_000);

test('a worker with wrong S3 credentials or a missing bucket stops at start, naming the variable', async () => {
  for (const [extra, variable, pattern] of [
    [{ AWS_SECRET_ACCESS_KEY: 'wrong-secret' }, 'AWS_ACCESS_KEY_ID', /refused this worker's credentials/],
    [
      { REACT_AGENT_TRANSCRIPT_STORE: 's3://no-such-bucket/x' },
      'REACT_AGENT_TRANSCRIPT_STORE',
      /bucket "no-such-bucket".*does not exist/,
    ],
  ] as const) {
    await assert.rejects(
      WorkerProcess.start({ ...environment.environment, ...machine('bad'), ...extra }, 60_000),
      (error: unknown) => {
        assert.match((error as Error).message, new RegExp(variable));
        assert.match((error as Error).message, pattern);
        return true;
      },
    );
  }
}, 120_000);
