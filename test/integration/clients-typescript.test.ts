import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { countAssistantMessages, type ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import { runClient } from './support/client-process';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { waitForToolLog } from './support/tool-log';

/**
 * The TypeScript client sample (samples/clients/typescript/research.ts) against the real dev
 * server, a real worker and the scripted model. It imports `durable-react-agent/client` as a
 * user's service would (the package's own export, compiled by `npm ci`), starts a run, queries
 * its progress, injects a message, asks it to finish, and reads the result; a bad request is
 * refused by the library before anything reaches Temporal.
 */
const root = resolve(__dirname, '../..');
const sample = join(root, 'samples/clients/typescript/research.ts');
const scenarios = new Scenarios();
/** A run whose id the library chooses is scripted by its question. */
const SEAL_QUESTION = 'Who makes the Seal electric sedan?';
let environment: AgentEnvironment;

beforeAll(async () => {
  if (!existsSync(join(root, 'dist/src/client/index.js')))
    throw new Error(
      'dist/src/client/index.js is missing: `npm run build` (npm ci runs it) compiles the client library.',
    );
  environment = await AgentEnvironment.start({
    script: (request: ScriptedRequest) => {
      if (!request.messages.some((message) => message.role === 'user' && message.content === SEAL_QUESTION))
        return scenarios.script(request);
      return countAssistantMessages(request.messages) === 0
        ? toolCall('lookup', { query: 'Seal maker' })
        : answer('BYD makes the Seal.');
    },
  });
  await environment.startWorker();
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

async function sampleJson(args: string[], expectedCode = 0): Promise<any> {
  const outcome = await runClient(process.execPath, ['--import', 'tsx', sample, ...args], {
    cwd: root,
    env: { ...process.env, ...environment.environment },
  });
  assert.equal(
    outcome.code,
    expectedCode,
    `research.ts ${args.join(' ')} exited ${outcome.code}${outcome.timedOut ? ' (timed out)' : ''}:\n${outcome.stderr}${outcome.stdout}`,
  );
  return JSON.parse(outcome.stdout);
}

const lastMessage = (request: ScriptedRequest | undefined) => String(request?.messages.at(-1)?.content ?? '');

test('TypeScript: startResearch, progress, injectMessage, finishNow and the result through durable-react-agent/client', async () => {
  const workflowId = scenarios.add(runId('typescript-steer'), (turn, request) =>
    lastMessage(request).includes('Stop calling tools now')
      ? answer('BYD sold more cars in 2024.')
      : toolCall('wait', { seconds: turn === 1 ? 5 : 60 }),
  );
  assert.deepEqual(
    await sampleJson([
      'start',
      'Which company sold more cars in 2024, BYD or Tesla?',
      '--id',
      workflowId,
      '--max-calls',
      '6',
    ]),
    { workflowId },
  );

  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  const progress = await sampleJson(['progress', workflowId]);
  assert.equal(progress.phase, 'running_tools');
  assert.equal(progress.modelCalls, 1);
  assert.equal(progress.limits.maxModelCalls, 6);

  assert.deepEqual(await sampleJson(['inject', workflowId, 'Count deliveries, not production.']), { modelCall: 2 });
  const second = await environment.model.waitForRequest(
    (request) => request.workflowId === workflowId && request.modelCall === 2,
  );
  assert.match(lastMessage(second), /\[Message from the user\] Count deliveries, not production\./);

  await waitForToolLog(
    environment.toolLog,
    workflowId,
    (entries) => entries.filter((entry) => entry.event === 'start').length === 2,
  );
  assert.deepEqual(await sampleJson(['finish', workflowId, 'enough']), { modelCalls: 2 });
  const result = await sampleJson(['result', workflowId]);
  assert.equal(result.prediction, 'BYD sold more cars in 2024.');
  assert.equal(result.termination, 'answer');
  assert.equal(result.details.finishRequested, true);
}, 120_000);

test('TypeScript: the default id carries the question; `run` waits for the answer', async () => {
  const run = await sampleJson(['run', SEAL_QUESTION]);
  assert.match(run.workflowId, /^research-who-makes-the-seal-electric-sedan-\d{8}-\d{6}-[0-9a-z]{4}$/);
  assert.equal(run.result.prediction, 'BYD makes the Seal.');
  assert.equal(run.result.toolCalls, 1);
}, 120_000);

test('TypeScript: a request the contract refuses is not started; each problem names its field', async () => {
  const before = (await environment.client.workflow.count()).count;
  const refused = await sampleJson(
    ['start', '--input', JSON.stringify({ question: 'q', limits: { maxModelCalls: 'ten' }, colour: 'red' })],
    1,
  );
  assert.deepEqual(refused, {
    refused: [
      'limits.maxModelCalls must be an integer, got "ten"',
      'colour is not a known field (known: question, answer, limits, model, tools, protocol, loop, answerSchema, subruns)',
    ],
  });
  assert.equal((await environment.client.workflow.count()).count, before, 'no workflow was started');
}, 60_000);
