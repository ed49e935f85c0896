import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { AgentEnvironment } from './support/agent-environment';
import { runClient, type ClientOutcome } from './support/client-process';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

/**
 * The Go client sample (samples/clients/go, go.temporal.io/sdk), built by npm's postinstall
 * (scripts/setup-go-client.mjs), against the real dev server, a real worker and the scripted
 * model: it starts `researchAgent` by type name, prints the run's progress while it works and
 * its result as JSON.
 */
const root = resolve(__dirname, '../..');
const binary = join(root, '.tools/go-client/research-client');

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  if (!existsSync(binary)) {
    const unavailable = join(root, '.tools/go-client/unavailable.txt');
    const reason = existsSync(unavailable)
      ? readFileSync(unavailable, 'utf8').trim()
      : 'scripts/setup-go-client.mjs has not run';
    throw new Error(`The Go client sample is not built (${binary} is missing): ${reason}`);
  }
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

function researchClient(args: string[], timeoutMs = 60_000): Promise<ClientOutcome> {
  return runClient(binary, args, { cwd: root, env: { ...process.env, ...environment.environment }, timeoutMs });
}

test('Go: starts researchAgent by type name, shows its progress while it works, prints the result as JSON', async () => {
  const workflowId = scenarios.add(runId('go-run'), [
    {
      ...toolCall('lookup', { query: 'BYD 2024 sales' }, 'I should look up BYD first.'),
      delayBeforeFirstChunkMs: 1_500,
    },
    { ...toolCall('lookup', { query: 'Tesla 2024 deliveries' }), delayBeforeFirstChunkMs: 1_500 },
    answer('BYD sold about 2.48 million more vehicles than Tesla in 2024.'),
  ]);
  const outcome = await researchClient([
    '-id',
    workflowId,
    '-max-calls',
    '5',
    '-poll',
    '200ms',
    'Which company sold more cars in 2024, BYD or Tesla?',
  ]);
  assert.equal(outcome.code, 0, outcome.stderr);

  const result = JSON.parse(outcome.stdout);
  assert.equal(result.question, 'Which company sold more cars in 2024, BYD or Tesla?');
  assert.equal(result.prediction, 'BYD sold about 2.48 million more vehicles than Tesla in 2024.');
  assert.equal(result.termination, 'answer');
  assert.equal(result.iterations, 3);
  assert.equal(result.toolCalls, 2);
  assert.ok(result.usage.totalTokens > 0);
  assert.match(result.transcript, /^sha256:[0-9a-f]{64}$/);

  // The progress lines it printed while the run worked: the budget from -max-calls, model calls counting up.
  assert.match(outcome.stderr, new RegExp(`^started ${workflowId} \\(run [0-9a-f-]{36}\\)$`, 'm'));
  const progress = [
    ...outcome.stderr.matchAll(/^progress: phase=(\w+) modelCalls=(\d+) toolCalls=(\d+) remainingModelCalls=(\d+)/gm),
  ].map((match) => ({
    phase: match[1],
    modelCalls: Number(match[2]),
    remaining: Number(match[4]),
  }));
  assert.ok(
    progress.some((line) => line.phase === 'calling_model' && line.modelCalls === 1 && line.remaining === 4),
    outcome.stderr,
  );
  assert.ok(
    progress.some((line) => line.phase === 'calling_model' && line.modelCalls === 2 && line.remaining === 3),
    outcome.stderr,
  );
  // The model got the question the Go client sent, and the run used the limit it set.
  const requests = environment.requestsOf(workflowId);
  assert.equal(requests.length, 3);
  assert.equal(requests[0]?.messages[1]?.content, 'Which company sold more cars in 2024, BYD or Tesla?');
  const description = await environment.client.workflow.getHandle(workflowId).describe();
  assert.equal(description.type, 'researchAgent');
  assert.equal(description.status.name, 'COMPLETED');
}, 120_000);

test('Go: a run the workflow refuses fails fast, and the client says why (type and field)', async () => {
  const workflowId = runId('go-invalid');
  // -max-calls is checked by the workflow, not the client: 20000 is over the most a run may make.
  const outcome = await researchClient(['-id', workflowId, '-max-calls', '20000', 'A question?'], 30_000);
  assert.equal(outcome.code, 1, outcome.stdout + outcome.stderr);
  assert.match(outcome.stderr, /the run failed: ReactAgent\.Run\.InvalidInput: .*maxModelCalls/);
  const description = await environment.client.workflow.getHandle(workflowId).describe();
  assert.equal(description.status.name, 'FAILED');
}, 60_000);
