/**
 * The chaos harness: `npx tsx scripts/chaos.ts [--runs 50] [--worker-kills 20] [--server-restarts 3]
 * [--cancels 8] [--workers 2] [--seed 1]` (see --help). Runs research runs on a real dev server and
 * worker processes while killing workers, restarting the server and cancelling runs, then checks
 * every run's invariants and prints a table. Exits 1 on any violation, 2 when the chaos itself
 * failed, 130 on Ctrl-C; every process and the temp dir are cleaned up in all cases.
 */
import { CHAOS_USAGE, parseChaosArguments } from './chaos/chaos-options';
import { formatChaosReport } from './chaos/chaos-report';
import { runChaos } from './chaos/run-chaos';

async function main(): Promise<number> {
  let parsed: ReturnType<typeof parseChaosArguments>;
  try {
    parsed = parseChaosArguments(process.argv.slice(2));
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  if (parsed.help) {
    console.log(CHAOS_USAGE);
    return 0;
  }
  const controller = new AbortController();
  let interruptedAt: number | undefined;
  const onSignal = (signalName: NodeJS.Signals) => {
    // npx and tsx relay the terminal's Ctrl-C, so one press can arrive twice: only a later one forces the exit
    // (the exit hooks still SIGKILL every child and remove the temp dir).
    if (interruptedAt !== undefined) {
      if (Date.now() - interruptedAt > 2_000) process.exit(130);
      return;
    }
    interruptedAt = Date.now();
    console.error(
      `\nchaos: ${signalName}: stopping every process and removing the temp dir (Ctrl-C again to exit at once)`,
    );
    controller.abort(new Error(`interrupted by ${signalName}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const report = await runChaos(parsed.options, { signal: controller.signal, log: (line) => console.error(line) });
    console.log(formatChaosReport(report));
    if (parsed.options.keep) console.log(`kept: ${report.directory}`);
    return report.violations.length ? 1 : 0;
  } catch (error) {
    if (interruptedAt !== undefined) return 130;
    console.error(
      `chaos: the harness failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
    );
    return 2;
  }
}

main().then((code) => process.exit(code));
