/**
 * Many runs at once: N concurrent runs of 10 model calls each (9 tool calls, then an answer)
 * with 2,000 ms scripted model latency, on real worker processes (worker/main.ts):
 *
 * - `default slots` (the baseline, the behaviour before issue 13): one worker, one queue,
 *   Temporal's default 20 activity slots shared by model and tool calls;
 * - `sized slots`: one worker, model calls on their own queue with 200 slots
 *   (REACT_AGENT_MAX_CONCURRENT_MODEL_CALLS' default), tools and bookkeeping on the main queue;
 * - `sized, two workers`: the same on two worker processes.
 *
 *   npm run benchmark:scale                                   (100 and 300 runs, all three setups)
 *   npm run benchmark:scale -- --runs 100,300,1000 --setups sized,two --latency 2000 --calls 10
 *
 * Prints per setup and size: wall time, runs finished per minute, p50/p95 of a model call's
 * schedule-to-start (ActivityTaskScheduled → ActivityTaskStarted in history; first attempts, and
 * the number of model calls that were retried, with the causes), the workers' peak
 * RSS and RSS per run in flight (peak above idle, divided by the runs). `--trace-dir DIR` keeps
 * the workers' activity traces and logs and the dev server's log there, and says of each retried
 * call whether its failed attempt ever started on a worker. `--bundle FILE` has the workers run
 * another workflow bundle (two bundles compared on the same tree). `--worker-env 'SET|SET'` measures
 * each setup once per set of variables given to its workers (`-` for the worker as configured,
 * `MALLOC_ARENA_MAX=2 REACT_AGENT_WORKFLOW_V8_FLAGS=none` for two), one row each, one after the
 * other on the same dev server: a worker setting compared in one command. Every run must finish
 * with an answer, else the script exits non-zero. The machine's load is printed beside each row.
 */
import { Client, Connection } from '@temporalio/client';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResearchRunResult } from '../src/core/run-result';
import { scriptFromTurns, ScriptedModelServer } from '../test/fakes/scripted-model-server';
import type { WorkerProcess } from '../test/integration/support/worker-process';
import {
  argument,
  describeLoad,
  parseWorkerEnvironments,
  percentile,
  ResidentMemorySampler,
  residentBytes,
  scheduleToStart,
  startResearchRuns,
  startWorkerProcess,
  workerEnvironment,
} from './fleet-helpers';
import { cpuBetween, cpuSnapshot } from './process-cpu';
import { explainRetries, readTraceLines, startedAttempts } from './retry-explanation';
import { parseTemporalKinds, startTemporal, TEMPORAL_KINDS, type TemporalUnderTest } from './temporal-servers';

const SIZES = argument('runs', '100,300').split(',').map(Number);
const SETUPS = argument('setups', 'default,sized,two').split(',');
const LATENCY_MS = Number(argument('latency', '2000'));
const CALLS = Number(argument('calls', '10'));
const TEMPORALS = parseTemporalKinds(argument('temporal', 'dev'));
/** `--bundle FILE`: the workflow bundle the workers run (REACT_AGENT_WORKFLOW_BUNDLE), to compare two; default the tests' bundle of workflows/. */
const BUNDLE = argument('bundle', '');
/**
 * `--trace-dir DIR`: each worker traces its activities there (REACT_AGENT_ACTIVITY_TRACE_FILE) and
 * leaves its log, the dev server its log; the retried calls are listed, with how many of their
 * failed attempts no worker ever started.
 */
const TRACE_DIRECTORY = argument('trace-dir', '');
/** `--worker-env 'SET|SET'`: each setup is measured once per set of worker variables (parseWorkerEnvironments); default the worker as configured. */
const VARIANTS = parseWorkerEnvironments(argument('worker-env', '-'));
const MIB = 1024 * 1024;

const SETUP_LABELS: Record<string, string> = {
  default: 'default slots (20), 1 worker',
  sized: 'sized slots (200 model), 1 worker',
  two: 'sized slots, 2 workers',
};

/** One row: a setup at a size on one Temporal. */
async function measure(
  client: Client,
  temporal: TemporalUnderTest,
  modelBaseUrl: string,
  directory: string,
  taskQueue: string,
  setup: string,
  runs: number,
  variant: { label: string; environment: Record<string, string> },
): Promise<{ row: string; ok: boolean }> {
  const base = await workerEnvironment({
    temporalAddress: temporal.address,
    modelBaseUrl,
    directory: join(directory, taskQueue),
    taskQueue,
  });
  const queues: Record<string, string> =
    setup === 'default' ? {} : { REACT_AGENT_MODEL_TASK_QUEUE: `${taskQueue}-model` };
  const traceFile = (index: number) => join(TRACE_DIRECTORY, `${taskQueue}-worker-${index}.jsonl`);
  const trace = (index: number): Record<string, string> =>
    TRACE_DIRECTORY ? { REACT_AGENT_ACTIVITY_TRACE_FILE: traceFile(index) } : {};
  const workers: WorkerProcess[] = await Promise.all(
    Array.from({ length: setup === 'two' ? 2 : 1 }, (_, index) =>
      startWorkerProcess({
        ...base,
        ...queues,
        ...trace(index),
        ...(BUNDLE ? { REACT_AGENT_WORKFLOW_BUNDLE: BUNDLE } : {}),
        ...variant.environment,
      }),
    ),
  );
  const idle = workers.reduce((total, worker) => total + residentBytes(worker.pid), 0);
  const sampler = new ResidentMemorySampler(workers.map((worker) => worker.pid));
  const groups = { ...(await temporal.processGroups()), workers: workers.map((worker) => worker.pid) };
  const cpuBefore = cpuSnapshot(groups);
  let cpu: Record<string, number>;
  const ids = Array.from({ length: runs }, (_, index) => `${taskQueue}-run-${index}`);
  const started = Date.now();
  let answered: number;
  let seconds: number;
  let peak: number;
  try {
    const handles = await startResearchRuns(client, taskQueue, ids, (workflowId) => `Scale question ${workflowId}?`);
    const results = await Promise.allSettled(handles.map((handle) => handle.result() as Promise<ResearchRunResult>));
    answered = results.filter(
      (result) =>
        result.status === 'fulfilled' && result.value.termination === 'answer' && result.value.iterations === CALLS,
    ).length;
  } finally {
    seconds = (Date.now() - started) / 1000;
    cpu = cpuBetween(cpuBefore, cpuSnapshot(groups));
    peak = sampler.stop();
    await Promise.all(workers.map((worker) => worker.stop()));
    if (TRACE_DIRECTORY)
      workers.forEach((worker, index) =>
        writeFileSync(join(TRACE_DIRECTORY, `${taskQueue}-worker-${index}.log`), `pid ${worker.pid}\n${worker.log}`),
      );
  }
  const label = `${SETUP_LABELS[setup]}, ${TEMPORAL_KINDS[temporal.kind]}${VARIANTS.length > 1 ? `, ${variant.label}` : ''}`;
  const {
    firstAttemptMs: delays,
    retried,
    retryCauses,
    retriedActivities,
    workflowTasks,
  } = await scheduleToStart(client, ids, 'callModel');
  let explanation = '';
  if (TRACE_DIRECTORY) {
    for (const activity of retriedActivities) console.error(`  retried: ${JSON.stringify(activity)}`);
    const { neverStarted, startedOnAWorker } = explainRetries(
      retriedActivities,
      startedAttempts(readTraceLines(workers.map((_, index) => traceFile(index)))),
    );
    if (retried)
      explanation = `; failed attempts no worker started: ${neverStarted}, started on a worker: ${startedOnAWorker}`;
    const { started, scheduleToStartTimeouts, startToCloseTimeouts, movedToAnotherWorker } = workflowTasks;
    console.error(
      `${label}, ${runs} runs: ${started} workflow tasks; timed out: ${scheduleToStartTimeouts} on the sticky queue (schedule-to-start), ${startToCloseTimeouts} started but not completed (start-to-close); ${movedToAnotherWorker} started on another worker than the one before`,
    );
  }
  const ok = answered === runs;
  if (!ok) console.error(`${label}: only ${answered} of ${runs} runs answered after ${CALLS} calls`);
  if (retried)
    console.error(
      `${label}, ${runs} runs: ${retried} model calls retried (${[...retryCauses].map(([cause, count]) => `${count} × ${cause}`).join('; ')}${explanation})`,
    );
  const perCall = (group: string) =>
    group in cpu ? `${((1000 * (cpu[group] ?? 0)) / (runs * CALLS)).toFixed(1)} ms` : '—';
  const row = [
    SETUP_LABELS[setup]!.padEnd(34),
    temporal.kind.padEnd(5),
    String(runs).padStart(5),
    seconds.toFixed(1).padStart(7),
    ((answered / seconds) * 60).toFixed(0).padStart(9),
    `${(percentile(delays, 0.5) / 1000).toFixed(2)} s`.padStart(16),
    `${(percentile(delays, 0.95) / 1000).toFixed(2)} s`.padStart(8),
    String(retried).padStart(7),
    perCall('Temporal').padStart(17),
    perCall('PostgreSQL').padStart(10),
    perCall('workers').padStart(9),
    `${(peak / MIB).toFixed(0)} MiB`.padStart(9),
    `${((peak - idle) / runs / 1024).toFixed(0)} KiB`.padStart(9),
    `  ${describeLoad()}`,
    ...(VARIANTS.length > 1 ? [`  ${variant.label}`] : []),
  ].join('  ');
  return { row, ok };
}

async function main(): Promise<void> {
  for (const setup of SETUPS)
    if (!SETUP_LABELS[setup]) throw new Error(`unknown setup ${setup}; use ${Object.keys(SETUP_LABELS).join(', ')}`);
  const directory = mkdtempSync(join(tmpdir(), 'react-agent-scale-benchmark-'));
  const model = await ScriptedModelServer.start({
    script: scriptFromTurns((call) =>
      call >= CALLS
        ? { content: '<think>Enough.</think>\n<answer>42</answer>', delayBeforeFirstChunkMs: LATENCY_MS }
        : {
            content: `<think>Step ${call}.</think>\n<tool_call>\n{"name": "lookup", "arguments": {"query": "step ${call}"}}\n</tool_call>`,
            delayBeforeFirstChunkMs: LATENCY_MS,
          },
    ),
  });
  let failed = false;
  console.log(
    `Scale: N concurrent runs of ${CALLS} model calls (${CALLS - 1} tool calls, then an answer), scripted model latency ${LATENCY_MS} ms; ${describeLoad()} at start`,
  );
  console.log('');
  const header = [
    'setup'.padEnd(34),
    'on'.padEnd(5),
    'runs'.padStart(5),
    'wall s'.padStart(7),
    'runs/min'.padStart(9),
    'sched→start p50'.padStart(16),
    'p95'.padStart(8),
    'retried'.padStart(7),
    'CPU/call Temporal'.padStart(17),
    'PostgreSQL'.padStart(10),
    'workers'.padStart(9),
    'RSS peak'.padStart(9),
    'per run'.padStart(9),
    '  load (1/5/15 min)',
    ...(VARIANTS.length > 1 ? ['  worker environment'] : []),
  ].join('  ');
  console.log(header);
  try {
    let sequence = 0;
    for (const kind of TEMPORALS) {
      const temporalDirectory = join(directory, kind);
      mkdirSync(temporalDirectory, { recursive: true });
      const temporal = await startTemporal(
        kind,
        temporalDirectory,
        TRACE_DIRECTORY ? { logDirectory: TRACE_DIRECTORY } : {},
      );
      const connection = await Connection.connect({ address: temporal.address });
      try {
        const client = new Client({ connection });
        for (const runs of SIZES) {
          for (const setup of SETUPS)
            for (const variant of VARIANTS) {
              sequence += 1;
              const { row, ok } = await measure(
                client,
                temporal,
                model.baseUrl,
                temporalDirectory,
                `scale-${sequence}-${setup}`,
                setup,
                runs,
                variant,
              );
              if (!ok) failed = true;
              console.log(row);
            }
        }
      } finally {
        await connection.close();
        await temporal.stop();
      }
    }
    console.log('');
    console.log(
      `on: dev = ${TEMPORAL_KINDS.dev}, stack = ${TEMPORAL_KINDS.stack}. sched→start: a model call's ActivityTaskScheduled → ActivityTaskStarted (${CALLS} per run), first attempts only; retried: model calls whose start was a retry; CPU/call: CPU time (user + system, /proc) of Temporal's processes, PostgreSQL's and the workers' during the row, divided by its model calls; RSS peak: the workers' summed peak resident memory; per run: (peak − idle) / runs in flight.`,
    );
    console.log(
      `Latency bound: ${CALLS} calls × ${LATENCY_MS / 1000} s = ${((CALLS * LATENCY_MS) / 1000).toFixed(1)} s per run when nothing waits.`,
    );
  } finally {
    await model.close();
    rmSync(directory, { recursive: true, force: true });
  }
  if (failed) process.exit(1);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
