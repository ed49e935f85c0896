import { parseArgs } from 'node:util';
import { openCliContext } from '../cli-context';
import { hasLiveWorker } from '../../processes/local-stack';
import { runInputFrom, startRun } from '../start-run';
import { oneRunOptionSpecs, oneRunOptionsHelp } from '../run-options';
import { webUiLink } from '../temporal-client';

export const startHelp = `Usage: react-agent start "QUESTION" [options]

Starts a research run and prints its workflow id and Web UI link, without waiting. A worker
('npm run worker') must be running to make progress.
${oneRunOptionsHelp}`;

export async function startCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: oneRunOptionSpecs,
  });
  const input = runInputFrom(positionals.join(' ').trim() || undefined, values, startHelp);
  const context = await openCliContext();
  try {
    const handle = await startRun(context, input, values.id);
    console.log(handle.workflowId);
    const link = webUiLink(context.temporal, handle.workflowId);
    if (link) console.error(`Web UI: ${link}`);
    if (
      !(await hasLiveWorker(context.client, context.temporal.namespace, context.worker.taskQueue).catch(() => true))
    ) {
      console.error(`No worker is polling task queue "${context.worker.taskQueue}"; start one with 'npm run worker'.`);
    }
    return 0;
  } finally {
    await context.close();
  }
}
