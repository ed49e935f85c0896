import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

/**
 * What a run does with the model server's HTTP answers: a context-length 400, a rejected key, 5xx
 * and 429 with retry-after. The rest of a research run's behaviour is in the workflow tier
 * (test/workflow/research-run.test.ts).
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
});

afterAll(async () => {
  await environment?.close();
});

async function run(
  label: string,
  replies: Parameters<Scenarios['add']>[1],
  input: Partial<Parameters<AgentEnvironment['startRun']>[0]> = {},
) {
  const workflowId = scenarios.add(runId(label), replies);
  const handle = await environment.startRun({ question: `Question of ${label}?`, ...input }, workflowId);
  const result = (await handle.result()) as ResearchRunResult;
  const messages = await environment.transcript(result);
  return { handle, result, messages, requests: environment.requestsOf(workflowId) };
}

test('a context-length error from the model server leads to the final answer, not a failed run', async () => {
  const { result, requests } = await run('context-400', (turn, request) =>
    String(request.messages.at(-1)?.content).includes('Stop calling tools now')
      ? answer('short answer')
      : turn === 1
        ? toolCall('lookup', { query: 'a' })
        : {
            status: 400,
            errorCode: 'context_length_exceeded',
            errorMessage: "This model's maximum context length is 8192 tokens.",
          },
  );
  assert.equal(result.termination, 'token_limit');
  assert.equal(result.prediction, 'short answer');
  assert.equal(requests.filter((request) => request.status === 400).length, 1, 'a context-length error is not retried');
});

test('a rejected API key ends the run with error, naming the setting, without retrying', async () => {
  const { result, requests } = await run('unauthorized', [{ status: 401, errorMessage: 'Incorrect API key provided' }]);
  assert.equal(result.termination, 'error');
  assert.match(result.error ?? '', /OPENAI_API_KEY/);
  assert.doesNotMatch(JSON.stringify(result), /sk-test-secret-key/);
  assert.equal(requests.length, 1);
});

test('server errors and rate limits are retried by Temporal, honouring retry-after', async () => {
  const { result, requests } = await run('retry', (turn, request) => {
    const attempt = environment.requestsOf(request.workflowId as string).length;
    if (attempt === 1) return { status: 503, errorMessage: 'overloaded' };
    if (attempt === 2) return { status: 429, errorMessage: 'slow down', headers: { 'retry-after': '2' } };
    return answer('after retries');
  });
  assert.equal(result.termination, 'answer');
  assert.equal(requests.length, 3);
  const waited = (requests[2]?.receivedAt ?? 0) - (requests[1]?.receivedAt ?? 0);
  assert.ok(waited >= 1_900, `waited ${waited} ms after a 429 with retry-after: 2`);
});
