/**
 * What a worker process gets in its environment beyond what it is given, for its memory (issue 34;
 * docs/figures.md "What a run in flight costs the worker"): settings read when the process starts,
 * which the worker itself cannot change once it runs. Each applies only where the environment does
 * not say otherwise.
 */

/**
 * glibc's limit on its malloc arenas in the worker. By default glibc gives each thread that
 * allocates its own arena (up to 8 per core), and the Temporal SDK's native core and Node's own
 * threads allocate from many; memory freed in one arena is not reused by another, so a worker's
 * RSS outside the V8 heaps grew by 0.1–0.2 MiB per run in flight more than with 2. Set
 * `MALLOC_ARENA_MAX` to another number to override; an empty value leaves glibc's default.
 * Other C libraries (musl) ignore it.
 */
export const WORKER_MALLOC_ARENA_MAX = '2';

/**
 * The largest semi-space of the worker's main thread's young generation, in MiB (V8's default on
 * a 64-bit machine with memory to spare is 64: a young generation of up to 192 MiB, mostly garbage
 * between scavenges; 12 MiB with 4). The main thread runs the activities; the workflow thread's own size is
 * `REACT_AGENT_WORKFLOW_V8_FLAGS`. A `--max-semi-space-size` in `NODE_OPTIONS` overrides it (0 for
 * V8's default).
 */
export const WORKER_MAIN_THREAD_MAX_SEMI_SPACE_MB = 4;

/**
 * The environment to start a worker process (`worker/main.ts`) with: `environment` with
 * `MALLOC_ARENA_MAX` ({@link WORKER_MALLOC_ARENA_MAX}) unless it sets one, and
 * `--max-semi-space-size` ({@link WORKER_MAIN_THREAD_MAX_SEMI_SPACE_MB}) before its `NODE_OPTIONS`
 * unless they name one. Every way this project starts a worker uses it: `react-agent worker` (and
 * `npm run worker`, the compose file's workers), the CLI's child worker, the production stack's
 * workers, the tests' and benchmarks' worker processes.
 */
export function workerProcessEnvironment(environment: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const nodeOptions = environment.NODE_OPTIONS ?? '';
  return {
    ...environment,
    MALLOC_ARENA_MAX: environment.MALLOC_ARENA_MAX ?? WORKER_MALLOC_ARENA_MAX,
    NODE_OPTIONS: /(^|\s)--max-semi-space-size[=\s]/.test(nodeOptions)
      ? nodeOptions
      : `--max-semi-space-size=${WORKER_MAIN_THREAD_MAX_SEMI_SPACE_MB}${nodeOptions ? ` ${nodeOptions}` : ''}`,
  };
}
