import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { finishNowUpdate, progressQuery, setLimitsUpdate } from '../../src/core/message-definitions';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { ScriptedReply } from '../fakes/scripted-model-server';
import { answer, toolCall } from '../integration/support/scenarios';
import { readFileSync } from 'node:fs';
import type { ModelRequest } from './support/workflow-environment';
import { WorkflowEnvironment } from './support/workflow-environment';

/**
 * Sub-runs (issue 30) on the real workflows, in process: a lead run's `delegate` call starts
 * child `researchAgent` runs in parallel, with limits carved from the lead's, and reads their
 * reports; the tree shares one budget and one fate.
 */
let environment: WorkflowEnvironment;

beforeAll(async () => {
  // A price for the scripted model: a million tokens cost $1,000, so a call of ~500 tokens costs ~$0.50.
  environment = await WorkflowEnvironment.start({
    modelPrices: { 'scripted-model': { input: 1_000, output: 1_000 } },
  });
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

const isSubRun = (request: ModelRequest) => (request.workflowId ?? '').includes('/sub-');
const lastMessage = (request: ModelRequest) => request.messages.at(-1)?.content ?? '';
const systemPrompt = (request: ModelRequest) => request.messages[0]?.content ?? '';
/** The task a sub-run's request is about: the first line of its question. */
const taskOf = (request: ModelRequest) => (request.messages[1]?.content ?? '').split('\n')[0] ?? '';

interface LoggedToolCall {
  tool: string;
  event: 'start' | 'stop';
  workflowId: string;
  at: number;
}

function toolLog(): LoggedToolCall[] {
  try {
    return readFileSync(environment.toolLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line) as LoggedToolCall);
  } catch {
    return [];
  }
}

const THREE_TASKS = {
  tasks: [
    { question: 'How many vehicles did BYD sell in 2024?' },
    { question: 'How many vehicles did Tesla deliver in 2024?', instructions: 'Report deliveries, not production.' },
    { question: 'How many vehicles did Volkswagen sell in 2024?', tools: ['lookup'] },
  ],
};

/** A sub-run that uses a tool (`wait` 2 s, or `lookup` when that is all it has), then answers with its task. */
function subRunReply(turn: number, request: ModelRequest): ScriptedReply {
  if (turn === 1)
    return systemPrompt(request).includes('Wait for a number of seconds')
      ? toolCall('wait', { seconds: 2 })
      : toolCall('lookup', { query: taskOf(request) });
  return answer(`Report on "${taskOf(request)}": about four million.`);
}

test('a lead run delegates 3 tasks that run in parallel; its answer uses all three reports; the tree is one budget and one search', async () => {
  const { workflowId, result, requests } = await environment.run(
    'lead',
    (turn, request) => {
      if (isSubRun(request)) return subRunReply(turn, request);
      if (turn === 1) return toolCall('delegate', THREE_TASKS);
      const reports = lastMessage(request);
      const used = ['BYD', 'Tesla', 'Volkswagen'].filter((name) =>
        reports.includes(`Report on "How many vehicles did ${name}`),
      );
      return answer(`From ${used.length} reports: ${used.join(', ')}.`);
    },
    { subruns: { maxParallel: 3 }, limits: { maxModelCalls: 20 } },
  );
  assert.equal(result.termination, 'answer');
  assert.equal(result.prediction, 'From 3 reports: BYD, Tesla, Volkswagen.');

  // Each sub-run once, under the lead's id, with its own record; the lead's result adds them up.
  const ids = [1, 2, 3].map((task) => `${workflowId}/sub-1-${task}`);
  assert.deepEqual(
    result.subRuns?.runs.map((run) => [run.workflowId, run.termination, run.modelCalls]),
    ids.map((id) => [id, 'answer', 2]),
  );
  assert.equal(result.subRuns?.modelCalls, 6);
  const children = await Promise.all(
    ids.map((id) => environment.client.workflow.getHandle(id).result() as Promise<ResearchRunResult>),
  );
  const childTokens = children.reduce((sum, child) => sum + child.usage.totalTokens, 0);
  const childCost = children.reduce((sum, child) => sum + (child.usage.costUsd ?? 0), 0);
  assert.ok(childCost > 0);
  assert.deepEqual(
    result.subRuns?.runs.map((run) => run.usage.totalTokens),
    children.map((child) => child.usage.totalTokens),
  );
  const leadRequests = requests.length;
  assert.equal(leadRequests, 2, 'the lead made two model calls of its own');
  assert.equal(result.iterations, 2);
  // The lead's usage is its own two calls plus every sub-run's.
  assert.ok(result.usage.totalTokens > childTokens, `${result.usage.totalTokens} > ${childTokens}`);
  assert.ok((result.usage.costUsd ?? 0) > childCost);

  // In parallel: the three sub-runs' `wait` calls (2 s each) all started before any of them stopped.
  const waits = toolLog().filter((entry) => entry.workflowId.startsWith(`${workflowId}/sub-`) && entry.tool === 'wait');
  assert.equal(waits.filter((entry) => entry.event === 'start').length, 2, 'the tasks given every tool waited');
  const lastStart = Math.max(...waits.filter((entry) => entry.event === 'start').map((entry) => entry.at));
  const firstStop = Math.min(...waits.filter((entry) => entry.event === 'stop').map((entry) => entry.at));
  assert.ok(lastStart < firstStop, 'both waits ran at the same time');

  // Sub-runs get the lead's tools unless narrowed, never `delegate` (depth limit 1), and their limits carved from the lead's.
  const subRequests = environment.requests.filter((request) => request.workflowId?.startsWith(`${workflowId}/sub-`));
  const firstOf = (id: string) => subRequests.find((request) => request.workflowId === id) as ModelRequest;
  assert.match(systemPrompt(firstOf(ids[0] as string)), /Wait for a number of seconds/);
  assert.doesNotMatch(systemPrompt(firstOf(ids[2] as string)), /Wait for a number of seconds/);
  for (const id of ids) assert.doesNotMatch(systemPrompt(firstOf(id)), /Hand independent sub-questions/);
  assert.match(systemPrompt(requests[0] as ModelRequest), /Hand independent sub-questions/);
  assert.match(taskOf(firstOf(ids[1] as string)), /Tesla/);
  assert.match(firstOf(ids[1] as string).messages[1]?.content ?? '', /Instructions: Report deliveries/);
  const described = await environment.client.workflow.getHandle(ids[0] as string).describe();
  assert.equal(described.parentExecution?.workflowId, workflowId);

  // `ReactTreeId` finds the whole tree.
  const deadline = Date.now() + 15_000;
  let tree: string[] = [];
  while (Date.now() < deadline) {
    tree = [];
    for await (const run of environment.client.workflow.list({ query: `ReactTreeId = '${workflowId}'` }))
      tree.push(run.workflowId);
    if (tree.length === 4) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  assert.deepEqual(tree.sort(), [workflowId, ...ids].sort());
}, 90_000);

test('the depth limit refuses a sub-run’s own delegate call with a clear observation', async () => {
  const { workflowId, result } = await environment.run(
    'depth',
    (turn, request) => {
      if (isSubRun(request)) {
        if (turn === 1) return toolCall('delegate', { tasks: [{ question: 'A grandchild question?' }] });
        return answer(`Told: ${lastMessage(request).includes('is refused') ? 'refused' : 'not refused'}.`);
      }
      if (turn === 1) return toolCall('delegate', { tasks: [{ question: 'One part?' }] });
      return answer('done');
    },
    { subruns: { maxParallel: 2 }, limits: { maxModelCalls: 10 } },
  );
  assert.equal(result.termination, 'answer');
  const child = (await environment.client.workflow.getHandle(`${workflowId}/sub-1-1`).result()) as ResearchRunResult;
  assert.equal(child.prediction, 'Told: refused.');
  assert.equal(child.subRuns, undefined, 'no grandchild was started');
  const refusal = environment.requests.find(
    (request) => request.workflowId === `${workflowId}/sub-1-1` && lastMessage(request).includes('is refused'),
  );
  assert.match(
    lastMessage(refusal as ModelRequest),
    /this research is itself a sub-run at depth 1, and the research it belongs to allows sub-runs 1 level deep/,
  );
}, 60_000);

test('too little budget left: delegate is refused, naming what is missing, and no sub-run starts', async () => {
  const { result, requests } = await environment.run(
    'budget-refusal',
    (turn) => (turn === 1 ? toolCall('delegate', THREE_TASKS) : answer('alone')),
    { subruns: { maxParallel: 3 }, limits: { maxModelCalls: 6 } },
  );
  assert.equal(result.termination, 'answer');
  assert.equal(result.subRuns, undefined);
  assert.match(lastMessage(requests[1] as ModelRequest), /delegate was not run: too few model calls \(3 to share\)/);
}, 60_000);

test('the tree’s cost budget holds: sub-runs get shares of what is left and end at theirs; the lead ends within its own', async () => {
  const looping = (turn: number): ScriptedReply =>
    turn % 2 ? toolCall('lookup', { query: `q${turn}` }) : toolCall('lookup', { query: `r${turn}` });
  const maxCostUsd = 4;
  const { result } = await environment.run(
    'cost',
    (turn, request) => {
      if (isSubRun(request)) return turn > 30 ? answer('gave up') : looping(turn);
      if (turn === 1) return toolCall('delegate', { tasks: [{ question: 'Part one?' }, { question: 'Part two?' }] });
      return answer('Both parts are in.');
    },
    { subruns: { maxParallel: 2 }, limits: { maxModelCalls: 100, maxCostUsd } },
  );
  assert.deepEqual(
    result.subRuns?.runs.map((run) => run.termination),
    ['cost_limit', 'cost_limit'],
  );
  const leadOwnCost =
    (result.usage.costUsd ?? 0) - (result.subRuns?.runs ?? []).reduce((sum, run) => sum + (run.usage.costUsd ?? 0), 0);
  assert.ok(leadOwnCost > 0);
  // Each sub-run's share was under half of what the lead had left; together they never passed the lead's budget.
  for (const run of result.subRuns?.runs ?? [])
    assert.ok((run.usage.costUsd ?? 0) < maxCostUsd / 2, JSON.stringify(run.usage));
  // As for any run, only the final answer call may pass the budget (by what it costs beyond the room kept for it).
  assert.equal(result.termination, 'cost_limit');
  assert.ok((result.usage.costUsd ?? 0) < maxCostUsd * 1.25, `tree cost ${result.usage.costUsd}`);
}, 90_000);

test('finishNow on the lead mid-fan-out: its sub-runs finish with what they have, and the lead answers from their reports', async () => {
  const { workflowId, handle } = await environment.start(
    'finish-tree',
    (turn, request) => {
      if (isSubRun(request))
        return turn === 1 ? toolCall('wait', { seconds: 60 }) : answer(`partial on ${taskOf(request)}`);
      if (turn === 1)
        return toolCall('delegate', { tasks: [{ question: 'Slow part one?' }, { question: 'Slow part two?' }] });
      return answer(`final from: ${lastMessage(request).includes('partial on Slow part two?') ? 'both' : 'not both'}`);
    },
    { subruns: { maxParallel: 2 } },
  );
  const waiting = async () => {
    for (;;) {
      const started = toolLog().filter(
        (entry) =>
          entry.workflowId.startsWith(`${workflowId}/sub-`) && entry.tool === 'wait' && entry.event === 'start',
      );
      if (started.length === 2) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  };
  await waiting();
  await handle.executeUpdate(finishNowUpdate, { args: [{ reason: 'enough for today' }] });
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.details.finishRequested, true);
  assert.equal(result.prediction, 'final from: both');
  const children = await Promise.all(
    [1, 2].map(
      (task) =>
        environment.client.workflow.getHandle(`${workflowId}/sub-1-${task}`).result() as Promise<ResearchRunResult>,
    ),
  );
  for (const child of children) {
    assert.equal(child.details.finishRequested, true);
    assert.match(child.prediction, /^partial on Slow part/);
  }
  assert.ok(result.durationMs < 40_000, `finished in ${result.durationMs} ms, not after the 60 s waits`);
}, 90_000);

test('cancelling the lead mid-fan-out cancels every sub-run; each answers its open tool call and every workflow of the tree closes', async () => {
  const { workflowId, handle } = await environment.start(
    'cancel-tree',
    (turn, request) => {
      if (isSubRun(request)) return turn === 1 ? toolCall('wait', { seconds: 60 }) : answer('never');
      return turn === 1
        ? toolCall('delegate', { tasks: [{ question: 'Part A?' }, { question: 'Part B?' }] })
        : answer('never');
    },
    { subruns: { maxParallel: 2 } },
  );
  for (;;) {
    const started = toolLog().filter(
      (entry) => entry.workflowId.startsWith(`${workflowId}/sub-`) && entry.tool === 'wait' && entry.event === 'start',
    );
    if (started.length === 2) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  await handle.cancel();
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'cancelled');
  const ids = [1, 2].map((task) => `${workflowId}/sub-1-${task}`);
  for (const id of ids) {
    const child = (await environment.client.workflow.getHandle(id).result()) as ResearchRunResult;
    assert.equal(child.termination, 'cancelled');
    const messages = await environment.transcript(child);
    // The child's wait call got an answer in its transcript.
    assert.ok(
      messages.some((message) => message.role === 'user' && /cancel/i.test(message.content)),
      id,
    );
    assert.equal((await environment.client.workflow.getHandle(id).describe()).status.name, 'COMPLETED');
  }
  // The lead's delegate call is answered with the sub-runs' reports: both cancelled.
  const leadMessages = await environment.transcript(result);
  const reports = leadMessages.find((message) => message.content.includes('Reports of 2 sub-runs'));
  assert.equal(reports?.content.match(/was cancelled; its answer so far/g)?.length, 2, reports?.content);
}, 90_000);

test('setLimits on the lead reaches its running sub-runs: their shares are carved again from the new budget', async () => {
  const { workflowId, handle } = await environment.start(
    'limits-tree',
    (turn, request) => {
      if (isSubRun(request)) return toolCall('wait', { seconds: 0.3 + turn / 100 }, `step ${turn}`);
      if (turn === 1)
        return toolCall('delegate', { tasks: [{ question: 'Long part one?' }, { question: 'Long part two?' }] });
      return answer('done with what they found');
    },
    { subruns: { maxParallel: 2 }, limits: { maxModelCalls: 100 } },
  );
  for (;;) {
    const started = new Set(
      toolLog()
        .filter((entry) => entry.workflowId.startsWith(`${workflowId}/sub-`) && entry.event === 'start')
        .map((entry) => entry.workflowId),
    );
    if (started.size === 2) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // 100 calls gave each sub-run 47; 14 leave (14 - 1 - 2) / 2 - 1 = 4.
  await handle.executeUpdate(setLimitsUpdate, { args: [{ maxModelCalls: 14 }] });
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.prediction, 'done with what they found');
  for (const run of result.subRuns?.runs ?? []) {
    assert.equal(run.termination, 'max_calls', run.workflowId);
    // Its new budget of 4 and its final answer call (a call already in flight at the change may add one).
    assert.ok(run.modelCalls <= 6, `${run.workflowId} made ${run.modelCalls} calls`);
  }
  assert.equal(result.subRuns?.runs.length, 2);
}, 90_000);

test('two delegate calls in one reply run one after the other, the second carving from what the first left', async () => {
  const delegation = (id: string, parts: string[]) => ({
    id,
    name: 'delegate',
    arguments: JSON.stringify({ tasks: parts.map((part) => ({ question: `${part}?` })) }),
  });
  const { workflowId, result } = await environment.run(
    'two-delegations',
    (turn, request) => {
      if (isSubRun(request))
        return turn === 1
          ? {
              content: '',
              toolCalls: [{ id: 'l1', name: 'lookup', arguments: JSON.stringify({ query: taskOf(request) }) }],
            }
          : { content: 'found' };
      if (turn === 1) return { content: '', toolCalls: [delegation('d1', ['A', 'B']), delegation('d2', ['C', 'D'])] };
      return { content: 'all four parts are in' };
    },
    { protocol: 'native', subruns: { maxParallel: 4 }, limits: { maxModelCalls: 14 } },
  );
  assert.equal(result.termination, 'answer');
  const ids = [`${workflowId}/sub-1-1`, `${workflowId}/sub-1-2`, `${workflowId}/sub-1.2-1`, `${workflowId}/sub-1.2-2`];
  assert.deepEqual(
    result.subRuns?.runs.map((run) => run.workflowId),
    ids,
  );
  assert.equal(result.subRuns?.modelCalls, 8);
  const times = await Promise.all(ids.map((id) => environment.client.workflow.getHandle(id).describe()));
  const firstEnded = Math.max(...times.slice(0, 2).map((described) => described.closeTime?.getTime() ?? Infinity));
  const secondStarted = Math.min(...times.slice(2).map((described) => described.startTime.getTime()));
  assert.ok(firstEnded <= secondStarted, 'the second call’s sub-runs started after the first call’s ended');
  // 14 calls: the first call's two got (14 - 1 - 2) / 2 - 1 = 4 each and used 2; the second's carve saw that: (14 - 1 - 4 - 2) / 2 - 1 = 2.
  const limitsOf = async (id: string) =>
    (await environment.client.workflow.getHandle(id).query(progressQuery)).limits.maxModelCalls;
  assert.deepEqual(await Promise.all(ids.map(limitsOf)), [4, 4, 2, 2]);
}, 90_000);
