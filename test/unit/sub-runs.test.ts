import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { RunState } from '../../src/core/run-state';
import { modelCallsUsedUp, remainingBudgets } from '../../src/core/run-budgets';
import { initialRunState } from '../../src/core/run-transitions';
import { delegatedTasks, delegateToolSpec, subRunQuestion } from '../../src/core/sub-runs/delegate-tool';
import { limitsFromParent, sharedLimits, subRunLimits } from '../../src/core/sub-runs/sub-run-budget';
import {
  childSubRunOptions,
  delegationRefusal,
  mayDelegate,
  subRunWorkflowId,
  treePosition,
} from '../../src/core/sub-runs/sub-run-options';
import {
  delegationObservation,
  subRunRecord,
  withSubRuns,
  type SubRunOutcome,
} from '../../src/core/sub-runs/sub-run-reports';

const START = 1_000_000;

function state(overrides: Partial<RunState> = {}, limits: Partial<RunState['limits']> = {}): RunState {
  return { ...initialRunState('deep-research', { ...DEFAULT_LIMITS, ...limits }, START), ...overrides };
}

function result(overrides: Partial<ResearchRunResult> = {}): ResearchRunResult {
  return {
    question: 'q',
    answer: '',
    prediction: 'four million',
    termination: 'answer',
    transcript: 'sha256:x',
    iterations: 3,
    toolCalls: 2,
    usage: { promptTokens: 100, completionTokens: 20, totalTokens: 120, costUsd: 0.5 },
    contextTokens: 120,
    durationMs: 5_000,
    details: { protocol: 'deep-research', compressions: [], stuckNudges: 0, continuedAsNew: 0 },
    ...overrides,
  };
}

test('a tree position: the lead at depth 0 may delegate; its sub-runs are one level down, under the same lead, and may not at the default depth', () => {
  assert.equal(treePosition(undefined, 'w'), undefined);
  assert.equal(mayDelegate(undefined), false);
  const lead = treePosition({ maxParallel: 3 }, 'lead-1');
  assert.deepEqual(lead, { depth: 0, maxDepth: 1, maxParallel: 3, lead: 'lead-1' });
  assert.ok(mayDelegate(lead));
  const child = treePosition(childSubRunOptions(lead!), 'lead-1/sub-1-1');
  assert.deepEqual(child, { depth: 1, maxDepth: 1, maxParallel: 3, lead: 'lead-1' });
  assert.equal(mayDelegate(child), false);
  assert.match(delegationRefusal(child), /sub-run at depth 1.*allows sub-runs 1 level deep/);
  assert.match(delegationRefusal(undefined), /started without sub-runs/);
  const deeper = treePosition(childSubRunOptions(treePosition({ maxParallel: 2, maxDepth: 2 }, 'l')!), 'l/sub-1-1');
  assert.ok(mayDelegate(deeper));
});

test('sub-run ids are deterministic and unique per model call, call and task', () => {
  assert.equal(subRunWorkflowId('lead', 4, 0, 0), 'lead/sub-4-1');
  assert.equal(subRunWorkflowId('lead', 4, 0, 2), 'lead/sub-4-3');
  assert.equal(subRunWorkflowId('lead', 4, 1, 0), 'lead/sub-4.2-1');
  assert.notEqual(subRunWorkflowId('lead', 4, 1, 0), subRunWorkflowId('lead', 41, 0, 0));
});

test('delegate arguments: tasks read and trimmed; every malformed shape refused naming the task and field', () => {
  const tools = ['lookup', 'wait'];
  assert.deepEqual(
    delegatedTasks(
      { tasks: [{ question: ' A? ' }, { question: 'B?', instructions: ' short ', tools: ['lookup', 'lookup'] }] },
      tools,
    ),
    { tasks: [{ question: 'A?' }, { question: 'B?', instructions: 'short', tools: ['lookup'] }] },
  );
  const problem = (args: Record<string, unknown>) => {
    const read = delegatedTasks(args, tools);
    assert.ok('problem' in read, JSON.stringify(args));
    return read.problem;
  };
  assert.match(problem({}), /"tasks" must be a non-empty list/);
  assert.match(problem({ tasks: [] }), /non-empty list/);
  assert.match(problem({ tasks: Array.from({ length: 9 }, () => ({ question: 'x' })) }), /9 tasks, more than the 8/);
  assert.match(problem({ tasks: ['just text'] }), /task 1 must be an object/);
  assert.match(problem({ tasks: [{ question: 'ok' }, { question: '  ' }] }), /task 2 has no "question"/);
  assert.match(problem({ tasks: [{ question: 'x'.repeat(4_001) }] }), /longer than 4000 characters/);
  assert.match(problem({ tasks: [{ question: 'q', instructions: 5 }] }), /"instructions" must be text/);
  assert.match(problem({ tasks: [{ question: 'q', tools: 'lookup' }] }), /"tools" must be a list/);
  assert.match(
    problem({ tasks: [{ question: 'q', tools: ['delegate'] }] }),
    /names "delegate", not among.*lookup, wait/,
  );
  assert.match(problem({ tasks: [{ question: 'q', tools: ['x'.repeat(1_000)] }] }), /names "x{39}…"/);
});

test('the delegate tool is described with the parallelism and task limit, and a sub-run’s question carries its context', () => {
  const spec = delegateToolSpec(4);
  assert.equal(spec.name, 'delegate');
  assert.match(spec.description, /up to 4 run at the same time/);
  assert.deepEqual((spec.parameters as { required: string[] }).required, ['tasks']);
  const question = subRunQuestion(
    { question: 'BYD 2024?', instructions: 'Use lookup.' },
    'Who sold more, BYD or Tesla?',
  );
  assert.match(
    question,
    /^BYD 2024\?\n\nInstructions: Use lookup\.\n\n\(This is one part of a larger research question: "Who sold more/,
  );
});

test('sub-run limits are carved from what the parent has left and never exceed it', () => {
  const now = START + 10 * 60_000; // 10 of 150 minutes gone
  const parent = state(
    { modelCalls: 10, usage: { promptTokens: 0, completionTokens: 0, totalTokens: 10_000 } },
    {
      maxModelCalls: 40,
      maxTotalTokens: 100_000,
    },
  );
  const carved = subRunLimits(parent, 3, 3, now, true);
  assert.ok('limits' in carved);
  // (40 - 10 - 2) / 3 = 9 each, less the final answer call.
  assert.equal(carved.limits.maxModelCalls, 8);
  assert.equal(carved.limits.maxTotalTokens, Math.floor((90_000 * 0.9) / 3));
  assert.ok(Math.abs(carved.limits.maxDurationMinutes - 140 * 0.9) < 0.001);
  assert.equal(carved.limits.maxContextTokens, parent.limits.maxContextTokens);
  assert.equal(carved.limits.maxCostUsd, undefined);
  // The sub-runs' calls with their final answers fit in what the parent had, less what it keeps.
  assert.ok(3 * (carved.limits.maxModelCalls + 1) <= 40 - 10 - 2);

  // Five tasks two at a time run in three waves: each gets a third of the time.
  const waves = subRunLimits(parent, 5, 2, now, false);
  assert.ok('limits' in waves);
  assert.ok(Math.abs(waves.limits.maxDurationMinutes - (140 * 0.9) / 3) < 0.001);
  assert.equal(waves.limits.maxModelCalls, 5);

  const priced = state(
    { usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0, costUsd: 1 }, lastCallCostUsd: 0.2 },
    {
      maxCostUsd: 3,
    },
  );
  const costs = subRunLimits(priced, 2, 2, START, true);
  assert.ok('limits' in costs);
  assert.ok(Math.abs((costs.limits.maxCostUsd ?? 0) - (1.8 * 0.9) / 2) < 1e-9);

  const refused = (carve: ReturnType<typeof subRunLimits>) => ('problem' in carve ? carve.problem : '');
  assert.match(
    refused(subRunLimits(state({ modelCalls: 1 }, { maxModelCalls: 6 }), 3, 3, START, true)),
    /too few model calls \(3 to share\)/,
  );
  assert.match(refused(subRunLimits(state({}, { maxDurationMinutes: 0.1 }), 1, 1, START, true)), /too little time/);
  assert.match(
    refused(
      subRunLimits(
        state({ usage: { promptTokens: 0, completionTokens: 0, totalTokens: 100 } }, { maxTotalTokens: 100 }),
        1,
        1,
        START,
        true,
      ),
    ),
    /too few tokens/,
  );
  assert.match(
    refused(subRunLimits(state({ usage: { ...priced.usage, costUsd: 3 } }, { maxCostUsd: 3 }), 1, 1, START, true)),
    /cost budget/,
  );
});

test('sub-runs’ records add their calls, tokens and cost to the parent’s budgets; a failure is a record, not a throw', () => {
  const outcomes: SubRunOutcome[] = [
    { workflowId: 'l/sub-1-1', question: 'A?', result: result({ subRuns: { modelCalls: 4, runs: [] } }) },
    { workflowId: 'l/sub-1-2', question: 'B?', failure: 'Workflow execution already started' },
  ];
  const records = outcomes.map(subRunRecord);
  assert.deepEqual(records[0], {
    workflowId: 'l/sub-1-1',
    question: 'A?',
    termination: 'answer',
    modelCalls: 7,
    usage: result().usage,
    durationMs: 5_000,
  });
  assert.equal(records[1]?.termination, 'error');
  assert.equal(records[1]?.error, 'Workflow execution already started');

  const parent = state(
    { modelCalls: 2, usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0.1 } },
    {
      maxModelCalls: 9,
    },
  );
  const after = withSubRuns(parent, records);
  assert.equal(after.usage.totalTokens, 135);
  assert.ok(Math.abs((after.usage.costUsd ?? 0) - 0.6) < 1e-9);
  assert.deepEqual(after.subRuns?.modelCalls, 7);
  assert.equal(remainingBudgets(after, START).modelCalls, 0);
  assert.ok(modelCallsUsedUp(after), 'the sub-runs’ calls count in the parent’s model call budget');
  assert.equal(withSubRuns(after, records).subRuns?.runs.length, 4);
});

test('the observation reports each task in order, with its run id and how it ended; long answers are cut with a pointer to the whole one', () => {
  const long = 'x'.repeat(10_000);
  const text = delegationObservation(
    [
      { workflowId: 'l/sub-1-1', question: 'A?', result: result() },
      { workflowId: 'l/sub-1-2', question: 'B?', result: result({ termination: 'max_calls', prediction: long }) },
      { workflowId: 'l/sub-1-3', question: 'C?', failure: 'not started: cancelled' },
    ],
    6_000,
  );
  assert.match(text, /^Reports of 3 sub-runs:/);
  assert.match(text, /\[1\] A\?\nrun l\/sub-1-1: answered \(3 model calls, 120 tokens\):\nfour million/);
  assert.match(text, /\[2\] B\?\nrun l\/sub-1-2: ran out of model calls; its best answer/);
  assert.match(text, /cut at 1700 of 10000 characters; the whole answer: react-agent result l\/sub-1-2/);
  assert.match(text, /\[3\] C\?\nrun l\/sub-1-3: failed: not started: cancelled/);
  assert.ok(text.length < 6_000 + 1_000);
});

test('limits a parent shares again: only calls, and tokens and cost when budgeted; a sub-run takes only sane numbers, never below what it made', () => {
  assert.deepEqual(sharedLimits({ ...DEFAULT_LIMITS, maxModelCalls: 7 }), { maxModelCalls: 7 });
  assert.deepEqual(sharedLimits({ ...DEFAULT_LIMITS, maxModelCalls: 7, maxTotalTokens: 900, maxCostUsd: 0.5 }), {
    maxModelCalls: 7,
    maxTotalTokens: 900,
    maxCostUsd: 0.5,
  });
  const child = state({ modelCalls: 5 });
  assert.deepEqual(limitsFromParent(child, { maxModelCalls: 3, maxTotalTokens: 0.4, maxCostUsd: 0.25 }), {
    maxModelCalls: 5,
    maxTotalTokens: 1,
    maxCostUsd: 0.25,
  });
  assert.deepEqual(limitsFromParent(child, { maxModelCalls: 12.7 }), { maxModelCalls: 12 });
  for (const sent of [
    undefined,
    {},
    { maxModelCalls: -1 },
    { maxModelCalls: 1e9 },
    { maxCostUsd: Number.NaN },
    { maxModelCalls: '9' as never },
  ])
    assert.deepEqual(limitsFromParent(child, sent), {}, JSON.stringify(sent));
});
