import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU time of processes and their descendants, from Linux's /proc, for the benchmarks' "CPU per
 * model call" columns. A group's time is the user and system time of its root processes, of
 * their children that have exited and been waited for (`cutime`/`cstime`, how PostgreSQL's ended
 * backends are counted), and of every live descendant. Take a {@link CpuSnapshot} before and after
 * the measured window and subtract.
 */

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux this runs on (getconf CLK_TCK)

interface ProcessTimes {
  parent: number;
  /** utime + stime, in ticks. */
  own: number;
  /** cutime + cstime: waited-for children, in ticks. */
  children: number;
}

function readTimes(pid: number): ProcessTimes | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces; the fields after its closing parenthesis are fixed.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // After the name: state(3) ppid(4) … utime(14) stime(15) cutime(16) cstime(17), so index = field − 3.
    return {
      parent: Number(fields[1]),
      own: Number(fields[11]) + Number(fields[12]),
      children: Number(fields[13]) + Number(fields[14]),
    };
  } catch {
    return undefined; // gone
  }
}

function allProcesses(): Map<number, ProcessTimes> {
  const processes = new Map<number, ProcessTimes>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const times = readTimes(Number(entry));
    if (times) processes.set(Number(entry), times);
  }
  return processes;
}

/** CPU seconds used so far by each named group of processes (roots with their descendants). */
export type CpuSnapshot = Record<string, number>;

/** Reads the CPU seconds of each group now: `{ workers: [pid, pid], PostgreSQL: [postmaster] }`. */
export function cpuSnapshot(groups: Record<string, readonly number[]>): CpuSnapshot {
  const processes = allProcesses();
  const childrenOf = new Map<number, number[]>();
  for (const [pid, times] of processes) childrenOf.set(times.parent, [...(childrenOf.get(times.parent) ?? []), pid]);
  const snapshot: CpuSnapshot = {};
  for (const [name, roots] of Object.entries(groups)) {
    let ticks = 0;
    const seen = new Set<number>();
    const pending = roots.filter((pid) => processes.has(pid));
    for (const root of pending) ticks += processes.get(root)?.children ?? 0;
    for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
      if (seen.has(pid)) continue;
      seen.add(pid);
      ticks += processes.get(pid)?.own ?? 0;
      pending.push(...(childrenOf.get(pid) ?? []));
    }
    snapshot[name] = ticks / TICKS_PER_SECOND;
  }
  return snapshot;
}

/** CPU seconds each group used between two snapshots. */
export function cpuBetween(before: CpuSnapshot, after: CpuSnapshot): CpuSnapshot {
  return Object.fromEntries(
    Object.entries(after).map(([name, seconds]) => [name, Math.max(0, seconds - (before[name] ?? 0))]),
  );
}
