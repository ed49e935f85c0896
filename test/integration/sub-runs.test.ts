import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { readToolLog, waitForToolLog } from './support/tool-log';

/**
 * Sub-runs (issue 30) with real processes: a worker SIGKILLed while a lead's sub-runs are in
 * flight loses nothing and duplicates nothing, and a lead cancelled through the client closes its
 * whole tree with every tool call answered. (The loop's logic of sub-runs — carving, depth,
 * finishNow, the tree's cost — is in test/workflow/sub-runs.test.ts.)
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
});

afterAll(async () => {
  await environment?.close();
});

const TASKS = ['BYD', 'Tesla', 'Volkswagen'].map((maker) => ({
  question: `How many vehicles did ${maker} sell in 2024?`,
}));
const isSubRun = (request: ScriptedRequest) => (request.workflowId ?? '').includes('/sub-');
const taskOf = (request: ScriptedRequest) => String(request.messages[1]?.content ?? '').split('\n')[0] ?? '';
const lastMessage = (request: ScriptedRequest) => String(request.messages.at(-1)?.content ?? '');

/** A lead that delegates the three tasks and answers with the makers whose reports it read; sub-runs wait `seconds`, then report. */
function lead(seconds: number) {
  return (turn: number, request: ScriptedRequest): ScriptedReply => {
    if (isSubRun(request))
      return turn === 1 ? toolCall('wait', { seconds }) : answer(`Report on "${taskOf(request)}": about four million.`);
    if (turn === 1) return toolCall('delegate', { tasks: TASKS });
    const reports = lastMessage(request);
    return answer(
      `Reports read: ${['BYD', 'Tesla', 'Volkswagen'].filter((maker) => reports.includes(`did ${maker} sell`)).join(', ')}.`,
    );
  };
}

const subRunIds = (workflowId: string) => [1, 2, 3].map((task) => `${workflowId}/sub-1-${task}`);

async function allWaiting(workflowId: string): Promise<void> {
  await Promise.all(
    subRunIds(workflowId).map((id) =>
      waitForToolLog(environment.toolLog, id, (entries) => entries.some((entry) => entry.event === 'start'), 60_000),
    ),
  );
}

async function treeOf(workflowId: string): Promise<string[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const ids: string[] = [];
    for await (const run of environment.client.workflow.list({ query: `ReactTreeId = '${workflowId}'` }))
      ids.push(run.workflowId);
    if (ids.length >= 4 || Date.now() > deadline) return ids.sort();
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

test('a worker SIGKILLed mid-fan-out: a new worker finishes the tree; each sub-run ran once and the lead got every report once', async () => {
  const first = await environment.startWorker();
  const workflowId = scenarios.add(runId('team-kill'), lead(4));
  const handle = await environment.startRun(
    { question: 'Who sold the most vehicles in 2024?', subruns: { maxParallel: 3 }, limits: { maxModelCalls: 20 } },
    workflowId,
  );
  await allWaiting(workflowId);
  await first.crash();
  await environment.startWorker();

  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'Reports read: BYD, Tesla, Volkswagen.');
  const ids = subRunIds(workflowId);
  assert.deepEqual(
    result.subRuns?.runs.map((run) => [run.workflowId, run.termination]),
    ids.map((id) => [id, 'answer']),
  );
  // Each sub-run is one workflow execution, started once, and sent each of its model calls once.
  assert.deepEqual(await treeOf(workflowId), [workflowId, ...ids].sort());
  for (const id of ids) {
    const history = await environment.client.workflow.getHandle(id).fetchHistory();
    const starts = history.events?.filter((event) => event.workflowExecutionStartedEventAttributes) ?? [];
    assert.equal(starts.length, 1, `${id} started once`);
    const completed = environment.requestsOf(id).filter((request) => request.completed);
    assert.deepEqual(
      completed.map((request) => request.modelCall),
      [1, 2],
      `${id}: each model call completed once`,
    );
    const child = (await environment.client.workflow.getHandle(id).result()) as ResearchRunResult;
    assert.deepEqual(protocolProblems(await environment.transcript(child)), []);
    assert.equal(
      readToolLog(environment.toolLog, id).filter((entry) => entry.event === 'stop' && entry.reason === 'done').length,
      1,
      `${id}: its wait completed once`,
    );
  }
  // The lead: two model calls, each completed once; the reports reached it in one observation.
  assert.deepEqual(
    environment
      .requestsOf(workflowId)
      .filter((request) => request.completed)
      .map((request) => request.modelCall),
    [1, 2],
  );
  const messages = await environment.transcript(result);
  assert.equal(messages.filter((message) => message.content.includes('Reports of 3 sub-runs')).length, 1);
  assert.deepEqual(protocolProblems(messages), []);
}, 300_000);

test('the lead cancelled through the client mid-fan-out: every workflow of the tree closes and every tool call is answered', async () => {
  await environment.crashAllWorkers();
  await environment.startWorker();
  const workflowId = scenarios.add(runId('team-cancel'), lead(120));
  const handle = await environment.startRun(
    { question: 'Who sold the most vehicles in 2024?', subruns: { maxParallel: 3 } },
    workflowId,
  );
  await allWaiting(workflowId);
  await handle.cancel();

  const result = await handle.result();
  assert.equal(result.termination, 'cancelled');
  assert.deepEqual(protocolProblems(await environment.transcript(result)), []);
  for (const id of subRunIds(workflowId)) {
    const child = environment.client.workflow.getHandle(id);
    const childResult = (await child.result()) as ResearchRunResult;
    assert.equal(childResult.termination, 'cancelled', id);
    assert.equal((await child.describe()).status.name, 'COMPLETED', `${id} closed`);
    assert.deepEqual(
      protocolProblems(await environment.transcript(childResult)),
      [],
      `${id}: every tool call answered`,
    );
    const waits = readToolLog(environment.toolLog, id);
    assert.ok(
      waits.some((entry) => entry.event === 'stop' && entry.reason === 'cancelled'),
      `${id}: its tool was cancelled`,
    );
  }
  assert.ok(result.durationMs < 60_000, `the tree closed in ${result.durationMs} ms, not after the 120 s waits`);
}, 300_000);
