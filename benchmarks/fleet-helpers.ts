/**
 * Helpers shared by the many-machines benchmarks (scale, overhead, store): percentiles, the
 * machine's load, worker processes as production runs them, resident memory sampling, and
 * schedule-to-start times read from workflow histories.
 */
import type { Client, WorkflowHandle } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { type NativeConnection, Worker } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { createOpenAIChatModel } from '../activities/model/openai-chat-model';
import { createActivities, ToolRegistry } from '../activities';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { forEachAtMost } from '../src/core/task-slots';
import { lookup } from '../test/fakes/test-tools';
import { UNTRACED_WORKFLOW_INTERCEPTOR_MODULES } from '../src/config/workflow-interceptors';
import { cachedWorkflowBundle } from '../test/integration/support/workflow-bundle';
import { WorkerProcess } from '../test/integration/support/worker-process';

const root = resolve(__dirname, '..');

/** Starts a `researchAgent` run for each id on `taskQueue`, 50 at a time, asking `question(id)`; their handles in order. */
export async function startResearchRuns(
  client: Client,
  taskQueue: string,
  ids: string[],
  question: (workflowId: string) => string,
): Promise<WorkflowHandle[]> {
  const handles: WorkflowHandle[] = [];
  for (let index = 0; index < ids.length; index += 50)
    handles.push(
      ...(await Promise.all(
        ids.slice(index, index + 50).map((workflowId) =>
          client.workflow.start('researchAgent', {
            taskQueue,
            workflowId,
            args: [{ question: question(workflowId) }],
          }),
        ),
      )),
    );
  return handles;
}

/** The value at quantile `q` (0..1) of `values`, nearest rank; NaN for none. */
export function percentile(values: number[], q: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((left, right) => left - right);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] as number;
}

/** `load 1.52 / 1.20 / 0.90 on 2 cores` (1, 5 and 15-minute load averages), printed beside every figure. */
export function describeLoad(): string {
  const [one, five, fifteen] = loadavg().map((value) => value.toFixed(2));
  return `load ${one} / ${five} / ${fifteen} on ${cpus().length} cores`;
}

/**
 * Worker environment variants to compare in one command (`--worker-env`): sets separated by `|`,
 * each a space-separated list of `NAME=VALUE`; `-` (or an empty set) is the worker as configured.
 * `'-|MALLOC_ARENA_MAX=2'` gives two variants: none, then one with that variable.
 */
export function parseWorkerEnvironments(value: string): { label: string; environment: Record<string, string> }[] {
  return value.split('|').map((set) => {
    const assignments = set.trim() === '-' ? [] : set.trim().split(/\s+/).filter(Boolean);
    const environment: Record<string, string> = {};
    for (const assignment of assignments) {
      const equals = assignment.indexOf('=');
      if (equals <= 0) throw new Error(`--worker-env: ${JSON.stringify(assignment)} is not NAME=VALUE`);
      environment[assignment.slice(0, equals)] = assignment.slice(equals + 1);
    }
    return { label: assignments.join(' ') || 'as configured', environment };
  });
}

/** Resident set size of a process in bytes (Linux /proc), or 0 once it is gone. */
export function residentBytes(pid: number): number {
  try {
    const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Samples the resident memory of some processes every `intervalMs` and keeps each one's peak. */
export class ResidentMemorySampler {
  readonly peaks = new Map<number, number>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly pids: number[],
    intervalMs = 250,
  ) {
    this.sample();
    this.timer = setInterval(() => this.sample(), intervalMs);
  }

  private sample(): void {
    for (const pid of this.pids) this.peaks.set(pid, Math.max(this.peaks.get(pid) ?? 0, residentBytes(pid)));
  }

  /** Stops sampling; returns the sum of the peaks. */
  stop(): number {
    clearInterval(this.timer);
    this.sample();
    return [...this.peaks.values()].reduce((total, value) => total + value, 0);
  }
}

/** What a benchmark worker process needs besides its queues: the server, the model, the test tools, a transcript directory. */
export async function workerEnvironment(options: {
  temporalAddress: string;
  modelBaseUrl: string;
  directory: string;
  taskQueue: string;
}): Promise<Record<string, string>> {
  return {
    TEMPORAL_ADDRESS: options.temporalAddress,
    TEMPORAL_NAMESPACE: 'default',
    OPENAI_BASE_URL: options.modelBaseUrl,
    OPENAI_API_KEY: 'sk-benchmark',
    REACT_AGENT_MODEL: 'scripted-model',
    REACT_AGENT_TASK_QUEUE: options.taskQueue,
    REACT_AGENT_TRANSCRIPT_DIR: join(options.directory, 'transcripts'),
    REACT_AGENT_DATA_DIR: options.directory,
    REACT_AGENT_TOOL_MODULES: join(root, 'test/fakes/test-tools.ts'),
    REACT_AGENT_TOOLS: 'none',
    // What a worker that does not trace runs (it picks dist/workflow-bundle-untraced.js): no span
    // context in the activities' headers, no spans.
    REACT_AGENT_WORKFLOW_BUNDLE: await cachedWorkflowBundle(undefined, UNTRACED_WORKFLOW_INTERCEPTOR_MODULES),
    REACT_AGENT_TEST_TOOL_LOG: join(options.directory, 'tools.log'),
    REACT_AGENT_SHUTDOWN_GRACE_SECONDS: '1',
  };
}

/** Starts a real worker (worker/main.ts) in its own process and resolves once it polls. */
export async function startWorkerProcess(environment: Record<string, string>): Promise<WorkerProcess> {
  return WorkerProcess.start(environment, 120_000);
}

/** Schedule-to-start times of one activity type over some workflows, read from their histories. */
export interface ScheduleToStart {
  /** Milliseconds from ActivityTaskScheduled to ActivityTaskStarted of the activities started at their first attempt. */
  firstAttemptMs: number[];
  /** Activities whose recorded start is a retry (their scheduled-to-started time includes the failed attempts and the backoff). */
  retried: number;
  /** Why those retries happened: last failure message → count. */
  retryCauses: Map<string, number>;
  /** Each retried activity: its workflow, activity id, the attempt recorded started, by which worker, and the last failure. */
  retriedActivities: { workflowId: string; activityId: string; attempt: number; identity: string; cause: string }[];
  /** The workflows' workflow tasks: started, timed out by kind, and started by another worker than the one before (a replay there). */
  workflowTasks: {
    started: number;
    scheduleToStartTimeouts: number;
    startToCloseTimeouts: number;
    movedToAnotherWorker: number;
  };
}

/** Schedule-to-start of the given activity type over the given workflows (ActivityTaskScheduled → ActivityTaskStarted event times). */
export async function scheduleToStart(
  client: Client,
  workflowIds: string[],
  activityType: string,
  parallel = 16,
): Promise<ScheduleToStart> {
  const figures: ScheduleToStart = {
    firstAttemptMs: [],
    retried: 0,
    retryCauses: new Map(),
    retriedActivities: [],
    workflowTasks: { started: 0, scheduleToStartTimeouts: 0, startToCloseTimeouts: 0, movedToAnotherWorker: 0 },
  };
  const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
  await forEachAtMost(workflowIds, parallel, async (id) => {
    const history = await client.workflow.getHandle(id).fetchHistory();
    const scheduled = new Map<string, number>();
    const activityIds = new Map<string, string>();
    let lastWorker: string | undefined;
    for (const event of history.events ?? []) {
      const workflowTaskStarted = event.workflowTaskStartedEventAttributes;
      if (workflowTaskStarted) {
        figures.workflowTasks.started += 1;
        if (lastWorker !== undefined && workflowTaskStarted.identity !== lastWorker)
          figures.workflowTasks.movedToAnotherWorker += 1;
        lastWorker = workflowTaskStarted.identity ?? '';
      }
      const timeoutType = event.workflowTaskTimedOutEventAttributes?.timeoutType;
      if (timeoutType === temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START)
        figures.workflowTasks.scheduleToStartTimeouts += 1;
      if (timeoutType === temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_START_TO_CLOSE)
        figures.workflowTasks.startToCloseTimeouts += 1;
      const attributes = event.activityTaskScheduledEventAttributes;
      if (attributes && attributes.activityType?.name === activityType) {
        scheduled.set(String(event.eventId), millis(event.eventTime));
        activityIds.set(String(event.eventId), attributes.activityId ?? '');
      }
      const started = event.activityTaskStartedEventAttributes;
      const at = started ? scheduled.get(String(started.scheduledEventId)) : undefined;
      if (!started || at === undefined) continue;
      if ((started.attempt ?? 1) > 1) {
        figures.retried += 1;
        const cause = started.lastFailure?.message ?? 'unknown';
        figures.retryCauses.set(cause, (figures.retryCauses.get(cause) ?? 0) + 1);
        const activityId = activityIds.get(String(started.scheduledEventId)) ?? '';
        figures.retriedActivities.push({
          workflowId: id,
          activityId,
          attempt: started.attempt ?? 1,
          identity: started.identity ?? '',
          cause,
        });
      } else {
        figures.firstAttemptMs.push(millis(event.eventTime) - at);
      }
    }
  });
  return figures;
}

/**
 * An in-process Worker running researchAgent with the real activities against the scripted model
 * server, the test `lookup` tool and the given transcript store (what the overhead and store
 * benchmarks measure through Temporal).
 */
export async function createScriptedWorker(options: {
  connection: NativeConnection;
  taskQueue: string;
  modelBaseUrl: string;
  store: TranscriptStore;
  /** Activities beside the agent's (e.g. the floor's); default none. */
  moreActivities?: object;
  /** Default workflows/ (researchAgent and the others); benchmark-workflows.ts adds the baselines. */
  workflowsPath?: string;
  /**
   * The workflow interceptor modules bundled with them (src/config/workflow-interceptors.ts: the
   * traced or the untraced worker's); default none. The traced ones export through a no-op sink.
   */
  workflowInterceptorModules?: readonly string[];
}): Promise<Worker> {
  const chatModel = createOpenAIChatModel({ baseUrl: options.modelBaseUrl, apiKey: 'benchmark' });
  return Worker.create({
    connection: options.connection,
    taskQueue: options.taskQueue,
    workflowsPath: options.workflowsPath ?? require.resolve('../workflows'),
    interceptors: { workflowModules: [...(options.workflowInterceptorModules ?? [])] },
    // What a worker without an OTLP endpoint gives a traced bundle (worker/tracing.ts).
    sinks: { exporter: { export: { fn: () => undefined, callDuringReplay: false } } },
    activities: {
      ...options.moreActivities,
      ...createActivities({
        chatModel,
        store: options.store,
        tools: new ToolRegistry([lookup]),
        modelDefaults: { model: 'scripted-model', temperature: 0.6, topP: 0.95, maxOutputTokens: 1000 },
        modelActivity: { startToCloseSeconds: 120, heartbeatSeconds: 30, maxAttempts: 3 },
      }),
    },
  });
}

/** The scripted run of the overhead and store benchmarks: `calls - 1` lookup calls, then an answer, each after `latencyMs()`. */
export function lookupThenAnswer(calls: number, latencyMs: () => number = () => 0) {
  return (call: number) =>
    call >= calls
      ? { content: '<think>Enough.</think>\n<answer>BYD sold more.</answer>', delayBeforeFirstChunkMs: latencyMs() }
      : {
          content: `<think>Step ${call}.</think>\n<tool_call>\n{"name": "lookup", "arguments": {"query": "sales step ${call}"}}\n</tool_call>`,
          delayBeforeFirstChunkMs: latencyMs(),
        };
}

/** Reads `--name value` from the command line, else `fallback`. */
export function argument(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index !== -1 && process.argv[index + 1] !== undefined ? (process.argv[index + 1] as string) : fallback;
}
