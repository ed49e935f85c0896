import { STACK_TOPOLOGY } from '../../config/stack-topology';
import { loopbackPorts } from './machine-environment';
import type { StackWorker } from './worker-placement';

/** What the stack tells every worker, besides its role's settings. */
export interface StackWorkerSettings {
  /** The environment given at `up` (the model server, tools), kept in stack.json. */
  given: Readonly<Record<string, string>>;
  /** TEMPORAL_ADDRESS: the frontend as seen from the host. */
  temporalAddress: string;
  /** The S3 store's variables (seaweed-component.ts's `s3Environment`). */
  s3: Readonly<Record<string, string>>;
  /** The worker's own data folder. */
  dataDirectory: (worker: StackWorker) => string;
}

/**
 * The environment of a stack worker as seen from the host, later entries winning: what `up` was
 * given, the topology's queues, the role's fleet settings, the role, Temporal, the S3 store and
 * the worker's own data folder.
 */
export function stackWorkerEnvironment(worker: StackWorker, settings: StackWorkerSettings): Record<string, string> {
  const fleet = STACK_TOPOLOGY.workers.fleets.find((candidate) => candidate.role === worker.role);
  return {
    ...settings.given,
    ...STACK_TOPOLOGY.workers.environment,
    ...(fleet?.environment ?? {}),
    REACT_AGENT_WORKER_ROLE: worker.role,
    TEMPORAL_ADDRESS: settings.temporalAddress,
    ...settings.s3,
    REACT_AGENT_DATA_DIR: settings.dataDirectory(worker),
  };
}

/**
 * The ports a machine's relay forwards: every loopback port a worker of any role is given in
 * `environmentOf` (its whole environment: Temporal's frontend, S3, a model server on loopback),
 * ascending, each once.
 */
export function portsToRelay(
  environmentOf: (worker: StackWorker) => Readonly<Record<string, string | undefined>>,
): number[] {
  const ports = STACK_TOPOLOGY.workers.fleets.flatMap((fleet) =>
    loopbackPorts(environmentOf({ name: `worker-${fleet.role}-1`, role: fleet.role })),
  );
  return [...new Set(ports)].sort((a, b) => a - b);
}
