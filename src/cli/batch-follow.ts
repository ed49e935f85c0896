import { WorkflowFailedError, type Client } from '@temporalio/client';
import type { BatchSummary } from '../core/batch-contract';
import { describeCost, formatUsd } from '../core/cost-figures';
import { batchProgressQuery } from '../core/batch-messages';
import { estimateRemainingMs, runsPerMinute, type BatchProgress } from '../core/batch-progress';
import { TERMINATIONS, type Termination } from '../core/termination';
import type { ResearchBatchWorkflow } from '../core/workflow-types';
import { formatDuration } from './schedule-spec';

/**
 * Following a batch: a progress bar redrawn in place on a terminal, a plain line every few
 * seconds otherwise, until the batch ends; then its summary.
 */

function terminationCounts(done: Partial<Record<Termination, number>>): string {
  const parts = TERMINATIONS.filter((termination) => (done[termination] ?? 0) > 0).map(
    (termination) => `${termination} ${done[termination]}`,
  );
  return parts.length ? parts.join(', ') : 'none yet';
}

/** What the batch's runs that returned cost so far; undefined when none had a price. */
function costSoFar(progress: BatchProgress): number | undefined {
  const costs = progress.perRollout.flatMap((rollout) => (rollout.costUsd !== undefined ? [rollout.costUsd] : []));
  return costs.length ? costs.reduce((total, cost) => total + cost, 0) : undefined;
}

/** The ETA from the completion rate so far, measured with this clock (the batch's own answer is as of its last step). */
export function remainingMsAt(progress: BatchProgress, now: number): number | undefined {
  const finished = progress.totals.done + progress.totals.failed - progress.totals.kept;
  return estimateRemainingMs(
    finished,
    progress.totals.queued + progress.totals.running,
    now - Date.parse(progress.startedAt),
  );
}

/** One line: `[#######-------] 24/40 · running 4 · answer 20, error 4 · 12.5 runs/min · ETA 1m 17s`. */
export function renderBatchProgress(progress: BatchProgress, now: number, barWidth = 24): string {
  const { totals } = progress;
  const ended = totals.done + totals.failed;
  const fraction = totals.pairs === 0 ? 1 : ended / totals.pairs;
  const filled = Math.min(barWidth, Math.round(fraction * barWidth));
  const done: Partial<Record<Termination, number>> = {};
  for (const rollout of progress.perRollout)
    for (const [termination, count] of Object.entries(rollout.done))
      done[termination as Termination] = (done[termination as Termination] ?? 0) + (count ?? 0);
  const rate = runsPerMinute(ended - totals.kept, now - Date.parse(progress.startedAt));
  const eta = remainingMsAt(progress, now);
  return [
    `[${'#'.repeat(filled)}${'-'.repeat(barWidth - filled)}] ${ended}/${totals.pairs}`,
    progress.state === 'running' ? `running ${totals.running}` : progress.state,
    terminationCounts(done),
    ...(totals.failed ? [`failed ${totals.failed}`] : []),
    ...(totals.kept ? [`kept ${totals.kept}`] : []),
    ...(costSoFar(progress) !== undefined ? [`${formatUsd(costSoFar(progress))} so far`] : []),
    ...(rate !== undefined ? [`${rate} runs/min`] : []),
    ...(eta !== undefined && eta > 0 ? [`ETA ${formatDuration(eta)}`] : []),
  ].join(' · ');
}

/** The summary for people, one line per rollout. */
export function describeBatchSummary(summary: BatchSummary): string {
  const lines = [
    `Batch ${summary.batchId} ${summary.cancelled ? 'was cancelled' : 'completed'} after ${formatDuration(summary.durationMs)}: ${summary.lines} line${summary.lines === 1 ? '' : 's'} in ${summary.output}`,
  ];
  for (const rollout of summary.perRollout) {
    const extra = [
      ...(rollout.failed ? [`${rollout.failed} failed`] : []),
      ...(rollout.kept ? [`${rollout.kept} kept from before`] : []),
      ...(rollout.notRun ? [`${rollout.notRun} not run`] : []),
    ];
    lines.push(
      `  iter${rollout.rollout}.jsonl: ${terminationCounts(rollout.terminations)}${extra.length ? ` (${extra.join(', ')})` : ''}${rollout.cost ? `; cost ${describeCost(rollout.cost)}` : ''}`,
    );
  }
  // Per correct answer only an evaluation knows; a batch evaluated at its end carries it in its headline.
  const evaluated = summary.evaluation?.headline?.cost;
  lines.push(`  cost: ${describeCost(evaluated ?? summary.cost)}`);
  return lines.join('\n');
}

export interface FollowOptions {
  /** Redraw in place (a terminal) or print plain lines. */
  tty: boolean;
  write: (text: string) => void;
  /** Poll interval, ms. Default 1000. */
  pollMs?: number;
  /** Plain-line interval when not a terminal, ms. Default 5000. */
  plainEveryMs?: number;
}

/** Follows a batch until it ends; resolves to its summary, rejects with the failure if the batch failed. */
export async function followBatch(client: Client, batchId: string, options: FollowOptions): Promise<BatchSummary> {
  const handle = client.workflow.getHandle<ResearchBatchWorkflow>(batchId);
  const pollMs = options.pollMs ?? 1_000;
  const plainEveryMs = options.plainEveryMs ?? 5_000;
  let lastPlainAt = 0;
  let lastLine = '';
  let drawn = false;
  for (;;) {
    const description = await handle.describe();
    if (description.status.name !== 'RUNNING' && description.status.name !== 'CONTINUED_AS_NEW') break;
    try {
      const line = renderBatchProgress(await handle.query(batchProgressQuery), Date.now());
      if (options.tty) {
        options.write(`\r\x1b[2K${line}`);
        drawn = true;
      } else if (Date.now() - lastPlainAt >= plainEveryMs || (line !== lastLine && lastPlainAt === 0)) {
        options.write(`${line}\n`);
        lastPlainAt = Date.now();
      }
      lastLine = line;
    } catch {
      // between two runs of the batch (continue-as-new), or no worker to answer yet: try again
    }
    await new Promise((resolve) => setTimeout(resolve, pollMs));
  }
  if (drawn) options.write('\n');
  try {
    return await handle.result();
  } catch (error) {
    if (error instanceof WorkflowFailedError) {
      const cause = error.cause as Error | undefined;
      throw new Error(`the batch ${batchId} failed: ${cause?.message ?? error.message}`);
    }
    throw error;
  }
}
