/**
 * The judge's calls book the shared model limit (`REACT_AGENT_MODEL_LIMITS`, issue 33) as the
 * model activity's do: `react-agent eval` through the real CLI, worker and dev server, the judge
 * answered by the scripted model server. Its calls start the model's limiter workflow, each call
 * one `reserveModelLimit` update, each settled (no lease left).
 */
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { temporal } from '@temporalio/proto';
import { modelLimiterStateQuery } from '../../src/core/model-limits/limiter-messages';
import { modelLimiterWorkflowId } from '../../src/core/model-limits/model-limit';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';

const EventType = temporal.api.enums.v1.EventType;
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: () => ({ content: 'Correct' }) });
  // The judge's model is the run model's by default: `scripted-model`.
  await environment.startWorker({
    REACT_AGENT_MODEL_LIMITS: JSON.stringify({ 'scripted-model': { requestsPerMinute: 600 } }),
  });
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

function line(question: string): string {
  return JSON.stringify({ question, answer: 'Paris', prediction: 'Paris', termination: 'answer' });
}

test('three judged runs: three reservations in the judge model’s limiter, every one settled', async () => {
  const directory = join(environment.directory, 'judged-under-a-limit');
  mkdirSync(directory, { recursive: true });
  writeFileSync(join(directory, 'iter1.jsonl'), `${['One?', 'Two?', 'Three?'].map(line).join('\n')}\n`);
  const judgedBefore = environment.model.requests.length;
  const evaluated = await CliProcess.complete(['eval', directory, '--judge', 'gaia'], {
    environment: environment.environment,
    timeoutMs: 240_000,
  });
  assert.equal(evaluated.code, 0, evaluated.stderr);
  assert.equal(environment.model.requests.length - judgedBefore, 3, 'one judge call per run');

  const limiter = environment.client.workflow.getHandle(modelLimiterWorkflowId('scripted-model'));
  const history = await limiter.fetchHistory();
  const reservations = (history.events ?? []).filter(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED &&
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.name === 'reserveModelLimit',
  );
  assert.equal(reservations.length, 3, 'each judge call booked its place');
  // The settle signal is sent after the call: give the limiter a moment to take the last one.
  const deadline = Date.now() + 10_000;
  const openLeases = async () => Object.keys((await limiter.query(modelLimiterStateQuery)).leases);
  let leases = await openLeases();
  while (leases.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    leases = await openLeases();
  }
  assert.deepEqual(leases, [], 'every judge call settled its reservation');
}, 300_000);
