import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { BatchSummary } from '../../src/core/batch-contract';
import { protocolProblems } from '../integration/support/agent-environment';
import { iterFileProblems, questions } from '../integration/support/batch-helpers';
import { Scenarios, answer, runId, toolCall } from '../integration/support/scenarios';
import { CliProcess } from '../integration/support/cli-process';
import { activityRetriesByCause, formatRetries } from './support/activity-retries';
import { ClusterEnvironment } from './support/cluster-environment';
import { formatFaultTable, type FaultRecord } from './support/fault-table';

/*
 * The production stack (react-agent stack, docs/production.md) under faults: Temporal's four
 * services as separate processes on PostgreSQL, SeaweedFS for transcripts and batch outputs, and
 * worker processes by role. A run and a batch complete; then, while runs and a batch are in
 * flight, history is SIGKILLed, matching is SIGKILLed, the frontend is restarted, PostgreSQL stops
 * with `-m immediate`, and a worker is SIGKILLed. Every run must still answer exactly once, every
 * batch question land exactly once, and a table says what happened.
 */

const scenarios = new Scenarios();
let cluster: ClusterEnvironment;
const setupLog: string[] = [];
const log = (line: string) => setupLog.push(`${new Date().toISOString().slice(11, 19)} ${line}`);

beforeAll(async () => {
  const started = Date.now();
  cluster = await ClusterEnvironment.start(scenarios.script, { workflows: 2, model: 1, tools: 1 }, log);
  log(`stack up in ${((Date.now() - started) / 1000).toFixed(1)} s`);
}, 300_000);

afterAll(async () => {
  await cluster?.close();
}, 120_000);

/** Set when the last fault is restored: the chaos runs call tools until then, so every fault finds them in flight. */
let chaosOver = false;

/**
 * A run that alternates `lookup` and `wait` (every call different, so stuck detection stays out
 * of it) for at least `toolTurns` turns — and, with `untilChaosOver`, until the faults are over —
 * then answers `text`.
 */
function longRun(label: string, toolTurns: number, text: string, options: { modelDelayMs?: number; untilChaosOver?: boolean } = {}): string {
  return scenarios.add(runId(label), (turn) => {
    const extra = options.modelDelayMs ? { delayBeforeFirstChunkMs: options.modelDelayMs } : {};
    const more = turn <= toolTurns || (options.untilChaosOver === true && !chaosOver);
    if (!more) return { ...answer(text), ...extra };
    return { ...(turn % 2 === 0 ? toolCall('wait', { seconds: 1 + turn / 100 }) : toolCall('lookup', { query: `${label} ${turn}` })), ...extra };
  });
}

async function checkRun(result: ResearchRunResult, expected: string): Promise<void> {
  assert.equal(result.termination, 'answer', JSON.stringify(result).slice(0, 500));
  assert.equal(result.prediction, expected);
  const messages = await cluster.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  const answers = messages.filter((message) => message.role === 'assistant' && message.content.includes('<answer>'));
  assert.equal(answers.length, 1, 'one answer in the transcript');
}

test('the stack runs: PostgreSQL, four Temporal services as separate processes, SeaweedFS, the Web UI and workers answer', async () => {
  const rows = await cluster.stack.status();
  const context = `${JSON.stringify(rows, null, 1)}\n${setupLog.join('\n')}`;
  for (const row of rows) assert.ok(row.health === 'ready' || row.health === 'running', `${row.name}: ${row.health}\n${context}`);
  const pids = ['temporal-history', 'temporal-matching', 'temporal-frontend', 'temporal-worker'].map((name) => rows.find((row) => row.name === name)?.pid);
  assert.equal(new Set(pids).size, 4, `four processes: ${pids.join(', ')}`);
  assert.deepEqual(
    rows.filter((row) => row.name.startsWith('worker-')).map((row) => row.name),
    ['worker-workflows-1', 'worker-workflows-2', 'worker-model-1', 'worker-tools-1'],
  );
  console.log(`cluster: stack up\n${setupLog.join('\n')}`);
}, 60_000);

test('a research run answers through the stack, its transcript in S3', async () => {
  const id = longRun('cluster-run', 2, 'BYD sold more.');
  const handle = await cluster.startRun({ question: 'Who sold more cars in 2024, BYD or Tesla?', tools: ['lookup', 'wait'] }, id);
  const { result } = await cluster.resultOf<ResearchRunResult>(handle, 120_000);
  await checkRun(result, 'BYD sold more.');
}, 180_000);

test('a batch of 4 questions writes each once to iter1.jsonl in S3', async () => {
  const id = runId('cluster-batch');
  for (let index = 0; index < 4; index += 1) scenarios.add(`${id}/q${index}-r1`, [toolCall('lookup', { query: `q${index}` }), answer(`answer ${index}`)]);
  const { handle, prefix } = await cluster.startBatch(id, questions(4), { concurrency: 4, run: { tools: ['lookup'] } });
  const { result } = await cluster.resultOf<BatchSummary>(handle, 180_000);
  assert.equal(result.lines, 4, JSON.stringify(result));
  const lines = await cluster.iterLines(prefix, 1);
  assert.deepEqual(iterFileProblems(lines, 4, 1), []);
  assert.deepEqual(
    lines.map((line) => line.prediction),
    ['answer 0', 'answer 1', 'answer 2', 'answer 3'],
  );
}, 240_000);

test('chaos across the stack while `react-agent follow` watches: history and matching SIGKILLed, the frontend restarted, PostgreSQL stopped -m immediate, S3 down 30 s, a worker SIGKILLed — every run answers exactly once', async () => {
  const stack = cluster.stack;
  const chaosStart = Date.now();
  const faults: FaultRecord[] = [];
  const seconds = () => (Date.now() - chaosStart) / 1000;

  // In flight through every fault: 6 runs that call tools until the faults are over, and a batch
  // whose first 3 questions do the same.
  const runs = Array.from({ length: 6 }, (_, index) => ({
    id: longRun(`chaos-run-${index}`, 4, `answer of run ${index}`, { modelDelayMs: 1_000, untilChaosOver: true }),
    text: `answer of run ${index}`,
  }));
  const limits = { maxModelCalls: 400 };
  const handles = await Promise.all(runs.map((run, index) => cluster.startRun({ question: `Chaos question ${index}?`, tools: ['lookup', 'wait'], limits }, run.id)));
  const batchId = runId('chaos-batch');
  for (let index = 0; index < 6; index += 1) {
    scenarios.add(`${batchId}/q${index}-r1`, (turn) =>
      turn <= 4 || !chaosOver
        ? { ...(turn % 2 ? toolCall('lookup', { query: `b${index} ${turn}` }) : toolCall('wait', { seconds: 1 + turn / 100 })), delayBeforeFirstChunkMs: 1_000 }
        : answer(`batch answer ${index}`),
    );
  }
  const batch = await cluster.startBatch(batchId, questions(6, 'Chaos batch question'), { concurrency: 3, run: { tools: ['lookup', 'wait'], limits } });
  const results = handles.map((handle) => cluster.resultOf<ResearchRunResult>(handle, 900_000));
  const batchResult = cluster.resultOf<BatchSummary>(batch.handle, 900_000);
  // Nothing may reject unobserved while the faults run.
  for (const pending of [...results, batchResult]) pending.catch(() => undefined);

  // A user following run 0 with the CLI through every fault, the frontend restart included.
  const follow = CliProcess.start(['follow', runs[0]?.id ?? ''], { environment: cluster.stack.clientEnvironment(), timeoutMs: 900_000 });

  const closed = new Set<string>();
  results.forEach(
    (pending, index) =>
      void pending.then(
        () => closed.add(runs[index]?.id ?? ''),
        () => undefined,
      ),
  );
  const modelCalls = () => cluster.model.requests.length;
  const inject = async (fault: string, action: () => Promise<void>, downMs: number, restore: () => Promise<void>, recovered: () => Promise<number>) => {
    await delay(6_000);
    const before = modelCalls();
    const inFlight = runs.length - closed.size;
    const at = seconds();
    await action();
    await delay(downMs);
    const restoreStarted = Date.now();
    const callsAtRestore = modelCalls();
    // Work resumed: the first model call the scripted server receives after the restore began (watched meanwhile).
    const resumedWatch = (async () => {
      while (Date.now() - restoreStarted < 180_000) {
        if (modelCalls() > callsAtRestore) return (Date.now() - restoreStarted) / 1000;
        await delay(100);
      }
      return Number.NaN;
    })();
    await restore();
    const recovery = (Date.now() - restoreStarted + (await recovered())) / 1000;
    const resumed = await resumedWatch;
    faults.push({ fault, at, downSeconds: downMs / 1000, recoverySeconds: recovery, resumedSeconds: resumed, modelCallsBefore: before, runsInFlight: inFlight });
  };

  await inject(
    'SIGKILL history',
    () => stack.kill('temporal-history'),
    5_000,
    () => stack.startTemporalService('history'),
    () => cluster.timeUntilServing(),
  );
  await inject(
    'SIGKILL matching',
    () => stack.kill('temporal-matching'),
    3_000,
    () => stack.startTemporalService('matching'),
    () => cluster.timeUntilServing(),
  );
  await inject(
    'restart frontend (SIGTERM, start)',
    () => stack.stop('temporal-frontend'),
    1_000,
    () => stack.startTemporalService('frontend'),
    () => cluster.timeUntilServing(),
  );
  await inject(
    'PostgreSQL stop -m immediate',
    async () => stack.stopPostgres('immediate'),
    5_000,
    async () => stack.startPostgres(),
    () => cluster.timeUntilServing(),
  );
  // The store: `up` starts what is not running, here SeaweedFS on its folder (objects kept), and waits until S3 answers.
  await inject(
    'SIGKILL SeaweedFS (S3)',
    () => stack.kill('seaweedfs'),
    30_000,
    () => stack.up(),
    async () => 0,
  );
  const worker = stack.workers.find((candidate) => candidate.name === 'worker-workflows-1');
  assert.ok(worker);
  await inject(
    'SIGKILL worker-workflows-1',
    () => stack.kill(worker.name),
    2_000,
    () => stack.startWorker(worker),
    async () => 0,
  );
  const faultsDone = seconds();
  chaosOver = true;

  const settled = await Promise.allSettled(results);
  const batchSettled = (await Promise.allSettled([batchResult]))[0];
  const table = formatFaultTable(faults, {
    runs: settled.map((outcome, index) => ({
      id: runs[index]?.id ?? '',
      ok: outcome.status === 'fulfilled',
      closedAt: outcome.status === 'fulfilled' ? (outcome.value.closedAt - chaosStart) / 1000 : undefined,
    })),
    faultsDone,
    modelCalls: modelCalls(),
  });
  const retries = await activityRetriesByCause(cluster.client, [...runs.map((run) => run.id), ...Array.from({ length: 6 }, (_, index) => `${batchId}/q${index}-r1`)]).catch(
    (error: unknown) => new Map([[`(could not read the histories: ${(error as Error).message})`, 0]]),
  );
  console.log(`cluster: chaos\n${table}\n${formatRetries(retries)}`);

  const followed = await follow.exited;
  assert.equal(followed.code, 0, `react-agent follow ${runs[0]?.id} through the faults: exit ${followed.code} ${followed.signal ?? ''}\n${follow.stderr.slice(-2_000)}\n${table}`);
  assert.match(follow.stdout, /answer of run 0/, follow.stdout.slice(-1_000));
  for (const [index, outcome] of settled.entries()) {
    assert.equal(outcome.status, 'fulfilled', `${runs[index]?.id}: ${outcome.status === 'rejected' ? String(outcome.reason) : ''}\n${table}`);
    if (outcome.status === 'fulfilled') await checkRun(outcome.value.result, runs[index]?.text ?? '');
  }
  // Exactly once: one execution per run id, and it completed.
  for (const run of runs) {
    const executions = [];
    for await (const execution of cluster.client.workflow.list({ query: `WorkflowId = '${run.id}'` })) executions.push(execution.status.name);
    assert.deepEqual(executions, ['COMPLETED'], `${run.id}\n${table}`);
  }
  assert.equal(batchSettled?.status, 'fulfilled', `batch: ${batchSettled?.status === 'rejected' ? String(batchSettled.reason) : ''}\n${table}`);
  if (batchSettled?.status === 'fulfilled') assert.equal(batchSettled.value.result.lines, 6, JSON.stringify(batchSettled.value.result));
  const lines = await cluster.iterLines(batch.prefix, 1);
  assert.deepEqual(iterFileProblems(lines, 6, 1), [], table);
  assert.deepEqual(
    lines.map((line) => line.prediction),
    [0, 1, 2, 3, 4, 5].map((index) => `batch answer ${index}`),
  );
  assert.equal(faults.length, 6);
  // Work went on between faults: more model calls were answered before each fault than before the previous one.
  for (let index = 1; index < faults.length; index += 1)
    assert.ok((faults[index]?.modelCallsBefore ?? 0) > (faults[index - 1]?.modelCallsBefore ?? 0), `no progress before "${faults[index]?.fault}"\n${table}`);
  // Every fault found all six runs in flight.
  assert.deepEqual(
    faults.map((fault) => fault.runsInFlight),
    [6, 6, 6, 6, 6, 6],
    table,
  );
  // And after each, work resumed.
  for (const fault of faults) assert.ok(Number.isFinite(fault.resumedSeconds), `no model call within 180 s of restoring after "${fault.fault}"\n${table}`);
  // After the faults the stack is whole again.
  const rows = await stack.status();
  for (const row of rows) assert.ok(row.health === 'ready' || row.health === 'running', `${row.name}: ${row.health}`);
}, 1_200_000);
