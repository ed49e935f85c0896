import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { resolveTemporalCli } from '../../src/processes/temporal-cli';
import { FailureTypes } from '../../src/core/failure-types';
import { AgentEnvironment } from './support/agent-environment';
import { runClient, type ClientOutcome } from './support/client-process';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { waitForToolLog } from './support/tool-log';

/**
 * The `temporal` CLI as a client of the agent, with the commands samples/clients/README.md
 * shows: start `researchAgent` by type with a JSON input, query `progress`, execute the
 * `injectMessage` update, read the result; and inputs the workflow refuses.
 */
const temporalCli = resolveTemporalCli().path;
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

/** `temporal ARGS` against the environment's dev server (TEMPORAL_ADDRESS), as a user types it. */
function temporal(args: string[], timeoutMs = 60_000): Promise<ClientOutcome> {
  return runClient(temporalCli, args, {
    env: { ...process.env, TEMPORAL_ADDRESS: environment.server.address, TEMPORAL_NAMESPACE: 'default' },
    timeoutMs,
  });
}

async function succeeds(args: string[]): Promise<string> {
  const outcome = await temporal(args);
  assert.equal(
    outcome.code,
    0,
    `temporal ${args.join(' ')} exited ${outcome.code}:\n${outcome.stderr}${outcome.stdout}`,
  );
  return outcome.stdout;
}

test('temporal CLI: workflow start --type researchAgent, query progress, update injectMessage, workflow result', async () => {
  const workflowId = scenarios.add(runId('cli-run'), [
    toolCall('wait', { seconds: 4 }),
    answer('BYD sold about 2.48 million more vehicles than Tesla in 2024.'),
  ]);
  const question = 'Which company sold more cars in 2024, BYD or Tesla?';
  const started = await succeeds([
    'workflow',
    'start',
    '--type',
    'researchAgent',
    '--task-queue',
    environment.taskQueue,
    '--workflow-id',
    workflowId,
    '--input',
    JSON.stringify({ question, limits: { maxModelCalls: 5 } }),
  ]);
  assert.match(started, new RegExp(`WorkflowId\\s+${workflowId}`));

  await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
  const queried = JSON.parse(
    await succeeds(['workflow', 'query', '--workflow-id', workflowId, '--name', 'progress', '-o', 'json']),
  );
  const progress = queried.queryResult[0];
  assert.equal(progress.phase, 'running_tools');
  assert.equal(progress.modelCalls, 1);
  assert.equal(progress.remaining.modelCalls, 4);
  assert.deepEqual(progress.openToolCalls, ['wait({"seconds":4})']);

  const updated = JSON.parse(
    await succeeds([
      'workflow',
      'update',
      'execute',
      '--workflow-id',
      workflowId,
      '--name',
      'injectMessage',
      '--input',
      '{"text": "Count deliveries, not production."}',
      '-o',
      'json',
    ]),
  );
  assert.deepEqual(updated.result, { modelCall: 2 }, JSON.stringify(updated));

  const finished = JSON.parse(await succeeds(['workflow', 'result', '--workflow-id', workflowId, '-o', 'json']));
  assert.equal(finished.status, 'COMPLETED');
  const result = finished.result;
  assert.equal(result.question, question);
  assert.equal(result.prediction, 'BYD sold about 2.48 million more vehicles than Tesla in 2024.');
  assert.equal(result.termination, 'answer');
  assert.equal(result.iterations, 2);
  assert.match(
    String(environment.requestsOf(workflowId)[1]?.messages.at(-1)?.content),
    /\[Message from the user\] Count deliveries, not production\./,
  );
}, 120_000);

// Inputs the workflow refuses: the run fails at once with a non-retryable ApplicationFailure
// naming the field, instead of a workflow task that fails and retries forever.
const invalidInputs: Array<[string, string, RegExp]> = [
  ['no question', '{"limits": {"maxModelCalls": 3}}', /question/],
  ['a wrong type', '{"question": "q", "limits": {"maxModelCalls": "ten"}}', /maxModelCalls/],
  ['an unknown top-level field', '{"question": "q", "qestion2": 1}', /qestion2/],
  ['an unknown protocol', '{"question": "q", "protocol": "telepathy"}', /protocol/],
];

test.each(invalidInputs)(
  'temporal CLI: a run started with %s fails fast with ReactAgent.Run.InvalidInput naming the field',
  async (label, input, field) => {
    const workflowId = runId(`cli-invalid-${label.replace(/\W+/g, '-')}`);
    await succeeds([
      'workflow',
      'start',
      '--type',
      'researchAgent',
      '--task-queue',
      environment.taskQueue,
      '--workflow-id',
      workflowId,
      '--input',
      input,
    ]);
    const outcome = await temporal(['workflow', 'result', '--workflow-id', workflowId, '-o', 'json'], 30_000);
    const description = await environment.client.workflow.getHandle(workflowId).describe();
    assert.ok(
      !outcome.timedOut,
      `the run did not end within 30 s (status ${description.status.name}): a workflow task failing and retrying?`,
    );
    assert.equal(description.status.name, 'FAILED');
    assert.equal(outcome.code, 1, outcome.stderr);
    const failure = JSON.parse(outcome.stdout).closeEvent.workflowExecutionFailedEventAttributes.failure;
    assert.equal(failure.applicationFailureInfo.type, FailureTypes.invalidRunInput);
    assert.equal(failure.applicationFailureInfo.nonRetryable, true);
    assert.match(failure.message, field);
    assert.equal(environment.requestsOf(workflowId).length, 0, 'no model call');
  },
  60_000,
);
