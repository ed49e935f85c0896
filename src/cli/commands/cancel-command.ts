import { openCliContext } from '../cli-context';
import { UsageError } from '../usage-error';

export const cancelHelp = `Usage: react-agent cancel <run-id>

Asks the run to stop. It answers every open tool call with a note, stores its transcript and
ends with termination "cancelled"; 'react-agent result <run-id>' then shows it.`;

export async function cancelCommand(positionals: string[]): Promise<number> {
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('cancel needs a run id.', cancelHelp);
  const context = await openCliContext();
  try {
    await context.client.workflow.getHandle(workflowId).cancel();
    console.log(`Cancellation requested for ${workflowId}.`);
    return 0;
  } finally {
    await context.close();
  }
}
