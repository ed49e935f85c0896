import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';

/**
 * `run` and `follow` through a context compression, the step that used to crash them: the
 * compressContext activity was taken for a tool and its result read as a tool's.
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** Large observations (each call different, so stuck detection stays quiet) until the context passes 80% of a 4,000-token budget, then an answer; summary requests get a summary. */
const compressingRun = (turn: number, request: ScriptedRequest): ScriptedReply => {
  if (request.purpose === 'summary') return { content: 'SUMMARY: BYD sold 4.27M vehicles in 2024; Tesla 1.79M.' };
  const call = request.modelCall ?? turn;
  return call <= 12
    ? toolCall('big_output', { characters: 2_000 + call }, `step ${call}`)
    : answer('BYD, by about 2.48 million.');
};

async function cli(argumentsList: string[], overrides: Record<string, string | undefined> = {}) {
  const started = CliProcess.start(argumentsList, { environment: { ...environment.environment, ...overrides } });
  const { code } = await started.exited;
  return { code, stdout: started.stdout, stderr: started.stderr };
}

describe('run and follow through a context compression', () => {
  test('run shows the compression and ends with the answer; the run completes', async () => {
    await environment.startWorker();
    const id = scenarios.add(runId('cli-compress'), compressingRun);
    const outcome = await cli(['run', 'Which company sold more cars in 2024?', '--id', id, '--max-tokens', '4000']);
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.match(outcome.stderr, /context compressed: \d+ observations? stubbed/);
    assert.match(outcome.stdout, /Answer:\nBYD, by about 2\.48 million\./);
    const described = await environment.client.workflow.getHandle(id).describe();
    assert.equal(described.status.name, 'COMPLETED');

    const followed = await cli(['follow', id]);
    assert.equal(followed.code, 0, followed.stderr);
    assert.match(followed.stderr, /context compressed: \d+ observations? stubbed/);
    assert.match(followed.stdout, /Answer:\nBYD, by about 2\.48 million\./);
  }, 180_000);

  test('with a worker of its own, run does not stop it before its run has ended', async () => {
    await environment.crashAllWorkers();
    // A task queue nobody polls: run starts a worker of its own for it.
    const taskQueue = `cli-own-worker-${process.pid}-${Date.now().toString(36)}`;
    const id = scenarios.add(runId('cli-compress-own-worker'), compressingRun);
    const outcome = await cli(['run', 'Which company sold more cars in 2024?', '--id', id, '--max-tokens', '4000'], {
      REACT_AGENT_TASK_QUEUE: taskQueue,
    });
    assert.match(outcome.stderr, /Starting a worker/);
    const described = await environment.client.workflow.getHandle(id).describe();
    assert.equal(
      described.status.name,
      'COMPLETED',
      `the run is ${described.status.name} after run exited ${outcome.code}:\n${outcome.stderr}`,
    );
    assert.equal(outcome.code, 0, outcome.stderr);
  }, 180_000);

  test("REACT_AGENT_SUMMARY_MODEL: the summaries ask for that model, the run's calls for its own", async () => {
    await environment.crashAllWorkers();
    await environment.startWorker({ REACT_AGENT_SUMMARY_MODEL: 'small-summariser' });
    const models: Array<{ purpose?: string; model: unknown }> = [];
    const id = scenarios.add(runId('cli-compress-summary-model'), (turn, request) => {
      models.push({ ...(request.purpose ? { purpose: request.purpose } : {}), model: request.body.model });
      return compressingRun(turn, request);
    });
    const outcome = await cli(['run', 'Which company sold more cars in 2024?', '--id', id, '--max-tokens', '4000']);
    assert.equal(outcome.code, 0, outcome.stderr);
    const summaries = models.filter((entry) => entry.purpose === 'summary');
    const calls = models.filter((entry) => entry.purpose !== 'summary');
    assert.ok(summaries.length > 0, 'the run was compressed with a summary');
    assert.deepEqual(new Set(summaries.map((entry) => entry.model)), new Set(['small-summariser']));
    assert.ok(!calls.some((entry) => entry.model === 'small-summariser'), 'the run model answers the run');
  }, 180_000);
});
