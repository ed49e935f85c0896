/**
 * What a run in flight costs the worker, by how far it got (issue 34): N runs held at their
 * (K+1)-th model call after K steps (K `lookup` tool calls done), on a real worker process
 * (worker/main.ts), for each K of `--steps`; a fresh worker per K. The scripted model server answers
 * the first K calls of each run at once with a tool call and holds call K+1 until every run of the
 * row is held there; then the worker's resident memory is read (peak and settled, above its idle
 * RSS, per run), the holds are released and every run must answer.
 *
 *   npx tsx benchmarks/run-memory.ts                           (100 runs; K = 1, 5, 9)
 *   npx tsx benchmarks/run-memory.ts --runs 200 --steps 1,9 --heap-dir DIR --bundle FILE
 *   npx tsx benchmarks/run-memory.ts --runs 200 --steps 9 --worker-env '-|MALLOC_ARENA_MAX=2'
 *
 * `--heap-dir DIR` runs the worker's workflows in its main thread (TEMPORAL_DEBUG=1, the SDK's debug
 * mode: the same sandbox and promise hook, without the workflow thread) and writes a heap snapshot
 * of it there when half the runs are held and when all are (SIGWINCH, `--heapsnapshot-signal`: the SDK's runtime shuts the worker down on SIGUSR2), then
 * prints what grew between the two per run: self size and count by kind of object, the largest
 * first — the Memory tab's comparison view in Chrome's developer tools. The bundle is the one the benchmarks' workers use
 * (test/integration/support/workflow-bundle.ts).
 *
 * Prints per K: RSS idle, held (settled 5 s after the last run reached its hold), per run in
 * flight, and the slope per step between the first and the last K, with the machine's load.
 */
import { Client, Connection, type WorkflowHandle } from '@temporalio/client';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ResearchRunResult } from '../src/core/run-result';
import { scriptFromTurns, ScriptedModelServer } from '../test/fakes/scripted-model-server';
import {
  argument,
  describeLoad,
  parseWorkerEnvironments,
  residentBytes,
  startResearchRuns,
  startWorkerProcess,
  workerEnvironment,
} from './fleet-helpers';
import { describeHeap, readHeapSummary } from './heap-snapshot-summary';
import { inspectorAddress, WorkerInspector, type HeapUsage } from './worker-inspector';
import { startTemporal } from './temporal-servers';
import type { WorkerProcess } from '../test/integration/support/worker-process';

const RUNS = Number(argument('runs', '100'));
const STEPS = argument('steps', '1,5,9').split(',').map(Number);
const HEAP_DIRECTORY = argument('heap-dir', '');
/** `--bundle FILE`: the workflow bundle the worker runs (REACT_AGENT_WORKFLOW_BUNDLE); default the tests' bundle of workflows/. */
const BUNDLE = argument('bundle', '');
/** `--worker-env 'SET|SET'`: each K is measured once per set of variables given to the worker (parseWorkerEnvironments); default the worker as configured. */
const VARIANTS = parseWorkerEnvironments(argument('worker-env', '-'));
const KIB = 1024;
const MIB = 1024 * KIB;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A gate the held model calls wait on, opened once per row. */
class Hold {
  held = 0;
  private open!: () => void;
  private opened = new Promise<void>((resolve) => (this.open = resolve));
  async wait(): Promise<void> {
    this.held += 1;
    await this.opened;
  }
  release(): void {
    this.open();
  }
}

let hold = new Hold();
/** Tool steps the scripted model server answers before it holds a run's next call. */
let steps = 0;

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'react-agent-run-memory-'));
  const model = await ScriptedModelServer.start({
    script: scriptFromTurns(async (call) => {
      if (call <= steps)
        return {
          content: `<think>Step ${call}.</think>\n<tool_call>\n{"name": "lookup", "arguments": {"query": "step ${call}"}}\n</tool_call>`,
        };
      await hold.wait();
      return { content: '<think>Enough.</think>\n<answer>42</answer>' };
    }),
  });
  const temporal = await startTemporal('dev', directory);
  const connection = await Connection.connect({ address: temporal.address });
  const client = new Client({ connection });
  let failed = false;
  const rows: { variant: string; steps: number; idle: number; held: number; marginal: number; peak: number }[] = [];
  const heapLines: string[] = [];
  console.log(
    `Run memory: ${RUNS} runs held at their model call after K steps${HEAP_DIRECTORY ? ', workflows in the main thread (debug mode), heap snapshot each' : ''}; ${describeLoad()} at start`,
  );
  console.log('');
  console.log(
    [
      'worker environment'.padEnd(36),
      'K steps',
      'RSS idle',
      'RSS held',
      'peak',
      'per run held',
      'per run (peak)',
      'second half, per run',
      'answered',
      '  load',
    ].join('  '),
  );
  try {
    for (const [variantIndex, variant] of VARIANTS.entries())
      for (const k of STEPS) {
        steps = k;
        hold = new Hold();
        const taskQueue = `run-memory-${variantIndex}-${k}`;
        const base = await workerEnvironment({
          temporalAddress: temporal.address,
          modelBaseUrl: model.baseUrl,
          directory: join(directory, taskQueue),
          taskQueue,
        });
        const nodeOptions = `${process.env.NODE_OPTIONS ?? ''} --inspect=127.0.0.1:0`;
        const heap: Record<string, string> = HEAP_DIRECTORY
          ? {
              TEMPORAL_DEBUG: '1',
              NODE_OPTIONS: `${nodeOptions} --heapsnapshot-signal=SIGWINCH --diagnostic-dir=${join(HEAP_DIRECTORY, `k${k}`)}`,
            }
          : { NODE_OPTIONS: nodeOptions };
        if (HEAP_DIRECTORY) mkdirSync(join(HEAP_DIRECTORY, `k${k}`), { recursive: true });
        const worker = await startWorkerProcess({
          ...base,
          REACT_AGENT_MODEL_TASK_QUEUE: `${taskQueue}-model`,
          ...(BUNDLE ? { REACT_AGENT_WORKFLOW_BUNDLE: BUNDLE } : {}),
          ...variant.environment,
          ...heap,
          ...(variant.environment.NODE_OPTIONS
            ? { NODE_OPTIONS: `${heap.NODE_OPTIONS} ${variant.environment.NODE_OPTIONS}` }
            : {}),
        });
        await sleep(2000);
        const address = inspectorAddress(worker.log);
        if (!address) throw new Error(`the worker printed no inspector address:\n${worker.log.slice(-2000)}`);
        const inspector = await WorkerInspector.connect(address);
        const idleHeaps = await inspector.heaps(true);
        const idle = residentBytes(worker.pid);
        let peak = idle;
        const ids = Array.from({ length: RUNS }, (_, index) => `${taskQueue}-run-${index}`);
        const handles: WorkflowHandle[] = [];
        const half = Math.floor(RUNS / 2);
        // Two waves: the RSS after the first half is held and after all are, so the second half's
        // growth is the marginal cost of a run (the first runs also pay what is made once).
        handles.push(...(await startResearchRuns(client, taskQueue, ids.slice(0, half), memoryQuestion)));
        peak = Math.max(peak, await heldBy(half, worker));
        await sleep(5000);
        const halfHeld = residentBytes(worker.pid);
        const halfHeaps = await inspector.heaps(true);
        const snapshots: string[] = [];
        if (HEAP_DIRECTORY) snapshots.push(await snapshotOf(worker, join(HEAP_DIRECTORY, `k${k}`), snapshots));
        handles.push(...(await startResearchRuns(client, taskQueue, ids.slice(half), memoryQuestion)));
        peak = Math.max(peak, await heldBy(RUNS, worker));
        await sleep(5000);
        const held = residentBytes(worker.pid);
        peak = Math.max(peak, held);
        const heldHeaps = await inspector.heaps(true);
        const heldCollected = residentBytes(worker.pid);
        inspector.close();
        if (HEAP_DIRECTORY) snapshots.push(await snapshotOf(worker, join(HEAP_DIRECTORY, `k${k}`), snapshots));
        if (HEAP_DIRECTORY) {
          const [before, after] = snapshots.map(readHeapSummary);
          if (before && after) {
            console.error(`heap snapshots (K = ${k}): ${snapshots.join(', ')}`);
            console.error(describeHeap(after, { before, runs: RUNS - half }));
          }
        }
        hold.release();
        const results = await Promise.race([
          Promise.allSettled(handles.map((handle) => handle.result() as Promise<ResearchRunResult>)),
          sleep(10 * 60_000).then(() => {
            throw new Error(`the runs did not answer within 10 minutes; the worker's log:\n${worker.log.slice(-4000)}`);
          }),
        ]);
        const answered = results.filter(
          (result) => result.status === 'fulfilled' && result.value.termination === 'answer',
        ).length;
        if (answered < RUNS) failed = true;
        await worker.stop();
        const marginal = (held - halfHeld) / (RUNS - half);
        rows.push({ variant: variant.label, steps: k, idle, held, marginal, peak });
        heapLines.push(
          describeHeaps(
            `${variant.label}, K = ${k}`,
            { idle: idleHeaps, half: halfHeaps, held: heldHeaps },
            half,
            idle,
            heldCollected,
          ),
        );
        console.log(
          [
            variant.label.padEnd(36),
            String(k).padStart(7),
            `${(idle / MIB).toFixed(0)} MiB`.padStart(8),
            `${(held / MIB).toFixed(0)} MiB`.padStart(8),
            `${(peak / MIB).toFixed(0)} MiB`.padStart(8),
            `${((held - idle) / RUNS / KIB).toFixed(0)} KiB`.padStart(12),
            `${((peak - idle) / RUNS / KIB).toFixed(0)} KiB`.padStart(14),
            `${(marginal / KIB).toFixed(0)} KiB`.padStart(20),
            `${answered}/${RUNS}`.padStart(8),
            `  ${describeLoad()}`,
          ].join('  '),
        );
      }
    console.log('');
    for (const line of heapLines) console.log(line);
    const first = rows.find((row) => row.variant === VARIANTS[0]?.label);
    const last = rows.filter((row) => row.variant === VARIANTS[0]?.label).at(-1);
    if (first && last && last.steps > first.steps)
      console.log(
        `\nPer step (held, between K = ${first.steps} and ${last.steps}): ${((last.held - last.idle - (first.held - first.idle)) / RUNS / (last.steps - first.steps) / KIB).toFixed(1)} KiB per run per step; second halves: ${((last.marginal - first.marginal) / (last.steps - first.steps) / KIB).toFixed(1)} KiB`,
      );
  } finally {
    await connection.close();
    await temporal.stop();
    await model.close();
    rmSync(directory, { recursive: true, force: true });
  }
  if (failed) {
    console.error('not every run answered');
    process.exit(1);
  }
}

/**
 * A line per thread: its V8 heap used after a full collection, idle and with all runs held, per
 * run and per run of the second half; then the process's RSS after the collection, per run.
 */
function describeHeaps(
  row: string,
  heaps: { idle: HeapUsage[]; half: HeapUsage[]; held: HeapUsage[] },
  half: number,
  idleResident: number,
  heldResident: number,
): string {
  const lines = [`${row}, after a full garbage collection of every thread:`];
  for (const thread of heaps.held) {
    const used = (usages: HeapUsage[]) => usages.find((usage) => usage.thread === thread.thread)?.usedBytes ?? 0;
    lines.push(
      `  ${thread.thread}: heap used ${(used(heaps.idle) / MIB).toFixed(1)} MiB idle, ${(thread.usedBytes / MIB).toFixed(1)} MiB held (${(thread.totalBytes / MIB).toFixed(1)} MiB reserved); ` +
        `${((thread.usedBytes - used(heaps.idle)) / RUNS / KIB).toFixed(0)} KiB per run, ${((thread.usedBytes - used(heaps.half)) / (RUNS - half) / KIB).toFixed(0)} KiB per run of the second half`,
    );
  }
  lines.push(
    `  RSS after the collection: ${((heldResident - idleResident) / RUNS / KIB).toFixed(0)} KiB per run above idle`,
  );
  return lines.join('\n');
}

const memoryQuestion = (workflowId: string) => `Memory question ${workflowId}?`;

/** The worker's peak RSS until `count` model calls are held (30 minutes at most). */
async function heldBy(count: number, worker: WorkerProcess): Promise<number> {
  let peak = 0;
  const deadline = Date.now() + 30 * 60_000;
  while (hold.held < count && Date.now() < deadline) {
    const resident = residentBytes(worker.pid);
    if (resident === 0) throw new Error(`the worker exited; its log:\n${worker.log.slice(-4000)}`);
    peak = Math.max(peak, resident);
    await sleep(250);
  }
  if (hold.held < count) throw new Error(`only ${hold.held} of ${count} runs reached their hold`);
  return peak;
}

/** Asks the worker for a heap snapshot (SIGWINCH) and returns its file once written (a new file in `folder`). */
async function snapshotOf(worker: WorkerProcess, folder: string, known: string[]): Promise<string> {
  worker.kill('SIGWINCH');
  for (let waited = 0; waited < 300_000; waited += 1000) {
    await sleep(1000);
    const name = readdirSync(folder).find(
      (file) => file.endsWith('.heapsnapshot') && !known.includes(join(folder, file)),
    );
    if (!name) continue;
    const path = join(folder, name);
    const before = statSync(path).size;
    await sleep(2000);
    if (statSync(path).size === before && before > 0) return path;
  }
  throw new Error(`no heap snapshot in ${folder}`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
