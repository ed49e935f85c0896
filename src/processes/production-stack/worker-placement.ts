import type { WorkerFleet } from '../../config/stack-topology';

export type WorkerRole = WorkerFleet['role'];

/** A worker process of the stack: its role and, with `--machines`, the machine it runs on. */
export interface StackWorker {
  /** `worker-<role>-<n>`; also the name of its log and data folder. */
  name: string;
  role: WorkerRole;
  /** The worker machine (`machine-<n>`) it runs in; on the host when absent. */
  machine?: string;
}

/**
 * The worker processes for `counts`, fleet by fleet in `roles`' order (the topology's), dealt to
 * `machines` in turn like cards: worker k (from 0) goes to machine k mod N. So a role with r
 * workers is on min(r, N) machines, and cutting one machine off leaves every role that has
 * another worker running elsewhere. With no machines every worker is on the host.
 */
export function placeWorkers(
  roles: readonly WorkerRole[],
  counts: Partial<Record<WorkerRole, number>>,
  machines: readonly string[],
): StackWorker[] {
  const workers: StackWorker[] = [];
  for (const role of roles) {
    for (let index = 1; index <= (counts[role] ?? 0); index += 1) {
      const machine = machines.length > 0 ? machines[workers.length % machines.length] : undefined;
      workers.push({ name: `worker-${role}-${index}`, role, ...(machine !== undefined ? { machine } : {}) });
    }
  }
  return workers;
}

/** How many workers of each role there are. */
export function workerCounts(workers: readonly StackWorker[]): Partial<Record<WorkerRole, number>> {
  const counts: Partial<Record<WorkerRole, number>> = {};
  for (const worker of workers) counts[worker.role] = (counts[worker.role] ?? 0) + 1;
  return counts;
}

/**
 * The workers `up` is to have, or undefined to keep the ones there are. They are decided anew when
 * `counts` are given, the machines changed, or there are none yet: `counts`, else as many of each
 * role as there are now, else each fleet's replicas, dealt to `machines` ({@link placeWorkers}).
 */
export function workersWanted(
  current: readonly StackWorker[],
  request: {
    counts: Partial<Record<WorkerRole, number>> | undefined;
    machinesChanged: boolean;
    fleets: readonly Pick<WorkerFleet, 'role' | 'replicas'>[];
    machines: readonly string[];
  },
): StackWorker[] | undefined {
  if (request.counts === undefined && !request.machinesChanged && current.length > 0) return undefined;
  const counts =
    request.counts ??
    (current.length > 0
      ? workerCounts(current)
      : Object.fromEntries(request.fleets.map((fleet) => [fleet.role, fleet.replicas])));
  return placeWorkers(
    request.fleets.map((fleet) => fleet.role),
    counts,
    request.machines,
  );
}
