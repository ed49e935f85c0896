/** Where a component says what it did (`Temporal history: pid 4242 on 127.0.0.1:7234 (812 ms)`): `stack up`'s stderr. */
export type StackLog = (line: string) => void;

/** Says nothing: for a start or stop whose caller reports it itself. */
export const quietly: StackLog = () => undefined;

/** One row of `stack status`. */
export interface StackProcessStatus {
  name: string;
  pid?: number;
  running: boolean;
  /** What answers: `ready`, or what does not. */
  health: string;
  address?: string;
  /** The worker machine a worker runs on (`machine-<n>`). */
  machine?: string;
}

/**
 * One service of the production stack — PostgreSQL, one of Temporal's four services, SeaweedFS,
 * the Web UI, a worker machine with its relay, a worker — as the stack composes them: `up` starts
 * them in order, `status` asks each, `down` stops them in the reverse order. Its process outlives
 * the command (it is recorded in the stack's folder), so every method works from a later command.
 */
export interface StackComponent {
  /** Its name in `stack status` and in stack.json (`postgresql`, `temporal-history`, `machine-2`, `worker-model-1`). */
  readonly name: string;
  /** Starts it unless it runs, and resolves once it is ready; a StackError or NotReadyError says why not. */
  start(log: StackLog): Promise<void>;
  /** One look, no waiting: undefined when it answers as `start` waits for, else what does not. */
  ready(): Promise<string | undefined>;
  /** Stops it when it runs (gracefully, then by force) and resolves when it is gone; it keeps its data. */
  stop(log: StackLog): Promise<void>;
  /** Its row of `stack status`; undefined when it has none (the Web UI, never started). */
  status(): Promise<StackProcessStatus | undefined>;
}
