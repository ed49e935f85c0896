import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import { INVALID_UTF8_MARKER, ScriptedModelServer, type ScriptedRequestRecord } from '../fakes/scripted-model-server';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

const SECRET = 'sk-test-secret-key-0123456789';
const scenarios = new Scenarios();
let environment: AgentEnvironment;
/** The model server answering now; the outage test replaces it with a new one on the same port. */
let model: ScriptedModelServer;
const earlierRequests: ScriptedRequestRecord[] = [];

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: scenarios.script,
    workerEnvironment: { REACT_AGENT_MODEL_MAX_ATTEMPTS: '12' },
  });
  model = environment.model;
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
  if (model !== environment?.model) await model?.close();
});

const requestsOf = (workflowId: string) =>
  [...earlierRequests, ...model.requests].filter((request) => request.workflowId === workflowId);

async function run(label: string, replies: Parameters<Scenarios['add']>[1]) {
  const workflowId = scenarios.add(runId(label), replies);
  const handle = await environment.startRun({ question: `Question of ${label}?` }, workflowId);
  const result = (await handle.result()) as ResearchRunResult;
  return { workflowId, handle, result, requests: requestsOf(workflowId) };
}

/** Answers with `failure` on the first attempts of model call 1, then with the script. */
function failingFirst(
  failures: Array<
    Parameters<Scenarios['add']>[1] extends infer R ? (R extends Array<infer Reply> ? Reply : never) : never
  >,
  then: ReturnType<typeof answer>,
) {
  return (_turn: number, request: { workflowId?: string }) => {
    const attempt = requestsOf(request.workflowId as string).length;
    return failures[attempt - 1] ?? then;
  };
}

test('500 and 502 from the model server are retried and the run finishes', async () => {
  const { result, requests } = await run(
    'server-errors',
    failingFirst(
      [
        { status: 500, errorMessage: 'boom' },
        { status: 502, errorMessage: 'bad gateway' },
      ],
      answer('after 5xx'),
    ),
  );
  assert.equal(result.termination, 'answer');
  assert.deepEqual(
    requests.map((request) => request.status),
    [500, 502, 200],
  );
});

test('403 ends the run error with a message naming the setting to fix, without retrying', async () => {
  const { result, requests } = await run('forbidden', [
    { status: 403, errorMessage: 'Project does not have access to model' },
  ]);
  assert.equal(result.termination, 'error');
  assert.match(result.error ?? '', /rejected the request with 403.*Check OPENAI_API_KEY/);
  assert.equal(requests.length, 1);
});

test('a stream that stalls longer than the stall limit is abandoned and retried', async () => {
  const { result, requests } = await run(
    'stall',
    failingFirst(
      [{ content: '<think>thinking very slowly about this</think>', stallAfterChunks: 2, chunks: 4 }],
      answer('after a stall'),
    ),
  );
  assert.equal(result.termination, 'answer');
  assert.equal(requests.length, 2);
  assert.equal(requests[0]?.aborted, true, 'the stalled stream was abandoned');
  assert.equal(requests[0]?.completed, false);
  assert.equal(requests[1]?.completed, true);
});

test('invalid UTF-8 from the server becomes replacement characters, not a failure', async () => {
  const { result } = await run('invalid-utf8', [
    { content: `<answer>BYD ${INVALID_UTF8_MARKER} wins</answer>`, invalidUtf8: true, chunks: 1 },
  ]);
  assert.equal(result.termination, 'answer');
  assert.match(result.prediction, /^BYD \uFFFD\( wins$/);
});

test('no API key in history, memo, search attributes, results, the transcript store or worker logs', async () => {
  const { handle, result } = await run('secrets', [toolCall('lookup', { query: 'BYD' }), answer('done')]);
  assert.equal(result.termination, 'answer');
  const history = JSON.stringify(await handle.fetchHistory());
  assert.ok(history.length > 1_000, 'the history was exported');
  assert.ok(!history.includes(SECRET), 'history');
  const description = await handle.describe();
  assert.ok(
    !JSON.stringify({
      memo: description.memo,
      attributes: description.typedSearchAttributes.getAll(),
      summary: description.staticSummary,
    }).includes(SECRET),
    'memo and search attributes',
  );
  assert.ok(!JSON.stringify(result).includes(SECRET), 'result');
  for (const worker of environment.workers) assert.ok(!worker.log.includes(SECRET), 'worker log');
  const transcripts = join(environment.directory, 'transcripts');
  for (const folder of readdirSync(transcripts)) {
    for (const file of readdirSync(join(transcripts, folder))) {
      const path = join(transcripts, folder, file);
      if (statSync(path).isFile()) assert.ok(!readFileSync(path, 'utf8').includes(SECRET), `transcript blob ${file}`);
    }
  }
  assert.ok(
    requestsOf(handle.workflowId).every((request) => request.authorization === `Bearer ${SECRET}`),
    'the key does reach the model server',
  );
});

test('the model server down for 60 s: the run waits with backoff and finishes', async () => {
  const port = model.port;
  earlierRequests.push(...model.requests);
  await model.close();
  const workflowId = scenarios.add(runId('outage'), [
    toolCall('lookup', { query: 'during outage' }),
    answer('survived the outage'),
  ]);
  const started = Date.now();
  const handle = await environment.startRun({ question: 'Survive a model outage.' }, workflowId);
  await new Promise((resolve) => setTimeout(resolve, 60_000));
  model = await ScriptedModelServer.start({ script: scenarios.script, port });
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'survived the outage');
  assert.ok(Date.now() - started >= 60_000);
  assert.deepEqual(protocolProblems(await environment.transcript(result)), []);
  assert.deepEqual(
    requestsOf(workflowId).map((request) => request.modelCall),
    [1, 2],
    'no request reached a closed server; each call was answered once',
  );
});
