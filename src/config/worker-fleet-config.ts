import { ConfigurationError } from './configuration-error';
import { readPositiveInteger, readPositiveNumber, readString, type Environment } from './environment-values';

/**
 * What a worker process runs. `workflows`: workflow tasks and the bookkeeping activities they
 * schedule on the main queue (startConversation, finishTranscript, compressContext, the batch
 * activities); `model`: `callModel`; `tools`: the tool activities; `all`: everything.
 */
export type WorkerRole = 'workflows' | 'model' | 'tools' | 'all';

export const WORKER_ROLES: readonly WorkerRole[] = ['workflows', 'model', 'tools', 'all'];
export const DEFAULT_WORKER_ROLE: WorkerRole = 'all';
export const DEFAULT_MAX_CONCURRENT_MODEL_CALLS = 200;
export const DEFAULT_MAX_CONCURRENT_TOOL_CALLS = 8;

/** Roles and task queues of a fleet, read by {@link loadWorkerFleetConfig}. */
export interface WorkerFleetConfig {
  /** What this process runs. `REACT_AGENT_WORKER_ROLE`; default `'all'`. */
  role: WorkerRole;
  /** The main queue: runs, workflow tasks and bookkeeping activities. `REACT_AGENT_TASK_QUEUE`; default `'react-agent'`. */
  taskQueue: string;
  /** Queue of the model calls. `REACT_AGENT_MODEL_TASK_QUEUE`; default the main queue. */
  modelTaskQueue: string;
  /** Queue of the tool calls (a tool's own `activity.taskQueue` wins). `REACT_AGENT_TOOL_TASK_QUEUE`; default the main queue. */
  toolTaskQueue: string;
  /**
   * Model calls run at once by the worker of a queue that carries only model calls (they wait on
   * HTTP, so hundreds fit). `REACT_AGENT_MAX_CONCURRENT_MODEL_CALLS`; default 200.
   */
  maxConcurrentModelCalls: number;
  /**
   * Tool calls run at once by the worker of a queue that carries only tool calls (python
   * sandboxes burn CPU). `REACT_AGENT_MAX_CONCURRENT_TOOL_CALLS`; default 8.
   */
  maxConcurrentToolCalls: number;
  /**
   * Fleet-wide limit on model calls started per second: Temporal's task-queue rate limit
   * (`maxTaskQueueActivitiesPerSecond`) set by the workers polling the model queue. On a queue
   * shared with other activities it limits them all. `REACT_AGENT_MODEL_CALLS_PER_SECOND`;
   * default unset (no limit).
   */
  modelCallsPerSecond?: number;
}

/** One Worker of a process: the queue it polls and what it runs there. */
export interface WorkerQueuePlan {
  taskQueue: string;
  /** Workflow tasks and the bookkeeping activities (everything but `callModel` and the tools). */
  workflows: boolean;
  model: boolean;
  tools: boolean;
  /** `maxConcurrentActivityTaskExecutions` of this Worker. */
  maxConcurrentActivities: number;
  /** `maxTaskQueueActivitiesPerSecond` of this Worker, when it polls the rate-limited model queue. */
  maxActivitiesPerSecond?: number;
}

function readQueue(environment: Environment, name: string, fallback: string): string {
  const queue = readString(environment, name) ?? fallback;
  if (/\s/.test(queue))
    throw new ConfigurationError(name, `${name} must not contain whitespace, got ${JSON.stringify(queue)}`);
  return queue;
}

/**
 * Reads the worker's role, the model and tool queues and their slot sizes. A role other than
 * `all` must have its queue to itself (else a worker would be handed tasks it does not run).
 *
 * @param environment Variables to read; default `process.env`.
 * @param taskQueue The main queue (`loadWorkerConfig().taskQueue`); default `REACT_AGENT_TASK_QUEUE` or `'react-agent'`.
 * @throws ConfigurationError naming the variable: an unknown role, a queue with whitespace, a
 *   non-positive number, or a single role whose queue is shared with another kind.
 */
export function loadWorkerFleetConfig(environment: Environment = process.env, taskQueue?: string): WorkerFleetConfig {
  const main = taskQueue ?? readQueue(environment, 'REACT_AGENT_TASK_QUEUE', 'react-agent');
  const rawRole = readString(environment, 'REACT_AGENT_WORKER_ROLE') ?? DEFAULT_WORKER_ROLE;
  if (!(WORKER_ROLES as readonly string[]).includes(rawRole)) {
    throw new ConfigurationError(
      'REACT_AGENT_WORKER_ROLE',
      `REACT_AGENT_WORKER_ROLE must be one of ${WORKER_ROLES.join(', ')}, got ${JSON.stringify(rawRole)}`,
    );
  }
  const role = rawRole as WorkerRole;
  const modelTaskQueue = readQueue(environment, 'REACT_AGENT_MODEL_TASK_QUEUE', main);
  const toolTaskQueue = readQueue(environment, 'REACT_AGENT_TOOL_TASK_QUEUE', main);
  const rate = readString(environment, 'REACT_AGENT_MODEL_CALLS_PER_SECOND');

  const queues = { workflows: main, model: modelTaskQueue, tools: toolTaskQueue };
  const variables = {
    workflows: 'REACT_AGENT_TASK_QUEUE',
    model: 'REACT_AGENT_MODEL_TASK_QUEUE',
    tools: 'REACT_AGENT_TOOL_TASK_QUEUE',
  } as const;
  if (role !== 'all') {
    for (const other of ['workflows', 'model', 'tools'] as const) {
      if (other !== role && queues[other] === queues[role]) {
        const variable = role === 'workflows' ? variables[other] : variables[role];
        throw new ConfigurationError(
          variable,
          `REACT_AGENT_WORKER_ROLE=${role} needs its own task queue, but ${variables[role]} and ${variables[other]} are both "${queues[role]}"; ` +
            `set ${variable} to a queue of its own, or use REACT_AGENT_WORKER_ROLE=all`,
        );
      }
    }
  }
  return {
    role,
    taskQueue: main,
    modelTaskQueue,
    toolTaskQueue,
    maxConcurrentModelCalls: readPositiveInteger(
      environment,
      'REACT_AGENT_MAX_CONCURRENT_MODEL_CALLS',
      DEFAULT_MAX_CONCURRENT_MODEL_CALLS,
    ),
    maxConcurrentToolCalls: readPositiveInteger(
      environment,
      'REACT_AGENT_MAX_CONCURRENT_TOOL_CALLS',
      DEFAULT_MAX_CONCURRENT_TOOL_CALLS,
    ),
    ...(rate === undefined
      ? {}
      : { modelCallsPerSecond: readPositiveNumber(environment, 'REACT_AGENT_MODEL_CALLS_PER_SECOND', 1) }),
  };
}

/**
 * The Workers a process runs: one per distinct queue its role polls. A queue that carries only
 * model calls gets `maxConcurrentModelCalls` slots, only tool calls `maxConcurrentToolCalls`;
 * any other (the main queue, or model and tools sharing one) gets `maxConcurrentActivities`
 * (`REACT_AGENT_MAX_CONCURRENT_ACTIVITIES`), so the single-queue default behaves as before.
 */
export function planWorkerQueues(fleet: WorkerFleetConfig, maxConcurrentActivities: number): WorkerQueuePlan[] {
  const kinds = (['workflows', 'model', 'tools'] as const).filter(
    (kind) => fleet.role === 'all' || fleet.role === kind,
  );
  const queueOf = { workflows: fleet.taskQueue, model: fleet.modelTaskQueue, tools: fleet.toolTaskQueue };
  const plans = new Map<string, WorkerQueuePlan>();
  for (const kind of kinds) {
    const taskQueue = queueOf[kind];
    const plan = plans.get(taskQueue) ?? {
      taskQueue,
      workflows: false,
      model: false,
      tools: false,
      maxConcurrentActivities,
    };
    plan[kind] = true;
    plans.set(taskQueue, plan);
  }
  return [...plans.values()].map((plan) => {
    const slots =
      plan.model && !plan.workflows && !plan.tools
        ? fleet.maxConcurrentModelCalls
        : plan.tools && !plan.workflows && !plan.model
          ? fleet.maxConcurrentToolCalls
          : maxConcurrentActivities;
    const rate =
      plan.model && fleet.modelCallsPerSecond !== undefined
        ? { maxActivitiesPerSecond: fleet.modelCallsPerSecond }
        : {};
    return { ...plan, maxConcurrentActivities: slots, ...rate };
  });
}
