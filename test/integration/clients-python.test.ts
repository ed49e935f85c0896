import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { FailureTypes } from '../../src/core/failure-types';
import type { ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment } from './support/agent-environment';
import { runClient, type ClientOutcome } from './support/client-process';
import { answerReply, batchId, iterLines, pairOf } from './support/batch-helpers';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { readToolLog, waitForToolLog } from './support/tool-log';

/**
 * The Python client sample (samples/clients/python/research_client.py) against the real dev
 * server, a real worker and the scripted model: it starts `researchAgent` and `researchBatch` by
 * type name with the `temporalio` package, queries `progress`, sends the `injectMessage` and
 * `finishNow` updates, cancels a run and reads results, as a Python user would.
 */
const root = resolve(__dirname, '../..');
const python = join(root, '.tools/python-client-venv/bin/python');
const sample = join(root, 'samples/clients/python/research_client.py');

const scenarios = new Scenarios();
/** Batch runs answer `Answer <index>` after one slow model call (2.5 s, so the batch is seen running). */
const batches = new Set<string>();
let environment: AgentEnvironment;

beforeAll(async () => {
  if (!existsSync(python)) {
    const reason = existsSync(`${join(root, '.tools/python-client-venv')}.unavailable`)
      ? readFileSync(`${join(root, '.tools/python-client-venv')}.unavailable`, 'utf8').trim()
      : 'scripts/setup-python-client.mjs has not run';
    throw new Error(
      `The Python client sample is not installed (${python} is missing): ${reason}. Run 'npm run setup' (it needs python3 with venv).`,
    );
  }
  environment = await AgentEnvironment.start({
    script: (request: ScriptedRequest) => {
      const pair = pairOf(request);
      if (pair && batches.has(pair.batchId))
        return answerReply(`Answer ${pair.index}`, { delayBeforeFirstChunkMs: 2_500 });
      return scenarios.script(request);
    },
  });
  await environment.startWorker();
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

/** Runs the sample with the environment's TEMPORAL_ADDRESS, task queue and transcript directory. */
function researchClient(args: string[], timeoutMs = 60_000): Promise<ClientOutcome> {
  return runClient(python, [sample, ...args], {
    cwd: root,
    env: { ...process.env, ...environment.environment },
    timeoutMs,
  });
}

/** Runs the sample and parses the JSON it prints; fails with its stderr when it did not exit 0. */
async function json(args: string[]): Promise<any> {
  const outcome = await researchClient(args);
  assert.equal(
    outcome.code,
    0,
    `research_client.py ${args.join(' ')} exited ${outcome.code}${outcome.timedOut ? ' (timed out)' : ''}:\n${outcome.stderr}${outcome.stdout}`,
  );
  return JSON.parse(outcome.stdout);
}

const lastMessage = (request: ScriptedRequest | undefined) => String(request?.messages.at(-1)?.content ?? '');

test('Python: start by type name, query progress, inject a message, finishNow, then the result', async () => {
  const workflowId = scenarios.add(runId('python-steer'), (turn, request) =>
    lastMessage(request).includes('Stop calling tools now')
      ? answer('BYD sold more cars in 2024: 4,272,145 against Tesla’s 1,789,226.')
      : toolCall('wait', { seconds: turn === 1 ? 5 : 60 }),
  );
  const started = await json([
    'start',
    'Which company sold more cars in 2024, BYD or Tesla?',
    '--id',
    workflowId,
    '--max-calls',
    '7',
  ]);
  assert.equal(started.workflowId, workflowId);
  assert.match(started.runId, /^[0-9a-f-]{36}$/);

  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  const progress = await json(['progress', workflowId]);
  assert.equal(progress.phase, 'running_tools');
  assert.equal(progress.modelCalls, 1);
  assert.equal(progress.limits.maxModelCalls, 7);
  assert.equal(progress.remaining.modelCalls, 6);
  assert.deepEqual(progress.openToolCalls, ['wait({"seconds":5})']);

  assert.deepEqual(await json(['inject', workflowId, 'Count deliveries, not production.']), { modelCall: 2 });
  // The injected text reaches the model with the next call, after the tool's observation.
  const second = await environment.model.waitForRequest(
    (request) => request.workflowId === workflowId && request.modelCall === 2,
  );
  assert.match(
    lastMessage(second),
    /Waited 5 seconds[\s\S]*\[Message from the user\] Count deliveries, not production\./,
  );

  await waitForToolLog(
    environment.toolLog,
    workflowId,
    (entries) => entries.filter((entry) => entry.event === 'start').length === 2,
  );
  assert.deepEqual(await json(['finish', workflowId, '--reason', 'the user has enough']), { modelCalls: 2 });

  const result = await json(['result', workflowId]);
  assert.equal(result.question, 'Which company sold more cars in 2024, BYD or Tesla?');
  assert.equal(result.prediction, 'BYD sold more cars in 2024: 4,272,145 against Tesla’s 1,789,226.');
  assert.equal(result.termination, 'answer');
  assert.equal(result.iterations, 3, 'two research calls and the final answer call');
  assert.equal(result.details.finishRequested, true);
  assert.match(lastMessage(environment.requestsOf(workflowId).at(-1)), /the user has enough/);
  assert.equal(
    readToolLog(environment.toolLog, workflowId).find((entry) => entry.event === 'stop' && entry.reason === 'cancelled')
      ?.tool,
    'wait',
    'finishNow stopped the 60 s tool',
  );
}, 120_000);

test('Python: `run` waits for the answer; `cancel` ends a second run cancelled, its tool stopped', async () => {
  const answered = scenarios.add(runId('python-run'), [
    toolCall('lookup', { query: 'BYD 2024 sales' }),
    answer('BYD, by about 2.48 million vehicles.'),
  ]);
  const cancelled = scenarios.add(runId('python-cancel'), [toolCall('wait', { seconds: 120 })]);

  const run = await json(['run', 'Who sold more cars in 2024?', '--id', answered]);
  assert.equal(run.workflowId, answered);
  assert.equal(run.result.prediction, 'BYD, by about 2.48 million vehicles.');
  assert.equal(run.result.termination, 'answer');
  assert.equal(run.result.toolCalls, 1);
  assert.match(lastMessage(environment.requestsOf(answered)[1]), /Facts about BYD 2024 sales/);

  await json(['start', 'A question that takes long?', '--id', cancelled]);
  await waitForToolLog(environment.toolLog, cancelled, (entries) => entries.some((entry) => entry.event === 'start'));
  const result = await json(['cancel', cancelled]);
  assert.equal(result.termination, 'cancelled');
  assert.equal(result.iterations, 1);
  assert.equal(
    readToolLog(environment.toolLog, cancelled).find((entry) => entry.event === 'stop')?.reason,
    'cancelled',
  );
}, 120_000);

test('Python: start a researchBatch over a JSONL file, query its progress, read its summary and lines', async () => {
  const id = batchId('python-batch');
  batches.add(id);
  const questionsFile = join(environment.directory, 'python-questions.jsonl');
  const questions = ['Who makes the Seal?', 'Who makes the Model Y?', 'Who makes the Dolphin?'];
  writeFileSync(
    questionsFile,
    questions.map((question, index) => JSON.stringify({ question, answer: `ref ${index}` })).join('\n') + '\n',
  );
  const output = join(environment.directory, 'python-batch-out');

  const started = await json(['batch', questionsFile, '--output', output, '--concurrency', '2', '--id', id]);
  assert.equal(started.workflowId, id);
  assert.equal(started.questions, 3);
  assert.match(started.input, /^sha256:[0-9a-f]{64}$/);

  // Two runs at a time, each model call 2.5 s: the batch is seen running.
  let progress: any;
  const deadline = Date.now() + 30_000;
  do {
    const outcome = await researchClient(['progress', id]);
    progress = outcome.code === 0 ? JSON.parse(outcome.stdout) : undefined;
  } while ((progress?.totals?.running ?? 0) === 0 && Date.now() < deadline);
  assert.equal(progress?.state, 'running', JSON.stringify(progress));
  assert.equal(progress.questions, 3);
  assert.equal(progress.totals.pairs, 3);
  assert.equal(progress.concurrency, 2);
  assert.ok(progress.totals.running >= 1 && progress.totals.running <= 2, JSON.stringify(progress.totals));

  const summary = await json(['result', id]);
  assert.equal(summary.cancelled, false);
  assert.equal(summary.lines, 3);
  assert.deepEqual(summary.perRollout[0].terminations, { answer: 3 });
  const lines = iterLines(output, 1);
  assert.deepEqual(
    lines.map((line) => [line.question, line.answer, line.prediction]),
    questions.map((question, index) => [question, `ref ${index}`, `Answer ${index}`]),
  );
}, 120_000);

// Inputs the workflow refuses: the run fails at once with a non-retryable ApplicationFailure
// naming the field, instead of a workflow task that fails and retries forever.
const invalidInputs: Array<[string, Record<string, unknown>, RegExp]> = [
  ['no question', { limits: { maxModelCalls: 3 } }, /question/],
  ['a wrong type', { question: 'q', limits: { maxModelCalls: 'ten' } }, /maxModelCalls/],
  ['an unknown top-level field', { question: 'q', qestion2: 1 }, /qestion2/],
  ['an unknown protocol', { question: 'q', protocol: 'telepathy' }, /protocol/],
];

test.each(invalidInputs)(
  'Python: a run started with %s fails fast with ReactAgent.Run.InvalidInput naming the field',
  async (label, input, field) => {
    const workflowId = runId(`python-invalid-${label.replace(/\W+/g, '-')}`);
    const outcome = await researchClient(['run', '--input', JSON.stringify(input), '--id', workflowId], 30_000);
    const description = await environment.client.workflow.getHandle(workflowId).describe();
    assert.ok(
      !outcome.timedOut,
      `the run did not end within 30 s (status ${description.status.name}): a workflow task failing and retrying?`,
    );
    assert.equal(description.status.name, 'FAILED');
    assert.equal(outcome.code, 1, outcome.stderr);
    const printed = JSON.parse(outcome.stdout);
    assert.equal(printed.status, 'failed');
    assert.equal(printed.failure.type, FailureTypes.invalidRunInput);
    assert.equal(printed.failure.nonRetryable, true);
    assert.match(printed.failure.message, field);
    assert.equal(environment.requestsOf(workflowId).length, 0, 'no model call');
  },
  60_000,
);
