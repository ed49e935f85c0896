import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { BatchSummary } from '../../src/core/batch-contract';
import type { EvaluationReport } from '../../src/core/evaluation/evaluation-report';
import type { EvaluationOutcome } from '../../src/core/evaluation/evaluation-contract';
import { STACK_TOPOLOGY } from '../../src/config/stack-topology';
import { materialiseResult } from '../../src/cli/materialise-result';
import type { Script, ScriptedReply, ScriptedRequest } from '../fakes/scripted-model-server';
import { protocolProblems } from '../integration/support/agent-environment';
import { iterFileProblems, questions } from '../integration/support/batch-helpers';
import { Scenarios, answer, runId, toolCall } from '../integration/support/scenarios';
import { CliProcess } from '../integration/support/cli-process';
import { activityRetriesByCause, formatRetries } from './support/activity-retries';
import { cutMachine, machineSupportProblem, restoreMachine } from '../../src/processes/production-stack/worker-machine';
import { ClusterEnvironment } from './support/cluster-environment';
import { differences, evaluationFigures } from './support/evaluation-figures';
import { chaosSeed, planFaults, type PlannedFault } from './support/fault-plan';
import { formatFaultTable, type FaultRecord } from './support/fault-table';
import { formatInvariantTable, type InvariantCheck } from './support/invariant-table';
import { toolCallAnswers } from './support/tool-call-answers';
import { workLeftRunning } from './support/work-left-running';

/*
 * The production stack (react-agent stack, docs/production.md) under faults: Temporal's four
 * services as separate processes on PostgreSQL, SeaweedFS for transcripts and batch outputs, and
 * worker processes by role on three worker machines (network namespaces, `stack up --machines 3`:
 * every machine runs two roles, every role runs on two machines). A run completes, and a batch with 2 rollouts that evaluates itself
 * (gaia judge, scripted). Then the same batch again while runs are in flight and faults come at
 * random moments (a seeded schedule; CHAOS_SEED replays one): history and matching SIGKILLed twice
 * each, the frontend restarted, PostgreSQL stopped with `-m immediate`, SeaweedFS down 30 s, a
 * worker SIGKILLed, a machine's link cut for 90 s. At the end a table of invariants: every run ended with its termination once,
 * every tool call answered, each (question, rollout) once in its iter file, the evaluation equal
 * to the fault-free one, every result read back whole, nothing left running.
 */

const scenarios = new Scenarios();

/** The gaia judge, scripted: `Correct` when the prediction is the reference answer. */
function gaiaJudge(request: ScriptedRequest): ScriptedReply {
  const prompt = String(request.messages[0]?.content ?? '');
  const reference = /Reference answer: (.*)/.exec(prompt)?.[1];
  const prediction = /Predicted answer: (.*)/.exec(prompt)?.[1];
  if (reference === undefined || prediction === undefined)
    return { status: 400, errorMessage: 'unexpected judge prompt' };
  return { content: reference.trim() === prediction.trim() ? 'Correct' : 'Incorrect' };
}

/** Runs' requests carry their workflow id; the judge's do not. */
const script: Script = (request) => (request.workflowId ? scenarios.script(request) : gaiaJudge(request));
let cluster: ClusterEnvironment;
const setupLog: string[] = [];
const log = (line: string) => setupLog.push(`${new Date().toISOString().slice(11, 19)} ${line}`);

beforeAll(async () => {
  const started = Date.now();
  const reason = machineSupportProblem();
  if (reason)
    throw new Error(
      `The chaos test puts its workers on worker machines (network namespaces): ${reason}. Run the cluster tier as root on Linux with iproute2.`,
    );
  // Dealt in turn over 3 machines: machine 1 runs workflows-1 and model-2, machine 2 workflows-2
  // and tools-1, machine 3 model-1 and tools-2; whichever is cut, every role still runs elsewhere.
  cluster = await ClusterEnvironment.start(script, { workflows: 2, model: 2, tools: 2 }, log, { machines: 3 });
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
function longRun(
  label: string,
  toolTurns: number,
  text: string,
  options: { modelDelayMs?: number; untilChaosOver?: boolean } = {},
): string {
  return scenarios.add(runId(label), (turn) => {
    const extra = options.modelDelayMs ? { delayBeforeFirstChunkMs: options.modelDelayMs } : {};
    const more = turn <= toolTurns || (options.untilChaosOver === true && !chaosOver);
    if (!more) return { ...answer(text), ...extra };
    return {
      ...(turn % 2 === 0
        ? toolCall('wait', { seconds: 1 + turn / 100 })
        : toolCall('lookup', { query: `${label} ${turn}` })),
      ...extra,
    };
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
  for (const row of rows)
    assert.ok(row.health === 'ready' || row.health === 'running', `${row.name}: ${row.health}\n${context}`);
  const pids = ['temporal-history', 'temporal-matching', 'temporal-frontend', 'temporal-worker'].map(
    (name) => rows.find((row) => row.name === name)?.pid,
  );
  assert.equal(new Set(pids).size, 4, `four processes: ${pids.join(', ')}`);
  assert.deepEqual(
    rows.filter((row) => row.name.startsWith('worker-')).map((row) => row.name),
    [
      'worker-workflows-1',
      'worker-workflows-2',
      'worker-model-1',
      'worker-model-2',
      'worker-tools-1',
      'worker-tools-2',
    ],
  );
  const rolesByMachine = cluster.stack.machines.map((machine) =>
    cluster.stack.workers.filter((worker) => worker.machine === machine.name).map((worker) => worker.role),
  );
  assert.equal(rolesByMachine.length, 3, 'three worker machines');
  for (const role of ['workflows', 'model', 'tools'] as const) {
    assert.equal(
      rolesByMachine.filter((roles) => roles.includes(role)).length,
      2,
      `${role} runs on two machines: ${JSON.stringify(rolesByMachine)}`,
    );
  }
  console.log(`cluster: stack up\n${setupLog.join('\n')}`);
}, 60_000);

test('a research run answers through the stack, its transcript in S3', async () => {
  const id = longRun('cluster-run', 2, 'BYD sold more.');
  const handle = await cluster.startRun(
    { question: 'Who sold more cars in 2024, BYD or Tesla?', tools: ['lookup', 'wait'] },
    id,
  );
  const { result } = await cluster.resultOf<ResearchRunResult>(handle, 120_000);
  await checkRun(result, 'BYD sold more.');
}, 180_000);

/** The batch of the last two tests, first without faults, then under them: the same questions, the same runs. */
const BATCH = { questions: 4, rollouts: 2 } as const;
const batchItems = questions(BATCH.questions, 'Cluster batch question');

/** What run (question `index`, `rollout`) answers: the reference (`ref-<index>`) for the first 4 − rollout questions, a wrong answer for the rest. */
function batchAnswer(index: number, rollout: number): string {
  return index < BATCH.questions - rollout ? `ref-${index}` : `not ref-${index}`;
}

/**
 * Scripts every run of batch `batchId`: 3 + index tool turns (`lookup` and `wait`, each call
 * different), then {@link batchAnswer}. `modelDelayMs` slows the replies without changing them.
 */
function addBatchScenarios(batchId: string, modelDelayMs = 0): void {
  for (let index = 0; index < BATCH.questions; index += 1) {
    for (let rollout = 1; rollout <= BATCH.rollouts; rollout += 1) {
      scenarios.add(`${batchId}/q${index}-r${rollout}`, (turn) => {
        const extra = modelDelayMs ? { delayBeforeFirstChunkMs: modelDelayMs } : {};
        if (turn > 3 + index) return { ...answer(batchAnswer(index, rollout)), ...extra };
        return {
          ...(turn % 2
            ? toolCall('lookup', { query: `b${index} r${rollout} ${turn}` })
            : toolCall('wait', { seconds: 1 + turn / 100 })),
          ...extra,
        };
      });
    }
  }
}

/** Every (question, rollout) of the batch, in the order of its run ordinals. */
const batchPairs = Array.from({ length: BATCH.questions * BATCH.rollouts }, (_, ordinal) => ({
  index: ordinal % BATCH.questions,
  rollout: Math.floor(ordinal / BATCH.questions) + 1,
}));
const batchRunIds = (batchId: string) => batchPairs.map(({ index, rollout }) => `${batchId}/q${index}-r${rollout}`);

/** The evaluation of the fault-free batch, which the chaos test's must equal. */
let referenceEvaluation: EvaluationReport | undefined;
/** Where the stack keeps judge verdicts (`<transcript store>/verdicts`). */
const VERDICTS = `${STACK_TOPOLOGY.s3.transcriptPrefix}/verdicts/`;

/** Starts a batch of {@link batchItems} × 2 rollouts that evaluates itself at its end with the gaia judge. */
function startEvaluatedBatch(batchId: string, concurrency: number) {
  return cluster.startBatch(batchId, batchItems, {
    concurrency,
    rollouts: BATCH.rollouts,
    run: { tools: ['lookup', 'wait'] },
    evaluate: { judge: 'gaia' },
  });
}

test('a batch of 4 questions × 2 rollouts evaluates itself (gaia judge): each (question, rollout) once in its iter file in S3, the report there', async () => {
  const id = runId('cluster-batch');
  addBatchScenarios(id);
  const judgeCallsBefore = judgeCalls();
  const { handle, prefix } = await startEvaluatedBatch(id, 4);
  const { result } = await cluster.resultOf<BatchSummary>(handle, 300_000);
  assert.equal(result.lines, 8, JSON.stringify(result));
  for (let rollout = 1; rollout <= BATCH.rollouts; rollout += 1) {
    const lines = await cluster.iterLines(prefix, rollout);
    assert.deepEqual(iterFileProblems(lines, BATCH.questions, rollout), []);
    assert.deepEqual(
      lines.map((line) => line.prediction),
      [0, 1, 2, 3].map((index) => batchAnswer(index, rollout)),
    );
  }
  assert.equal(result.evaluation?.failed, undefined, JSON.stringify(result.evaluation));
  assert.equal(result.evaluation?.reportPath, `s3://${STACK_TOPOLOGY.s3.bucket}/${prefix}/evaluation/report.json`);
  const report = JSON.parse(await cluster.objects.text(`${prefix}/evaluation/report.json`)) as EvaluationReport;
  assert.equal(report.method, 'judge');
  assert.deepEqual(
    report.metrics.perRollout.map((rollout) => rollout.passAt1),
    [0.75, 0.5],
  );
  assert.equal(report.metrics.passAtAllRollouts, 0.75);
  // A verdict is kept per (question, reference, prediction): runs that answered a question alike share one.
  const distinct = new Set(batchPairs.map(({ index, rollout }) => `${index} ${batchAnswer(index, rollout)}`)).size;
  assert.equal((report.judgeCalls?.made ?? 0) + (report.judgeCalls?.stored ?? 0), 8, JSON.stringify(report.judgeCalls));
  assert.equal(
    judgeCalls() - judgeCallsBefore,
    report.judgeCalls?.made,
    'the scripted judge answered each call the report counts',
  );
  referenceEvaluation = report;
  // The chaos test's batch has the same questions and predictions: without these verdicts its
  // evaluation has to ask the judge again, under the faults.
  assert.equal(
    await cluster.objects.deleteUnder(VERDICTS),
    distinct,
    'one stored verdict per distinct (question, prediction)',
  );
}, 360_000);

test('chaos at random moments across the stack while an evaluated batch with rollouts runs and `react-agent follow` watches: history and matching SIGKILLed twice each, the frontend restarted, PostgreSQL stopped -m immediate, S3 down 30 s, a worker SIGKILLed, a worker machine cut off 90 s — a table of invariants at the end', async () => {
  assert.ok(referenceEvaluation, 'the fault-free batch (the test before) gave its evaluation');
  const stack = cluster.stack;
  const seed = chaosSeed();
  const plan = planFaults(
    seed,
    stack.workers.map((worker) => worker.name),
    stack.machines.map((machine) => machine.name),
  );
  console.log(
    `cluster: chaos seed ${seed} (CHAOS_SEED=${seed} replays this schedule)\n${plan.map((fault) => `  after ${fault.gapMs} ms: ${fault.worker ?? fault.machine ?? fault.kind}, down ${fault.downMs} ms`).join('\n')}`,
  );
  const chaosStart = Date.now();
  const faults: FaultRecord[] = [];
  const faultWindows: Array<{ from: number; to: number }> = [];
  const seconds = () => (Date.now() - chaosStart) / 1000;

  // In flight through every fault: 4 runs that call tools until the faults are over; the batch's
  // runs are the fault-free batch's, replies slowed, two at a time, then its evaluation.
  const runs = Array.from({ length: 4 }, (_, index) => ({
    id: longRun(`chaos-run-${index}`, 4, `answer of run ${index}`, { modelDelayMs: 1_000, untilChaosOver: true }),
    text: `answer of run ${index}`,
  }));
  const limits = { maxModelCalls: 400 };
  const handles = await Promise.all(
    runs.map((run, index) =>
      cluster.startRun({ question: `Chaos question ${index}?`, tools: ['lookup', 'wait'], limits }, run.id),
    ),
  );
  const batchId = runId('chaos-batch');
  addBatchScenarios(batchId, 2_000);
  const batch = await startEvaluatedBatch(batchId, 2);
  const results = handles.map((handle) => cluster.resultOf<ResearchRunResult>(handle, 1_200_000));
  const batchResult = cluster.resultOf<BatchSummary>(batch.handle, 1_200_000);
  // Nothing may reject unobserved while the faults run.
  for (const pending of [...results, batchResult]) pending.catch(() => undefined);

  // A user following run 0 with the CLI through every fault, the frontend restart included.
  const follow = CliProcess.start(['follow', runs[0]?.id ?? ''], {
    environment: cluster.stack.clientEnvironment(),
    timeoutMs: 1_200_000,
  });

  const closed = new Set<string>();
  results.forEach(
    (pending, index) =>
      void pending.then(
        () => closed.add(runs[index]?.id ?? ''),
        () => undefined,
      ),
  );
  const modelCalls = () => cluster.model.requests.length;
  const faultOf = (
    planned: PlannedFault,
  ): { name: string; action: () => Promise<void>; restore: () => Promise<void>; recovered: () => Promise<number> } => {
    const serving = () => cluster.timeUntilServing();
    switch (planned.kind) {
      case 'history':
      case 'matching':
        return {
          name: `SIGKILL ${planned.kind}`,
          action: () => stack.kill(`temporal-${planned.kind}`),
          restore: () => stack.startTemporalService(planned.kind as 'history' | 'matching'),
          recovered: serving,
        };
      case 'frontend':
        return {
          name: 'restart frontend (SIGTERM, start)',
          action: () => stack.stop('temporal-frontend'),
          restore: () => stack.startTemporalService('frontend'),
          recovered: serving,
        };
      case 'postgresql':
        return {
          name: 'PostgreSQL stop -m immediate',
          action: async () => stack.stopPostgres('immediate'),
          restore: async () => stack.startPostgres(),
          recovered: serving,
        };
      case 'seaweedfs':
        // `up` starts what is not running, here SeaweedFS on its folder (objects kept), and waits until S3 answers.
        return {
          name: 'SIGKILL SeaweedFS (S3)',
          action: () => stack.kill('seaweedfs'),
          restore: () => stack.up(),
          recovered: async () => 0,
        };
      case 'worker': {
        const worker = stack.workers.find((candidate) => candidate.name === planned.worker);
        assert.ok(worker, `no worker ${planned.worker}`);
        return {
          name: `SIGKILL ${worker.name}`,
          action: () => stack.kill(worker.name),
          restore: () => stack.startWorker(worker),
          recovered: async () => 0,
        };
      }
      case 'network': {
        // `stack cut`: the machine's link goes down; its running activities time out and run on the other machines.
        const machine = stack.machine(planned.machine ?? '');
        return {
          name: `cut ${machine.name}'s link`,
          action: async () => cutMachine(machine),
          restore: async () => restoreMachine(machine),
          recovered: async () => 0,
        };
      }
    }
  };
  const inject = async (planned: PlannedFault) => {
    const { name, action, restore, recovered } = faultOf(planned);
    await delay(planned.gapMs);
    const before = modelCalls();
    const inFlight = runs.length - closed.size;
    const at = seconds();
    const from = Date.now();
    await action();
    await delay(planned.downMs);
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
    faultWindows.push({ from, to: Date.now() });
    const resumed = await resumedWatch;
    faults.push({
      fault: name,
      at,
      downSeconds: planned.downMs / 1000,
      recoverySeconds: recovery,
      resumedSeconds: resumed,
      modelCallsBefore: before,
      runsInFlight: inFlight,
    });
  };
  for (const planned of plan) await inject(planned);
  const faultsDone = seconds();
  chaosOver = true;

  const settled = await Promise.allSettled(results);
  const batchSettled = (await Promise.allSettled([batchResult]))[0];
  // What of the batch each fault hit: its runs and its evaluation, from their start and close times.
  const spans = await Promise.all(
    [...batchRunIds(batchId), `${batchId}/evaluation`].map(async (workflowId) => {
      const description = await cluster.client.workflow
        .getHandle(workflowId)
        .describe()
        .catch(() => undefined);
      return {
        workflowId,
        from: description?.startTime.getTime() ?? Number.NaN,
        to: description?.closeTime?.getTime() ?? Date.now(),
      };
    }),
  );
  faults.forEach((fault, index) => {
    const window = faultWindows[index];
    const hit = spans.filter((span) => window && span.from <= window.to && span.to >= window.from);
    const runsHit = hit.filter((span) => !span.workflowId.endsWith('/evaluation')).length;
    fault.batch =
      [
        runsHit ? `${runsHit} run${runsHit > 1 ? 's' : ''}` : '',
        hit.some((span) => span.workflowId.endsWith('/evaluation')) ? 'evaluation' : '',
      ]
        .filter(Boolean)
        .join(' + ') || '-';
  });
  const table = formatFaultTable(faults, {
    runs: settled.map((outcome, index) => ({
      id: runs[index]?.id ?? '',
      ok: outcome.status === 'fulfilled',
      closedAt: outcome.status === 'fulfilled' ? (outcome.value.closedAt - chaosStart) / 1000 : undefined,
    })),
    faultsDone,
    modelCalls: modelCalls(),
  });
  const retries = await activityRetriesByCause(cluster.client, [
    ...runs.map((run) => run.id),
    ...batchRunIds(batchId),
    batchId,
    `${batchId}/evaluation`,
  ]).catch((error: unknown) => new Map([[`(could not read the histories: ${(error as Error).message})`, 0]]));
  const invariants = await chaosInvariants({ runs, batchId, prefix: batch.prefix, batchSettled });
  console.log(
    `cluster: chaos (seed ${seed})\n${table}\n\n${formatInvariantTable(invariants)}\n\n${formatRetries(retries)}`,
  );
  const context = `seed ${seed}\n${table}\n${formatInvariantTable(invariants)}`;

  for (const check of invariants) assert.deepEqual(check.problems, [], `${check.invariant}\n${context}`);
  const followed = await follow.exited;
  assert.equal(
    followed.code,
    0,
    `react-agent follow ${runs[0]?.id} through the faults: exit ${followed.code} ${followed.signal ?? ''}\n${follow.stderr.slice(-2_000)}\n${context}`,
  );
  assert.match(follow.stdout, /answer of run 0/, follow.stdout.slice(-1_000));
  assert.equal(faults.length, plan.length);
  // Work went on between faults: more model calls were answered before each fault than before the previous one.
  for (let index = 1; index < faults.length; index += 1)
    assert.ok(
      (faults[index]?.modelCallsBefore ?? 0) > (faults[index - 1]?.modelCallsBefore ?? 0),
      `no progress before "${faults[index]?.fault}"\n${context}`,
    );
  // Every fault found all the runs in flight.
  assert.deepEqual(
    faults.map((fault) => fault.runsInFlight),
    faults.map(() => runs.length),
    context,
  );
  // And after each, work resumed.
  for (const fault of faults)
    assert.ok(
      Number.isFinite(fault.resumedSeconds),
      `no model call within 180 s of restoring after "${fault.fault}"\n${context}`,
    );
  // After the faults the stack is whole again.
  const rows = await stack.status();
  for (const row of rows) assert.ok(row.health === 'ready' || row.health === 'running', `${row.name}: ${row.health}`);
}, 1_500_000);

/** Model requests without a workflow id: the evaluation's judge. */
function judgeCalls(): number {
  return cluster.model.requests.filter((request) => !request.workflowId).length;
}

/**
 * The invariants the chaos test checks at its end, each with what was counted and what broke it:
 * every run ended with its termination (once), every tool call answered by its tool, each
 * (question, rollout) once in its iter file, the evaluation equal to the fault-free batch's, every
 * result read back whole from Temporal and S3, nothing left running.
 */
async function chaosInvariants(chaos: {
  runs: Array<{ id: string; text: string }>;
  batchId: string;
  prefix: string;
  batchSettled: PromiseSettledResult<{ result: BatchSummary }> | undefined;
}): Promise<InvariantCheck[]> {
  const expected = new Map<string, string>(chaos.runs.map((run) => [run.id, run.text]));
  for (const { index, rollout } of batchPairs)
    expected.set(`${chaos.batchId}/q${index}-r${rollout}`, batchAnswer(index, rollout));
  const terminations = new Map<string, number>();
  const ended: string[] = [];
  const answered: string[] = [];
  const materialised: string[] = [];
  let toolCalls = 0;
  let transcripts = 0;
  for (const [workflowId, text] of expected) {
    const executions: string[] = [];
    for await (const execution of cluster.client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
      executions.push(execution.status.name);
    if (executions.join() !== 'COMPLETED') ended.push(`${workflowId}: executions ${executions.join(', ') || 'none'}`);
    let result: ResearchRunResult;
    try {
      ({ result } = await cluster.resultOf<ResearchRunResult>(cluster.client.workflow.getHandle(workflowId), 60_000));
    } catch (error) {
      ended.push(`${workflowId}: ${(error as Error).message}`);
      continue;
    }
    terminations.set(result.termination, (terminations.get(result.termination) ?? 0) + 1);
    if (result.termination !== 'answer' || result.prediction !== text)
      ended.push(
        `${workflowId}: ${result.termination} ${JSON.stringify(result.prediction.slice(0, 100))}, expected answer ${JSON.stringify(text)}`,
      );
    // The result's by-reference part: the transcript, read back from S3 as `react-agent result` does.
    const whole = await materialiseResult(cluster.store, result).catch((error: unknown) => {
      materialised.push(`${workflowId}: transcript ${result.transcript}: ${(error as Error).message}`);
      return undefined;
    });
    if (!whole) continue;
    transcripts += 1;
    const answers = whole.messages.filter(
      (message) => message.role === 'assistant' && message.content.includes('<answer>'),
    ).length;
    if (answers !== 1) ended.push(`${workflowId}: ${answers} answers in the transcript`);
    const tools = toolCallAnswers(whole.messages, /^(Facts about |Waited )/);
    toolCalls += tools.calls;
    if (tools.calls !== result.toolCalls)
      answered.push(
        `${workflowId}: ${tools.calls} tool calls in the transcript, the result counts ${result.toolCalls}`,
      );
    answered.push(...tools.problems.map((problem) => `${workflowId}: ${problem}`));
  }

  const batch = chaos.batchSettled;
  if (batch?.status !== 'fulfilled')
    materialised.push(`batch ${chaos.batchId}: ${batch?.status === 'rejected' ? String(batch.reason) : 'no result'}`);
  const summary = batch?.status === 'fulfilled' ? batch.value.result : undefined;
  if (summary && summary.lines !== BATCH.questions * BATCH.rollouts)
    materialised.push(`batch ${chaos.batchId}: ${summary.lines} lines`);
  const summaryFile = await cluster.objects
    .text(`${chaos.prefix}/summary.json`)
    .catch((error: unknown) => (materialised.push(`summary.json: ${(error as Error).message}`), undefined));
  if (summaryFile !== undefined && (JSON.parse(summaryFile) as BatchSummary).batchId !== chaos.batchId)
    materialised.push('summary.json is another batch’s');
  if (summary?.evaluation?.failed !== undefined) materialised.push(`evaluation failed: ${summary.evaluation.failed}`);
  let report: EvaluationReport | undefined;
  try {
    const { result: outcome } = await cluster.resultOf<EvaluationOutcome>(
      cluster.client.workflow.getHandle(`${chaos.batchId}/evaluation`),
      60_000,
    );
    report = JSON.parse(
      await cluster.objects.text(outcome.reportPath.replace(`s3://${STACK_TOPOLOGY.s3.bucket}/`, '')),
    ) as EvaluationReport;
  } catch (error) {
    materialised.push(`evaluation ${chaos.batchId}/evaluation: ${(error as Error).message}`);
  }

  const iterProblems: string[] = [];
  const iterCounts: string[] = [];
  for (let rollout = 1; rollout <= BATCH.rollouts; rollout += 1) {
    const lines = await cluster
      .iterLines(chaos.prefix, rollout)
      .catch((error: unknown) => (iterProblems.push(`iter${rollout}.jsonl: ${(error as Error).message}`), []));
    iterProblems.push(...iterFileProblems(lines, BATCH.questions, rollout));
    lines.forEach((line) => {
      if (line.prediction !== batchAnswer(line.index, rollout))
        iterProblems.push(`iter${rollout} q${line.index}: ${JSON.stringify(line.prediction)}`);
    });
    iterCounts.push(
      `iter${rollout}: ${new Set(lines.map((line) => line.index)).size}/${BATCH.questions} questions in ${lines.length} lines`,
    );
  }

  const sameEvaluation =
    report && referenceEvaluation
      ? differences(evaluationFigures(referenceEvaluation), evaluationFigures(report))
      : ['no evaluation to compare'];

  // Nothing left running: visibility and the workers may lag the last close by a little.
  let left = await workLeftRunning(cluster.client, cluster.toolLog, cluster.model);
  for (
    let waited = 0;
    waited < 60 && left.workflows.length + left.toolCalls.length + left.modelRequests.length > 0;
    waited += 1
  ) {
    await delay(1_000);
    left = await workLeftRunning(cluster.client, cluster.toolLog, cluster.model);
  }

  const runCount = expected.size;
  return [
    {
      invariant: 'every run ended with a termination, once',
      detail: `${runCount} runs (${chaos.runs.length} alone, ${runCount - chaos.runs.length} of the batch), one execution each: ${[...terminations].map(([termination, count]) => `${termination} ${count}`).join(', ')}`,
      problems: ended,
    },
    {
      invariant: 'every tool call answered by its tool',
      detail: `${toolCalls} tool calls in ${transcripts} transcripts, a response from the tool each`,
      problems: answered,
    },
    {
      invariant: 'each (question, rollout) once in its iter file',
      detail: iterCounts.join('; '),
      problems: iterProblems,
    },
    {
      invariant: 'evaluation identical to the fault-free run',
      detail: report
        ? `${report.questions.length} questions × ${report.metrics.rollouts} rollouts, pass@1 ${report.metrics.perRollout.map((rollout) => rollout.passAt1).join(' / ')}, judge calls ${report.judgeCalls?.made} made + ${report.judgeCalls?.stored} stored`
        : 'no report',
      problems: sameEvaluation,
    },
    {
      invariant: 'every result materialises (no blob lost)',
      detail: `${transcripts} run results with their transcripts from S3, the batch's summary.json, the evaluation's report.json`,
      problems: materialised,
    },
    {
      invariant: 'nothing left running',
      detail: `${left.workflows.length} running workflows, ${left.toolCalls.length} tool calls on live workers, ${left.modelRequests.length} open model requests`,
      problems: [
        ...left.workflows.map((id) => `workflow ${id}`),
        ...left.toolCalls.map((call) => `tool ${call}`),
        ...left.modelRequests.map((request) => `model request ${request}`),
      ],
    },
  ];
}
