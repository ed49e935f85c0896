// Runs alone: measures model calls per second; without the limit the same runs must go 1.5 times the limit's rate, which other files' CPU use can hold back
/**
 * The model queue's rate limit (REACT_AGENT_MODEL_CALLS_PER_SECOND, Temporal's task-queue
 * `maxTaskQueueActivitiesPerSecond`) holds with many runs in flight: measured from the scripted
 * model server's request times, model calls per second stay at the limit, while the same runs
 * without a limit go clearly faster in the same test. The server's limiter is a token bucket: after
 * an idle moment it lets about one second's worth through at once, so a 1-second window may see
 * up to twice the limit; every 1, 2, 4 and 8 s window is held to the rate plus that burst plus
 * a second's worth of delivery jitter, and the whole run to the limit + 15 %.
 */
import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

const RUNS = 12;
const CALLS_PER_RUN = 4;
const LIMIT = 3;

const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** Window lengths checked, in seconds. */
const WINDOWS = [1, 2, 4, 8];

interface Measured {
  calls: number;
  /** Calls after the first divided by the seconds from the first to the last. */
  overallPerSecond: number;
  /** Most calls received in any window of each length in {@link WINDOWS} (each window starting at a call). */
  mostInWindow: Map<number, number>;
  seconds: number;
}

/** Model-call rate of these runs, from the scripted server's request timestamps. */
function measure(workflowIds: string[]): Measured {
  const ids = new Set(workflowIds);
  const times = environment.model.requests
    .filter((request) => request.workflowId !== undefined && ids.has(request.workflowId))
    .map((request) => request.receivedAt)
    .sort((left, right) => left - right);
  const mostInWindow = new Map(
    WINDOWS.map((seconds) => [
      seconds,
      Math.max(...times.map((start) => times.filter((time) => time >= start && time < start + seconds * 1_000).length)),
    ]),
  );
  const seconds = ((times[times.length - 1] as number) - (times[0] as number)) / 1000;
  return { calls: times.length, overallPerSecond: (times.length - 1) / seconds, mostInWindow, seconds };
}

/**
 * Most calls a token bucket of `LIMIT` per second lets through in `seconds`: the rate times the
 * window, plus the bucket's burst (about one second's worth, refilled while the queue is idle),
 * plus one more second's worth of slack for the jitter between the server's dispatch and the
 * request reaching the model (on a loaded machine a starved worker sends dispatched calls in clumps).
 */
const allowed = (seconds: number) => LIMIT * seconds + 2 * LIMIT;

const describeWindows = (measured: Measured) =>
  WINDOWS.map((seconds) => `${measured.mostInWindow.get(seconds)} in ${seconds} s`).join(', ');

/** Starts RUNS runs of CALLS_PER_RUN model calls each at once (every call but the last asks a tool) and waits for them all. */
async function runMany(label: string): Promise<string[]> {
  const ids = Array.from({ length: RUNS }, (_, run) =>
    scenarios.add(runId(`${label}-${run}`), [
      ...Array.from({ length: CALLS_PER_RUN - 1 }, (_, call) =>
        toolCall('lookup', { query: `run ${run} step ${call}` }),
      ),
      answer(`Answer ${run}.`),
    ]),
  );
  const handles = await Promise.all(
    ids.map((id) => environment.startRun({ question: `Rate-limited question ${id}?` }, id)),
  );
  const results = (await Promise.all(handles.map((handle) => handle.result()))) as ResearchRunResult[];
  for (const result of results) {
    assert.equal(result.termination, 'answer');
    assert.equal(result.iterations, CALLS_PER_RUN);
  }
  return ids;
}

test(`${RUNS} runs x ${CALLS_PER_RUN} model calls in flight: the model queue's limit of ${LIMIT}/s holds, and without it the same runs go faster`, async () => {
  const limitedWorker = await environment.startWorker({
    REACT_AGENT_MODEL_TASK_QUEUE: `${environment.taskQueue}-model-limited`,
    REACT_AGENT_MODEL_CALLS_PER_SECOND: String(LIMIT),
  });
  assert.match(
    limitedWorker.log,
    new RegExp(`"${environment.taskQueue}-model-limited" \\(model calls; 200 activity slots, ${LIMIT}/s\\)`),
  );
  const limited = measure(await runMany('limited'));
  await limitedWorker.stop();

  const unlimitedWorker = await environment.startWorker({
    REACT_AGENT_MODEL_TASK_QUEUE: `${environment.taskQueue}-model-unlimited`,
  });
  const unlimited = measure(await runMany('unlimited'));
  await unlimitedWorker.stop();

  console.log(
    `model calls, ${RUNS} runs x ${CALLS_PER_RUN} calls, scripted latency 0: ` +
      `limit ${LIMIT}/s -> ${limited.overallPerSecond.toFixed(2)}/s overall over ${limited.seconds.toFixed(1)} s, at most ${describeWindows(limited)}; ` +
      `no limit -> ${unlimited.overallPerSecond.toFixed(2)}/s over ${unlimited.seconds.toFixed(1)} s, at most ${describeWindows(unlimited)}`,
  );
  assert.equal(limited.calls, RUNS * CALLS_PER_RUN);
  assert.equal(unlimited.calls, RUNS * CALLS_PER_RUN);
  assert.ok(
    limited.overallPerSecond <= LIMIT * 1.15,
    `limited rate ${limited.overallPerSecond.toFixed(2)}/s is above ${LIMIT} x 1.15`,
  );
  for (const seconds of WINDOWS) {
    const most = limited.mostInWindow.get(seconds) as number;
    assert.ok(
      most <= allowed(seconds),
      `${most} calls in ${seconds} s with a limit of ${LIMIT}/s (a token bucket allows ${allowed(seconds)})`,
    );
  }
  assert.ok(
    unlimited.overallPerSecond >= LIMIT * 1.5,
    `unlimited ${unlimited.overallPerSecond.toFixed(2)}/s is not clearly above the limit of ${LIMIT}/s (limited: ${limited.overallPerSecond.toFixed(2)}/s)`,
  );
}, 120_000);
