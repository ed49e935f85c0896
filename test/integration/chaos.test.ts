import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from '@jest/globals';
import { formatChaosReport } from '../../scripts/chaos/chaos-report';
import { runChaos } from '../../scripts/chaos/run-chaos';

/**
 * The chaos harness (scripts/chaos.ts) in small: 6 runs on 2 worker processes, 3 worker SIGKILLs,
 * one dev server SIGKILL + restart on its database, one cancel through the client and one through
 * `temporal workflow cancel`. Every run must end with a valid transcript, no completed model call
 * sent again, and no tool left running after a cancel.
 */
// Usually about 60 s. The generous settle time covers a kill during a run's first or last
// bookkeeping activity, which (without a heartbeat timeout) waits out its 2-minute start-to-close timeout.
test('chaos: workers killed, the server restarted and runs cancelled, every run ends and no invariant breaks', async () => {
  const lines: string[] = [];
  const report = await runChaos(
    { runs: 6, workers: 2, workerKills: 3, serverRestarts: 1, cancels: 2, seed: 7, settleSeconds: 180, verbose: true },
    { log: (line) => lines.push(line) },
  );
  const table = formatChaosReport(report);
  const context = `${table}\n\n${lines.join('\n')}`;

  assert.deepEqual(report.violations, [], context);
  assert.equal(report.runs.filter((run) => run.status === 'completed').length, 6, context);
  assert.equal(report.workerKills.length, 3, context);
  assert.equal(report.serverRestarts.length, 1, context);
  assert.deepEqual({ client: report.cancels.client, cli: report.cancels.cli }, { client: 1, cli: 1 }, context);
  const terminations = report.runs.map((run) => run.result?.termination);
  assert.ok(
    terminations.every((termination) => termination === 'answer' || termination === 'cancelled'),
    context,
  );
  assert.ok(report.modelRequests.completed >= 6, context);
  assert.equal(existsSync(report.directory), false, 'the temp dir was removed');
}, 300_000);
