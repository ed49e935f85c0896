/**
 * Orchestration overhead: the same scripted run (29 tool calls, then an answer: 30 model calls)
 * as a bare in-process loop (the openai client streaming from the scripted server, the same
 * `lookup` tool called directly, messages kept in memory; no Temporal, no transcript store),
 * as Temporal's floor (`temporalFloor`: the bare loop's model call and tool call as two plain
 * activities per step, nothing else) and through Temporal (researchAgent on an in-process worker
 * with the real activities and a local transcript store behind the worker's default read cache),
 * at 0 ms and 1,000 ms scripted model latency, in the same process.
 *
 *   npm run benchmark:overhead                               (30 calls; 0 and 1,000 ms; 1 repeat)
 *   npm run benchmark:overhead -- --calls 30 --latencies 0,1000 --repeat 3
 *   npm run benchmark:overhead -- --temporal dev,stack   (the dev server, then the production stack)
 *   npm run benchmark:overhead -- --workflow-interceptors traced   (untraced, the default; traced; none)
 *
 * The worker's workflow bundle has the interceptors of a worker that does not trace (`untraced`:
 * workflows/tracing-turns-interceptor.ts), of one that traces (`traced`: the OpenTelemetry workflow
 * interceptors, their spans sent to a no-op sink), or none (what this benchmark ran before issue 34).
 *
 * Prints the wall time of each, the overhead per step ((Temporal − bare) / model calls) in ms and
 * as a share of Temporal's wall time (target at 1,000 ms: at most 5 %), split into the floor's
 * part ((floor − bare) / calls: what two workflow tasks and two activities cost on this machine
 * and server) and the agent's ((Temporal − floor) / calls: store, token counts, the loop's
 * logic), beside the machine's load.
 */
import { Client } from '@temporalio/client';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import JSON5 from 'json5';
import { join } from 'node:path';
import OpenAI from 'openai';
import { LocalDirectoryTranscriptStore } from '../activities';
import { DEFAULT_TRANSCRIPT_CACHE_MEGABYTES } from '../src/config/worker-config';
import {
  TRACING_WORKFLOW_INTERCEPTOR_MODULES,
  UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
} from '../src/config/workflow-interceptors';
import { CachedTranscriptStore } from '../src/storage/cached-transcript-store';
import type { ResearchRunResult } from '../src/core/run-result';
import { scriptFromTurns } from '../test/fakes/scripted-model-server';
import { argument, createScriptedWorker, describeLoad, lookupThenAnswer, percentile } from './fleet-helpers';
import { startBenchmarkStack } from './benchmark-stack';
import { cpuBetween, cpuSnapshot, type CpuSnapshot } from './process-cpu';
import { createFloorActivities, runLookup, streamScriptedReply } from './temporal-floor';
import { parseTemporalKinds, TEMPORAL_KINDS, type TemporalKind } from './temporal-servers';

const CALLS = Number(argument('calls', '30'));
const LATENCIES = argument('latencies', '0,1000').split(',').map(Number);
const REPEAT = Number(argument('repeat', '1'));
const TEMPORALS = parseTemporalKinds(argument('temporal', 'dev'));
const INTERCEPTORS = argument('workflow-interceptors', 'untraced');
const INTERCEPTOR_MODULES: Record<string, readonly string[]> = {
  untraced: UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
  traced: TRACING_WORKFLOW_INTERCEPTOR_MODULES,
  none: [],
};
if (!(INTERCEPTORS in INTERCEPTOR_MODULES)) {
  console.error(`--workflow-interceptors: ${INTERCEPTORS}? untraced, traced or none`);
  process.exit(2);
}
const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';

let latencyMs = 0;

/** The bare loop: think → call the tool → observe, with nothing durable around it. Returns each step's duration (model call start to the next one's, the last to the answer), in ms. */
async function bareLoop(openai: OpenAI, workflowId: string): Promise<number[]> {
  const stepStarts: number[] = [];
  const messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }> = [
    { role: 'system', content: 'You are a research assistant. Use <tool_call> to call tools and <answer> to answer.' },
    { role: 'user', content: QUESTION },
  ];
  for (let call = 1; call <= CALLS; call += 1) {
    stepStarts.push(performance.now());
    const content = await streamScriptedReply(openai, messages, workflowId, call);
    messages.push({ role: 'assistant', content });
    if (/<answer>/.test(content)) return stepsOf([...stepStarts, performance.now()]);
    const body = /<tool_call>([\s\S]*?)<\/tool_call>/.exec(content)?.[1];
    if (!body) throw new Error(`bare loop: no tool call in ${JSON.stringify(content)}`);
    const parsed = JSON5.parse(body) as { name: string; arguments: Record<string, unknown> };
    const observation = await runLookup(parsed.arguments, workflowId, `call-${call}`);
    messages.push({ role: 'user', content: `<tool_response>\n${observation}\n</tool_response>` });
  }
  throw new Error(`bare loop: no answer after ${CALLS} calls`);
}

/** Durations between consecutive instants. */
function stepsOf(instants: number[]): number[] {
  return instants.slice(1).map((instant, index) => instant - (instants[index] as number));
}

/** How the breakdown names an activity type: the agent's and the floor's model and tool calls alike. */
function activityLabel(type: string | null | undefined): 'model' | 'tool' | 'bookkeeping' {
  if (type === 'callModel' || type === 'floorModelCall') return 'model';
  if (type === 'lookup' || type === 'floorToolCall') return 'tool';
  return 'bookkeeping';
}

/**
 * What a Temporal run's history says: where its time went per model call (each activity type's
 * wait for a worker, scheduled → started, and execution, started → completed; workflow tasks'
 * wait and processing; summed and divided by the model calls), and each step's duration (a model
 * call scheduled to the next one scheduled, the last to the run's completion), in ms.
 */
async function historyFigures(client: Client, workflowId: string): Promise<{ breakdown: string; steps: number[] }> {
  const stepStarts: number[] = [];
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
  const at = new Map<string, { time: number; label: string }>();
  const totals = new Map<string, number>();
  const add = (label: string, ms: number) => totals.set(label, (totals.get(label) ?? 0) + ms);
  for (const event of history.events ?? []) {
    const id = String(event.eventId);
    const time = millis(event.eventTime);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) at.set(id, { time, label: activityLabel(scheduled.activityType?.name) });
    if (scheduled && activityLabel(scheduled.activityType?.name) === 'model') stepStarts.push(time);
    if (event.workflowExecutionCompletedEventAttributes) stepStarts.push(time);
    if (event.workflowTaskScheduledEventAttributes) at.set(id, { time, label: 'workflow task' });
    const started = event.activityTaskStartedEventAttributes ?? event.workflowTaskStartedEventAttributes;
    if (started) {
      const from = at.get(String(started.scheduledEventId));
      if (from) {
        add(`${from.label} wait`, time - from.time);
        at.set(id, { time, label: from.label });
      }
    }
    const completed = event.activityTaskCompletedEventAttributes ?? event.workflowTaskCompletedEventAttributes;
    if (completed) {
      const from = at.get(String(completed.startedEventId));
      if (from) add(`${from.label} run`, time - from.time);
    }
  }
  return {
    breakdown: [...totals.entries()].map(([label, ms]) => `${label} ${(ms / CALLS).toFixed(1)} ms`).join(', '),
    steps: stepsOf(stepStarts),
  };
}

async function measureOn(kind: TemporalKind): Promise<void> {
  const stack = await startBenchmarkStack({
    name: 'overhead-benchmark',
    script: scriptFromTurns(lookupThenAnswer(CALLS, () => latencyMs)),
    temporal: kind,
  });
  const { directory, model, client, workerConnection } = stack;
  const openai = new OpenAI({ baseURL: model.baseUrl, apiKey: 'benchmark', maxRetries: 0 });
  const worker = await createScriptedWorker({
    connection: workerConnection,
    taskQueue: 'overhead',
    modelBaseUrl: model.baseUrl,
    // As worker/main.ts has it by default (REACT_AGENT_TRANSCRIPT_CACHE_MB).
    store: new CachedTranscriptStore(new LocalDirectoryTranscriptStore(join(directory, 'transcripts')), {
      maxCharacters: (DEFAULT_TRANSCRIPT_CACHE_MEGABYTES * 1024 * 1024) / 2,
    }),
    workflowsPath: require.resolve('./benchmark-workflows'),
    workflowInterceptorModules: INTERCEPTOR_MODULES[INTERCEPTORS],
    moreActivities: createFloorActivities(openai),
  });
  let sequence = 0;
  let lastWorkflowId = '';
  const durable = async (): Promise<number> => {
    lastWorkflowId = `overhead-${Date.now()}-${(sequence += 1)}`;
    const result = (await client.workflow.execute('researchAgent', {
      taskQueue: 'overhead',
      workflowId: lastWorkflowId,
      args: [{ question: QUESTION, limits: { maxModelCalls: CALLS + 5 }, loop: { stuckDetection: false } }],
    })) as ResearchRunResult;
    if (result.termination !== 'answer' || result.iterations !== CALLS)
      throw new Error(`the Temporal run ended ${result.termination} after ${result.iterations} calls`);
    return result.iterations;
  };
  let floorWorkflowId = '';
  const floor = async (): Promise<number> => {
    floorWorkflowId = `floor-${Date.now()}-${(sequence += 1)}`;
    const calls = (await client.workflow.execute('temporalFloor', {
      taskQueue: 'overhead',
      workflowId: floorWorkflowId,
      args: [floorWorkflowId, CALLS],
    })) as number;
    if (calls !== CALLS) throw new Error(`the floor run answered after ${calls} calls, not ${CALLS}`);
    return calls;
  };
  // CPU of Temporal's processes, and of this one (the in-process worker, the client and the scripted model server).
  const cpuGroups = { ...(await stack.server.processGroups()), 'this process': [process.pid] };
  const timed = async <T>(run: () => Promise<T>): Promise<{ ms: number; value: T; cpu: CpuSnapshot }> => {
    const cpuBefore = cpuSnapshot(cpuGroups);
    const started = performance.now();
    const value = await run();
    return { ms: performance.now() - started, value, cpu: cpuBetween(cpuBefore, cpuSnapshot(cpuGroups)) };
  };
  const perCall = (cpu: CpuSnapshot) =>
    Object.entries(cpu)
      .map(([name, seconds]) => `${name} ${((seconds * 1000) / CALLS).toFixed(1)} ms`)
      .join(', ');

  try {
    await worker.runUntil(async () => {
      // Warm both paths (connections, tiktoken, the worker's caches) at 0 ms before measuring.
      await bareLoop(openai, 'warm-up');
      await floor();
      await durable();
      for (const latency of LATENCIES) {
        latencyMs = latency;
        for (let repeat = 1; repeat <= REPEAT; repeat += 1) {
          const { ms: bare, value: bareSteps } = await timed(() => bareLoop(openai, `bare-${latency}-${repeat}`));
          const { ms: floorMs, cpu: floorCpu } = await timed(floor);
          const { ms: temporal, cpu: temporalCpu } = await timed(durable);
          const perStep = (temporal - bare) / CALLS;
          const floorPerStep = (floorMs - bare) / CALLS;
          const { breakdown, steps } = await historyFigures(client, lastWorkflowId);
          // Step i through Temporal beside step i of the bare loop.
          const stepOverheads = steps.map((ms, index) => ms - (bareSteps[index] ?? 0));
          console.log(
            [
              kind.padEnd(5),
              `${latency} ms`.padStart(8),
              String(repeat).padStart(6),
              `${(bare / 1000).toFixed(2)} s`.padStart(9),
              `${(floorMs / 1000).toFixed(2)} s`.padStart(8),
              `${(temporal / 1000).toFixed(2)} s`.padStart(10),
              `${perStep.toFixed(1)} ms`.padStart(12),
              `${floorPerStep.toFixed(1)} ms`.padStart(11),
              `${(perStep - floorPerStep).toFixed(1)} ms`.padStart(10),
              `${percentile(stepOverheads, 0.5).toFixed(1)} / ${percentile(stepOverheads, 0.95).toFixed(1)} ms`.padStart(
                18,
              ),
              `${((100 * (temporal - bare)) / temporal).toFixed(1)} %`.padStart(9),
              `  ${describeLoad()}`,
            ].join('  '),
          );
          console.log(`          where Temporal's time went, per model call: ${breakdown}`);
          console.log(
            `          the floor's, per model call:                 ${(await historyFigures(client, floorWorkflowId)).breakdown}`,
          );
          console.log(
            `          CPU per model call: researchAgent ${perCall(temporalCpu)}; the floor ${perCall(floorCpu)}`,
          );
        }
      }
    });
  } finally {
    await stack.close();
  }
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  for (const kind of TEMPORALS) await measureOn(kind);
  console.log('');
  console.log(
    `on: dev = ${TEMPORAL_KINDS.dev}, stack = ${TEMPORAL_KINDS.stack} (the in-process worker and the local transcript store on both).`,
  );
  console.log(
    `step p50 / p95: each step through Temporal (a model call scheduled to the next one scheduled, from history; the last to the run's completion) minus the same step of the bare loop, median and 95th percentile of the ${CALLS} steps.`,
  );
  console.log(
    `overhead/step = (Temporal − bare) / ${CALLS} model calls; share = (Temporal − bare) / Temporal wall time. Target at 1,000 ms: at most 5 %.`,
  );
  console.log(
    `floor/step = (floor − bare) / ${CALLS}: the bare loop's model and tool calls as two plain activities per step (temporalFloor), what two workflow tasks and two activities cost here; ours/step = overhead/step − floor/step.`,
  );
}

console.log(
  `Overhead: a ${CALLS}-call scripted run (${CALLS - 1} lookup tool calls, then an answer), bare in-process loop vs Temporal's floor (the same calls as two plain activities per step) vs researchAgent (in-process worker, local transcript store behind the worker's default read cache; workflow interceptors: ${INTERCEPTORS})`,
);
console.log('');
console.log(
  [
    'on'.padEnd(5),
    'latency'.padStart(8),
    'repeat'.padStart(6),
    'bare'.padStart(9),
    'floor'.padStart(8),
    'Temporal'.padStart(10),
    'overhead/step'.padStart(12),
    'floor/step'.padStart(11),
    'ours/step'.padStart(10),
    'step p50 / p95'.padStart(18),
    'share'.padStart(9),
    '  load (1/5/15 min)',
  ].join('  '),
);
main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
