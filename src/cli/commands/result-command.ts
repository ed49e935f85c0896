import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import type { ResearchRunResult } from '../../core/run-result';
import { openCliContext, printJson } from '../cli-context';
import { materialiseResult } from '../materialise-result';
import { subRunSummaryLines } from '../sub-run-summary';
import { UsageError } from '../usage-error';

export const resultHelp = `Usage: react-agent result <run-id> [--output FILE] [--no-wait]

Prints the run's result as JSON in DeepResearch's evaluation shape (question, answer, messages,
prediction, termination) plus usage and timing; messages are read from the transcript store.
A run that delegated (--subruns) has subRuns: each sub-run's id, question, termination, model
calls, tokens and cost (its whole result: react-agent result <sub-run id>).
  --output FILE  write the JSON to FILE instead of stdout (and list the sub-runs' ids)
  --no-wait      fail at once if the run has not finished (default: wait for it)`;

export async function resultCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: { output: { type: 'string' }, 'no-wait': { type: 'boolean' } },
  });
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('result needs a run id.', resultHelp);
  const context = await openCliContext();
  try {
    const handle = context.client.workflow.getHandle(workflowId);
    if (values['no-wait']) {
      const { status } = await handle.describe();
      if (status.name === 'RUNNING') {
        console.error(`${workflowId} is still running; follow it with 'react-agent follow ${workflowId}'.`);
        return 1;
      }
    }
    const result = (await handle.result()) as ResearchRunResult;
    const materialised = await materialiseResult(context.store, result);
    if (values.output) {
      await writeFile(values.output, `${JSON.stringify(materialised, null, 2)}\n`);
      console.log(
        `Wrote ${values.output} (${materialised.messages.length} messages, termination ${materialised.termination}).`,
      );
      for (const line of subRunSummaryLines(materialised.subRuns)) console.log(line);
    } else {
      printJson(materialised);
    }
    return 0;
  } finally {
    await context.close();
  }
}
