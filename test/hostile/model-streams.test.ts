import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { ScriptedReply } from '../fakes/scripted-model-server';
import { AgentEnvironment } from '../integration/support/agent-environment';
import type { WorkerProcess } from '../integration/support/worker-process';
import { answer, runId, Scenarios } from '../integration/support/scenarios';

// Issue 28, row 3: a model server that sends 200 MB without a newline, a 50 MB tool call, or a
// 3 MB reply without a space. Each must end its own run with a clear reason after one request —
// never 12 paid retries — while the worker stays alive, answers another run meanwhile, and its
// log is not flooded with what the server sent.

const scenarios = new Scenarios();
let environment: AgentEnvironment;
let worker: WorkerProcess;

beforeAll(async () => {
  // As the pass ran it: 12 attempts of a model call.
  environment = await AgentEnvironment.start({
    script: scenarios.script,
    workerEnvironment: { REACT_AGENT_MODEL_MAX_ATTEMPTS: '12' },
  });
  worker = await environment.startWorker();
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Rejects after `ms` saying what did not happen in time. */
const within = <T>(ms: number, what: string, promise: Promise<T>) =>
  Promise.race([
    promise,
    new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`${what} did not happen within ${ms / 1000} s`)), ms).unref(),
    ),
  ]);

/**
 * Starts a run whose first model call gets `attack`; once the server is sending it, starts an
 * ordinary run on the same worker, which must finish within 60 s. Returns the attacked run's result
 * and the requests its model calls made.
 */
async function attackedRun(label: string, attack: ScriptedReply) {
  const workflowId = scenarios.add(runId(label), [attack]);
  const handle = await environment.startRun({ question: `Question of ${label}?` }, workflowId);
  await environment.model.waitForRequest((request) => request.workflowId === workflowId, 60_000);
  const bystanderId = scenarios.add(runId(`${label}-bystander`), [answer('still here')]);
  const bystander = await environment.startRun({ question: 'Is the worker still answering?' }, bystanderId);
  const bystanderResult = (await within(
    60_000,
    'the other run on the worker finishing',
    bystander.result(),
  )) as ResearchRunResult;
  assert.equal(bystanderResult.termination, 'answer');
  assert.equal(bystanderResult.prediction, 'still here');
  const result = (await within(120_000, 'the attacked run ending', handle.result())) as ResearchRunResult;
  assert.ok(alive(worker.pid), 'the worker is alive');
  // The openai client quotes an event it cannot parse: nothing the server sent flooded the log.
  assert.ok(worker.log.length < 200_000, `the worker's log is ${worker.log.length} characters`);
  return { result, requests: environment.requestsOf(workflowId) };
}

test('200 MB of stream without a newline: the run ends error, line too large, after one request', async () => {
  const { result, requests } = await attackedRun('endless-line', { endlessLineBytes: 200 * 1024 * 1024 });
  assert.equal(result.termination, 'error');
  assert.match(
    result.error ?? '',
    /reply was too large: one line of its stream passed 4194304 bytes \(REACT_AGENT_MODEL_MAX_LINE_BYTES\)/,
  );
  assert.equal(requests.length, 1, 'one request, not retried');
  assert.equal(requests[0]?.aborted, true, 'the worker hung up');
}, 300_000);

test('a 50 MB native tool call: the run ends error, too large, after one request', async () => {
  const { result, requests } = await attackedRun('huge-tool-call', {
    toolCalls: [{ id: 'call-1', name: 'lookup', arguments: `{"query":"${'q'.repeat(50 * 1024 * 1024)}"}` }],
  });
  assert.equal(result.termination, 'error');
  assert.match(
    result.error ?? '',
    /reply was too large: .*passed \d+ bytes \(REACT_AGENT_MODEL_MAX_(LINE|REPLY)_BYTES\)/,
  );
  assert.equal(requests.length, 1, 'one request, not retried');
}, 300_000);

test('a 3 MB reply without a space: the run ends error, text too large, after one request', async () => {
  const { result, requests } = await attackedRun('no-spaces', {
    content: `<answer>${'a'.repeat(3 * 1024 * 1024)}</answer>`,
    chunks: 3_000,
  });
  assert.equal(result.termination, 'error');
  assert.match(
    result.error ?? '',
    /reply was too large: its text passed 1048576 bytes \(REACT_AGENT_MODEL_MAX_REPLY_BYTES\)/,
  );
  assert.equal(requests.length, 1, 'one request, not retried');
}, 300_000);

test('a 900 KB answer without a space, under the limit: counted without crashing tiktoken, the run answers', async () => {
  const text = 'a'.repeat(900 * 1024);
  const { result, requests } = await attackedRun('long-word', { content: `<answer>${text}</answer>`, chunks: 900 });
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, text);
  assert.equal(requests.length, 1, 'one request');
  assert.ok(!/RuntimeError: unreachable/.test(worker.log), 'tiktoken did not crash');
}, 300_000);
