import { resolve } from 'node:path';
import { ConfigurationError } from './configuration-error';
import { PROJECT_ROOT } from './project-root';
import {
  readNumberInRange,
  readPositiveInteger,
  readPositiveNumber,
  readString,
  type Environment,
} from './environment-values';
import { DEFAULT_TASK_QUEUE } from '../core/workflow-types';

/** Settings of a worker process, read by {@link loadWorkerConfig}. */
export interface WorkerConfig {
  /** Task queue the worker polls and clients start runs on. `REACT_AGENT_TASK_QUEUE`; default `'react-agent'`. */
  taskQueue: string;
  /** Activities (model calls, tools) run at once by this worker. `REACT_AGENT_MAX_CONCURRENT_ACTIVITIES`; default 20. */
  maxConcurrentActivities: number;
  /** Workflow tasks processed at once by this worker. `REACT_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS`; default 10. */
  maxConcurrentWorkflowTasks: number;
  /** Seconds running activities get to finish on shutdown. `REACT_AGENT_SHUTDOWN_GRACE_SECONDS`; default 30. */
  shutdownGraceSeconds: number;
  /**
   * How long a workflow task waits for the worker that has the run cached before any worker may
   * take it, in seconds. Short, so a crashed worker delays cancels and recovery little; Temporal's
   * default is 10. `REACT_AGENT_STICKY_QUEUE_TIMEOUT_SECONDS`; default 3.
   */
  stickyQueueTimeoutSeconds: number;
  /**
   * Longest gap, in seconds, between the heartbeats an activity sends to the server (the SDK's
   * `maxHeartbeatThrottleInterval`; its default is 60, capped at 80% of the heartbeat timeout).
   * An activity learns of a cancellation only when a heartbeat reaches the server, so this bounds
   * how long a cancelled model call keeps the model server generating.
   * `REACT_AGENT_HEARTBEAT_THROTTLE_SECONDS`; default 5.
   */
  heartbeatThrottleSeconds: number;
  /** Absolute folder for local state. `REACT_AGENT_DATA_DIR`; default `<projectRoot>/.data`. */
  dataDirectory: string;
  /** Absolute folder of the local transcript store. `REACT_AGENT_TRANSCRIPT_DIR`; default `<dataDirectory>/transcripts`. */
  transcriptDirectory: string;
  /**
   * Memory for the worker's read cache of transcript texts, in MiB (counted at 2 bytes a
   * character); 0 turns the cache off. Blobs are immutable, so the cache is never stale; it saves
   * a run's repeated reads of its conversation from the store. `REACT_AGENT_TRANSCRIPT_CACHE_MB`;
   * default 256.
   */
  transcriptCacheMegabytes: number;
  /**
   * V8 flags set in the worker process before its Workers start, so the SDK's workflow thread
   * (a new V8 isolate, which takes the process's flags when it is created) runs with them: the
   * SDK gives that thread no heap limit of its own, and V8 lets its heap grow with the workflow
   * tasks' garbage before it collects (a young generation of up to 192 MiB by default on a
   * machine with memory to spare; 6 MiB with the default flags), which is much of what a run in
   * flight seems to cost in RSS beyond its live state (docs/figures.md "Worker memory settings"). Flags
   * are process-wide: the worker's main thread, already started, keeps its heap's sizes and
   * takes the flags V8 reads as it runs. `REACT_AGENT_WORKFLOW_V8_FLAGS`, space- or comma-separated
   * `--name` or `--name=value`; `none` for none; default {@link DEFAULT_WORKFLOW_V8_FLAGS}. A flag
   * V8 does not know, or a value it refuses, V8 reports on stderr and ignores. No heap limit by
   * default: V8 aborts the process when a thread reaches its limit, and the SDK sizes its cache of
   * runs from the main thread's limit, not this one.
   */
  workflowV8Flags: string[];
}

export const DEFAULT_MAX_CONCURRENT_ACTIVITIES = 20;
export const DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS = 10;
export const DEFAULT_SHUTDOWN_GRACE_SECONDS = 30;
export const DEFAULT_STICKY_QUEUE_TIMEOUT_SECONDS = 3;
export const DEFAULT_HEARTBEAT_THROTTLE_SECONDS = 5;
export const DEFAULT_TRANSCRIPT_CACHE_MEGABYTES = 256;
/** Default of `REACT_AGENT_WORKFLOW_V8_FLAGS`, chosen by `benchmark:scale` (docs/figures.md). */
export const DEFAULT_WORKFLOW_V8_FLAGS: readonly string[] = ['--max-semi-space-size=2'];
/** Default of `REACT_AGENT_DATA_DIR`. */
export const DEFAULT_DATA_DIRECTORY = resolve(PROJECT_ROOT, '.data');

/**
 * Reads the worker settings from the environment. Relative folders are resolved against the
 * current directory.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable when a number is not positive or a name is malformed.
 */
export function loadWorkerConfig(environment: Environment = process.env): WorkerConfig {
  const taskQueue = readString(environment, 'REACT_AGENT_TASK_QUEUE') ?? DEFAULT_TASK_QUEUE;
  if (/\s/.test(taskQueue)) {
    throw new ConfigurationError(
      'REACT_AGENT_TASK_QUEUE',
      `REACT_AGENT_TASK_QUEUE must not contain whitespace, got ${JSON.stringify(taskQueue)}`,
    );
  }
  const dataDirectory = resolve(readString(environment, 'REACT_AGENT_DATA_DIR') ?? DEFAULT_DATA_DIRECTORY);
  return {
    taskQueue,
    maxConcurrentActivities: readPositiveInteger(
      environment,
      'REACT_AGENT_MAX_CONCURRENT_ACTIVITIES',
      DEFAULT_MAX_CONCURRENT_ACTIVITIES,
    ),
    maxConcurrentWorkflowTasks: readPositiveInteger(
      environment,
      'REACT_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS',
      DEFAULT_MAX_CONCURRENT_WORKFLOW_TASKS,
    ),
    shutdownGraceSeconds: readPositiveNumber(
      environment,
      'REACT_AGENT_SHUTDOWN_GRACE_SECONDS',
      DEFAULT_SHUTDOWN_GRACE_SECONDS,
    ),
    stickyQueueTimeoutSeconds: readPositiveNumber(
      environment,
      'REACT_AGENT_STICKY_QUEUE_TIMEOUT_SECONDS',
      DEFAULT_STICKY_QUEUE_TIMEOUT_SECONDS,
    ),
    heartbeatThrottleSeconds: readPositiveNumber(
      environment,
      'REACT_AGENT_HEARTBEAT_THROTTLE_SECONDS',
      DEFAULT_HEARTBEAT_THROTTLE_SECONDS,
    ),
    dataDirectory,
    transcriptDirectory: resolve(
      readString(environment, 'REACT_AGENT_TRANSCRIPT_DIR') ?? resolve(dataDirectory, 'transcripts'),
    ),
    transcriptCacheMegabytes: readNumberInRange(
      environment,
      'REACT_AGENT_TRANSCRIPT_CACHE_MB',
      DEFAULT_TRANSCRIPT_CACHE_MEGABYTES,
      0,
      1_048_576,
    ),
    workflowV8Flags: readV8Flags(environment, 'REACT_AGENT_WORKFLOW_V8_FLAGS', DEFAULT_WORKFLOW_V8_FLAGS),
  };
}

/**
 * Space- or comma-separated V8 flags (`--name` or `--name=value`, letters, digits, `-` and `_` in
 * the name, no spaces or commas in the value), `none` for none, or the default when unset or blank.
 * @throws ConfigurationError naming the variable and the first word that is not such a flag.
 */
function readV8Flags(environment: Environment, name: string, defaultValue: readonly string[]): string[] {
  const raw = readString(environment, name);
  if (raw === undefined) return [...defaultValue];
  if (raw === 'none') return [];
  const flags = raw.split(/[\s,]+/).filter(Boolean);
  const malformed = flags.find((flag) => !/^--[A-Za-z0-9_-]+(=[^\s,]+)?$/.test(flag));
  if (malformed !== undefined)
    throw new ConfigurationError(
      name,
      `${name} must be space-separated V8 flags like --max-semi-space-size=4 (or none), got ${JSON.stringify(malformed)}`,
    );
  return flags;
}
