import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import type { ResearchRunResult } from '../../src/core/run-result';
import { QUESTION_ATTRIBUTE_MAX_CHARACTERS } from '../../src/core/search-attributes';
import { AgentEnvironment } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { runClient, type ClientOutcome } from './support/client-process';

/*
 * Issue 22: every run sets ReactQuestion (Text), ReactModel, ReactProtocol (Keyword) and
 * ReactTokens (Int) from the workflow, so a run started by any client is found in the Web UI's
 * list by a word of its question, its model or how it ended. On a fresh dev server (which
 * registers the attributes), three questions run with two models and one more continues as new;
 * each is found through the Temporal client's list API (what the Web UI calls) and through
 * `react-agent list --query`. Visibility is eventually consistent: queries are polled until they
 * return what is expected, within a deadline.
 */

const root = resolve(__dirname, '../..');
const scenarios = new Scenarios();
let environment: AgentEnvironment;

const BYD = 'Which company sold more cars in 2024, BYD or Tesla, and by how much?';
const CAPITAL = 'What is the capital of Australia?';
const EVEREST = 'How tall is Mount Everest in metres?';
const JUPITER = 'How many moons does Jupiter have?';

interface Ran {
  id: string;
  question: string;
  model: string;
  result: ResearchRunResult;
}
const runs: Record<'byd' | 'capital' | 'everest' | 'jupiter', Ran> = {} as never;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
  const start = async (
    key: keyof typeof runs,
    question: string,
    model: string,
    replies: Parameters<Scenarios['add']>[1],
    extra: Record<string, unknown> = {},
  ) => {
    const id = scenarios.add(runId(`attributes-${key}`), replies);
    // Started the way any client (Python, Go, the temporal CLI) starts a run: no search attributes given.
    const handle = await environment.startRun({ question, model: { model }, ...extra }, id);
    runs[key] = { id, question, model, result: await handle.result() };
  };
  await Promise.all([
    // 12 model calls: the tokens are recorded at the 10th and at the end, not after each call.
    start(
      'byd',
      BYD,
      'model-alpha',
      (turn) => (turn < 12 ? toolCall('lookup', { query: `BYD step ${turn}` }) : answer('BYD, by about 2.48 million.')),
      { loop: { stuckDetection: false } },
    ),
    start('capital', CAPITAL, 'model-beta', [toolCall('lookup', { query: 'capital' })], {
      limits: { maxModelCalls: 1 },
      loop: { finalAnswerPhase: false },
    }),
    start('everest', EVEREST, 'model-alpha', [{ status: 401, errorMessage: 'Incorrect API key provided' }]),
    start(
      'jupiter',
      JUPITER,
      'model-beta',
      (turn) => (turn < 5 ? toolCall('lookup', { query: `moons ${turn}` }) : answer('95 moons.')),
      {
        protocol: 'deep-research',
        loop: { continueAsNewAfterModelCalls: 2, stuckDetection: false },
      },
    ),
  ]);
}, 300_000);

afterAll(async () => {
  await environment?.close();
});

/** The workflow ids a visibility query returns (a run continued as new is listed once per execution). */
async function listIds(query: string): Promise<string[]> {
  const ids = new Set<string>();
  for await (const execution of environment.client.workflow.list({ query })) ids.add(execution.workflowId);
  return [...ids].sort();
}

/** Polls `query` until it returns exactly `expected` (visibility lags the runs by up to a second or two). */
async function eventuallyListed(query: string, expected: string[], deadlineMs = 30_000): Promise<void> {
  const deadline = Date.now() + deadlineMs;
  const wanted = [...expected].sort();
  for (;;) {
    const last = await listIds(query);
    if (JSON.stringify(last) === JSON.stringify(wanted)) return;
    if (Date.now() > deadline)
      assert.deepEqual(last, wanted, `${query} did not return the expected runs within ${deadlineMs} ms`);
    await new Promise((resolveWait) => setTimeout(resolveWait, 250));
  }
}

/** The closed execution of a workflow id that ended the chain (not the ones that continued as new). */
async function lastExecution(id: string): Promise<WorkflowExecutionInfo> {
  for await (const execution of environment.client.workflow.list({
    query: `WorkflowId = '${id}' AND ExecutionStatus = 'Completed'`,
  }))
    return execution;
  throw new Error(`no completed execution of ${id}`);
}

function attributesOf(execution: WorkflowExecutionInfo): Record<string, unknown> {
  return Object.fromEntries(execution.typedSearchAttributes.getAll().map((pair) => [pair.key.name, pair.value]));
}

function cli(argumentsList: string[]): Promise<ClientOutcome> {
  return runClient(process.execPath, [join(root, 'bin/react-agent.js'), ...argumentsList], {
    cwd: root,
    env: { ...process.env, ...environment.environment },
    timeoutMs: 120_000,
  });
}

describe('runs found by what they ask, which model ran them and how they ended', () => {
  test('the runs ended as scripted, with the model they asked for', () => {
    assert.equal(runs.byd.result.termination, 'answer');
    assert.equal(runs.byd.result.iterations, 12);
    assert.equal(runs.capital.result.termination, 'max_calls');
    assert.equal(runs.everest.result.termination, 'error');
    assert.equal(runs.jupiter.result.termination, 'answer');
    assert.ok(
      runs.jupiter.result.details.continuedAsNew >= 2,
      `continued as new ${runs.jupiter.result.details.continuedAsNew} times`,
    );
    for (const ran of Object.values(runs)) {
      const models = new Set(environment.requestsOf(ran.id).map((request) => request.body.model));
      assert.deepEqual([...models], [ran.model], ran.id);
    }
  });

  test('each run carries its question, model, protocol and final tokens', async () => {
    for (const ran of Object.values(runs)) {
      await eventuallyListed(
        `WorkflowId = '${ran.id}' AND ExecutionStatus = 'Completed' AND ReactTermination = '${ran.result.termination}'`,
        [ran.id],
      );
      const attributes = attributesOf(await lastExecution(ran.id));
      assert.equal(attributes.ReactQuestion, ran.question, ran.id);
      assert.equal(attributes.ReactModel, ran.model, ran.id);
      assert.equal(attributes.ReactProtocol, 'deep-research', ran.id);
      assert.equal(attributes.ReactTokens, ran.result.usage.totalTokens, ran.id);
      assert.equal(attributes.ReactIterations, ran.result.iterations, ran.id);
    }
    assert.ok(runs.byd.result.usage.totalTokens > 0);
    assert.equal(runs.everest.result.usage.totalTokens, 0);
  });

  test('through the client list API (what the Web UI calls): by a word of the question, by model, by termination', async () => {
    await eventuallyListed(`ReactQuestion = 'BYD'`, [runs.byd.id]);
    // Text attributes match words, in any case; several words match a question with any of them.
    await eventuallyListed(`ReactQuestion = 'australia'`, [runs.capital.id]);
    await eventuallyListed(`ReactQuestion = 'Everest'`, [runs.everest.id]);
    await eventuallyListed(`ReactQuestion = 'Jupiter'`, [runs.jupiter.id]);
    await eventuallyListed(`ReactQuestion = 'Tesla' AND ReactQuestion = 'BYD'`, [runs.byd.id]);
    await eventuallyListed(`ReactModel = 'model-alpha'`, [runs.byd.id, runs.everest.id]);
    await eventuallyListed(`ReactModel = 'model-beta'`, [runs.capital.id, runs.jupiter.id]);
    await eventuallyListed(`ReactTermination = 'error'`, [runs.everest.id]);
    await eventuallyListed(`ReactTermination = 'max_calls'`, [runs.capital.id]);
    await eventuallyListed(`ReactTermination = 'answer' AND ReactModel = 'model-alpha'`, [runs.byd.id]);
    await eventuallyListed(
      `ReactProtocol = 'deep-research' AND ExecutionStatus = 'Completed'`,
      Object.values(runs).map((ran) => ran.id),
    );
    await eventuallyListed(`ReactTokens > ${runs.capital.result.usage.totalTokens} AND ExecutionStatus = 'Completed'`, [
      runs.byd.id,
      runs.jupiter.id,
    ]);
  });

  test('through react-agent list --query: the same queries, with the columns', async () => {
    const listed = await cli(['list', '--query', `ReactQuestion = 'BYD'`]);
    assert.equal(listed.code, 0, listed.stderr);
    const lines = listed.stdout.trim().split('\n');
    assert.deepEqual(lines[0]?.split('\t'), [
      'RUN ID',
      'STATUS',
      'TERMINATION',
      'CALLS',
      'TOKENS',
      'MODEL',
      'STARTED',
      'QUESTION',
    ]);
    assert.equal(lines.length, 2, listed.stdout);
    const [id, status, termination, calls, tokens, model, started, question] = lines[1]?.split('\t') ?? [];
    assert.deepEqual(
      { id, status, termination, calls, tokens, model, question },
      {
        id: runs.byd.id,
        status: 'COMPLETED',
        termination: 'answer',
        calls: '12',
        tokens: String(runs.byd.result.usage.totalTokens),
        model: 'model-alpha',
        question: 'Which company sold more cars in 2024, BYD or Tesla, and by…',
      },
    );
    assert.ok(!Number.isNaN(Date.parse(started ?? '')), started);

    const byModel = await cli(['list', '--query', `ReactModel = 'model-alpha'`]);
    assert.equal(byModel.code, 0, byModel.stderr);
    assert.deepEqual(
      byModel.stdout
        .trim()
        .split('\n')
        .slice(1)
        .map((line) => line.split('\t')[0])
        .sort(),
      [runs.byd.id, runs.everest.id].sort(),
    );

    const byTermination = await cli(['list', '--query', `ReactTermination = 'error'`]);
    assert.equal(byTermination.code, 0, byTermination.stderr);
    assert.match(
      byTermination.stdout,
      new RegExp(
        `^${runs.everest.id}\\tCOMPLETED\\terror\\t1\\t0\\tmodel-alpha\\t\\S+\\tHow tall is Mount Everest in metres\\?$`,
        'm',
      ),
    );

    // Most tokens first, sorted by the CLI (SQL visibility refuses ORDER BY).
    const sorted = await cli(['list', '--sort', 'tokens', '--limit', '3']);
    assert.equal(sorted.code, 0, sorted.stderr);
    const sortedLines = sorted.stdout
      .trim()
      .split('\n')
      .slice(1)
      .map((row) => row.split('\t'));
    assert.equal(sortedLines.length, 3, sorted.stdout);
    assert.equal(sortedLines[0]?.[0], runs.byd.id);
    const tokenColumn = sortedLines.map((row) => Number(row[4]));
    assert.deepEqual(
      tokenColumn,
      [...tokenColumn].sort((left, right) => right - left),
    );
    const ordered = await cli(['list', '--query', `ReactTokens > 0 ORDER BY ReactTokens DESC`]);
    assert.equal(ordered.code, 2, ordered.stderr);
    assert.match(ordered.stderr, /The query was refused: .*ORDER BY/i);

    // A query the server refuses is a usage error naming why (LIKE is not for Text attributes).
    const refused = await cli(['list', '--query', `ReactQuestion LIKE '%BYD%'`]);
    assert.equal(refused.code, 2, refused.stderr);
    assert.match(refused.stderr, /The query was refused: .*LIKE.*not supported for Text/);
  }, 240_000);

  test('a long question is cut in the attribute, never refused by the server', async () => {
    const question = `Please compare ${'the yearly electric vehicle sales of many carmakers '.repeat(20)}in 2024.`;
    const id = scenarios.add(runId('attributes-long'), [answer('Many.')]);
    const result = await (await environment.startRun({ question, model: { model: 'model-alpha' } }, id)).result();
    assert.equal(result.termination, 'answer');
    await eventuallyListed(`WorkflowId = '${id}' AND ReactQuestion = 'carmakers'`, [id]);
    const value = String(attributesOf(await lastExecution(id)).ReactQuestion);
    assert.ok(value.endsWith('…') && Array.from(value).length <= QUESTION_ATTRIBUTE_MAX_CHARACTERS + 1, value);
    assert.ok(question.startsWith(value.slice(0, -1)));
  });

  test('tokens are recorded at the 10th model call and at the end, not after every call', async () => {
    const history = await environment.client.workflow.getHandle(runs.byd.id).fetchHistory();
    const upserts = (history.events ?? []).filter((event) => event.upsertWorkflowSearchAttributesEventAttributes);
    const tokenValues = upserts
      .map((event) => event.upsertWorkflowSearchAttributesEventAttributes?.searchAttributes?.indexedFields?.ReactTokens)
      .filter((payload) => payload !== undefined && payload !== null)
      .map((payload) => Number(JSON.parse(Buffer.from(payload.data ?? new Uint8Array()).toString('utf8'))));
    // When the transcript opened (0), after call 10, when the run ended (the total).
    assert.equal(tokenValues.length, 3, JSON.stringify(tokenValues));
    assert.equal(tokenValues[0], 0);
    assert.ok((tokenValues[1] ?? 0) > 0 && (tokenValues[1] ?? 0) < runs.byd.result.usage.totalTokens);
    assert.equal(tokenValues[2], runs.byd.result.usage.totalTokens);
  });
});
