import { openCliContext } from '../cli-context';
import { describeResult, followRun } from '../follow-run';
import { UsageError } from '../usage-error';

export const followHelp = `Usage: react-agent follow <run-id>

Prints the run's progress as it goes, then its answer. While a model call streams,
its text is printed as it arrives (lines starting ┆, from the call's heartbeats).
A run's sub-runs (--subruns) are followed too as they start: their steps prefixed with their
label, their id below the run's ([sub-2-1] …), and how each ended; the run's own next step
waits until a sub-run that ended has been shown. Sub-runs' streamed text is not shown.`;

export async function followCommand(positionals: string[]): Promise<number> {
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('follow needs a run id.', followHelp);
  const context = await openCliContext();
  try {
    const result = await followRun(context.client, workflowId, (line) => console.error(line));
    console.log(describeResult(result));
    return result.termination === 'error' ? 1 : 0;
  } finally {
    await context.close();
  }
}
