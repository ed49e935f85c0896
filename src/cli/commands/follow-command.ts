import { openCliContext } from '../cli-context';
import { describeResult, followRun } from '../follow-run';
import { UsageError } from '../usage-error';

export const followHelp = `Usage: react-agent follow <run-id>

Prints the run's progress as it goes, then its answer. While a model call streams,
its text is printed as it arrives (lines starting ┆, from the call's heartbeats).`;

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
