import type { ResearchRunResult } from '../../src/core/run-result';
import type { ChaosOptions } from './chaos-options';
import type { CancelVia, RunPlan } from './chaos-scenario';
import { percentile } from './invariants';

/** What became of one planned run. */
export interface ChaosRunOutcome {
  plan: RunPlan;
  startedAt?: number;
  /** `completed`: the workflow returned a result; `failed`: it closed without one; `not-terminal`: still open at the deadline. */
  status: 'completed' | 'failed' | 'not-terminal' | 'not-started';
  result?: ResearchRunResult;
  failure?: string;
  cancel?: { via: CancelVia; requestedAt: number };
  violations: string[];
}

export interface WorkerKillRecord {
  pid: number;
  at: number;
  /** Runs that had an activity running on the killed worker. */
  affected: string[];
  /** Per affected run with a later completed activity: ms from the kill to it. */
  recoveryMs: number[];
}

export interface ChaosReport {
  options: ChaosOptions;
  /** The temp dir (kept only with --keep). */
  directory: string;
  wallMs: number;
  runs: ChaosRunOutcome[];
  workerKills: WorkerKillRecord[];
  serverRestarts: Array<{ killedAt: number; downMs: number }>;
  cancels: { client: number; cli: number; missed: number };
  terminations: Record<string, number>;
  modelRequests: { total: number; completed: number; resentAfterCrash: number };
  /** Model calls sent again because a crash lost the completed reply before history recorded it (allowed). */
  resent: Array<{ workflowId: string; modelCall: number; crash: 'worker kill' | 'server kill' }>;
  toolAttempts: { started: number; retried: number; interruptedByKill: number };
  recovery: { samples: number[]; p50?: number; p95?: number; max?: number; affectedWithoutLaterActivity: number };
  /** Every violation, prefixed with its run's workflow id. Must be empty. */
  violations: string[];
}

export function summarizeRecovery(kills: readonly WorkerKillRecord[]): ChaosReport['recovery'] {
  const samples = kills.flatMap((kill) => kill.recoveryMs);
  const affected = kills.reduce((total, kill) => total + kill.affected.length, 0);
  const p50 = percentile(samples, 50);
  const p95 = percentile(samples, 95);
  const max = percentile(samples, 100);
  return {
    samples,
    ...(p50 !== undefined ? { p50 } : {}),
    ...(p95 !== undefined ? { p95 } : {}),
    ...(max !== undefined ? { max } : {}),
    affectedWithoutLaterActivity: affected - samples.length,
  };
}

const seconds = (ms: number | undefined) => (ms === undefined ? 'n/a' : `${(ms / 1000).toFixed(1)} s`);

/** The table the chaos command prints. */
export function formatChaosReport(report: ChaosReport): string {
  const { options } = report;
  const protocols = report.runs.reduce<Record<string, number>>(
    (counts, run) => ({ ...counts, [run.plan.protocol]: (counts[run.plan.protocol] ?? 0) + 1 }),
    {},
  );
  const terminal = report.runs.filter((run) => run.status === 'completed').length;
  const affected = report.workerKills.reduce((total, kill) => total + kill.affected.length, 0);
  const rows: Array<[string, string]> = [
    [
      'runs',
      `${report.runs.length} (${Object.entries(protocols)
        .map(([name, count]) => `${name} ${count}`)
        .join(', ')}); terminal ${terminal}/${report.runs.length}`,
    ],
    ['workers', `${options.workers} processes`],
    [
      'worker kills (SIGKILL + restart)',
      `${report.workerKills.length} (runs with an activity on the killed worker: ${affected})`,
    ],
    [
      'server restarts (SIGKILL + restart)',
      `${report.serverRestarts.length} (down ${report.serverRestarts.map((restart) => seconds(restart.downMs)).join(', ') || '-'})`,
    ],
    [
      'cancels (client / CLI)',
      `${report.cancels.client + report.cancels.cli} (${report.cancels.client} / ${report.cancels.cli})${report.cancels.missed ? `; ${report.cancels.missed} found no run in flight` : ''}`,
    ],
    [
      'terminations',
      Object.entries(report.terminations)
        .sort()
        .map(([kind, count]) => `${kind} ${count}`)
        .join(', ') || '-',
    ],
    [
      'model requests',
      `${report.modelRequests.total}, ${report.modelRequests.completed} completed; re-sent after a crash lost the reply: ${report.modelRequests.resentAfterCrash}`,
    ],
    [
      'tool attempts',
      `${report.toolAttempts.started} started, ${report.toolAttempts.retried} were retries, ${report.toolAttempts.interruptedByKill} cut off by a kill`,
    ],
    [
      'recovery after a worker kill',
      `p50 ${seconds(report.recovery.p50)}, p95 ${seconds(report.recovery.p95)}, max ${seconds(report.recovery.max)} (n=${report.recovery.samples.length}${report.recovery.affectedWithoutLaterActivity ? `, ${report.recovery.affectedWithoutLaterActivity} ended with no later activity` : ''})`,
    ],
    ['invariant violations', String(report.violations.length)],
    ['wall time', seconds(report.wallMs)],
  ];
  const width = Math.max(...rows.map(([label]) => label.length));
  const lines = [
    `Chaos run: seed ${options.seed}, ${options.runs} runs over ${options.spreadSeconds} s, ${options.workers} workers`,
    ...rows.map(([label, value]) => `  ${label.padEnd(width)}  ${value}`),
  ];
  if (report.resent.length) {
    lines.push(
      '',
      'Model calls sent again after a crash lost the completed reply before history recorded it (allowed):',
    );
    lines.push(
      ...report.resent.map((entry) => `  - ${entry.workflowId} model call ${entry.modelCall} (${entry.crash})`),
    );
  }
  if (report.violations.length)
    lines.push('', 'Violations:', ...report.violations.map((violation) => `  - ${violation}`));
  return lines.join('\n');
}
