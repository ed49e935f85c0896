import { parseArgs } from 'node:util';
import { openCliContext } from '../cli-context';

export const listHelp = `Usage: react-agent list [--limit N] [--query "VISIBILITY QUERY"]

Lists recent research runs: id, status, termination, model calls, start time.
  --limit N   how many (default 20)
  --query Q   extra visibility filter, e.g. "ReactTermination = 'answer'"`;

export async function listCommand(argumentsList: string[]): Promise<number> {
  const { values } = parseArgs({ args: argumentsList, options: { limit: { type: 'string', default: '20' }, query: { type: 'string' } } });
  const limit = Number(values.limit);
  const query = `WorkflowType = 'researchAgent'${values.query ? ` AND (${values.query})` : ''}`;
  const context = await openCliContext();
  try {
    let count = 0;
    console.log(['RUN ID', 'STATUS', 'TERMINATION', 'CALLS', 'STARTED'].join('\t'));
    for await (const run of context.client.workflow.list({ query })) {
      const attributes = run.typedSearchAttributes.getAll();
      const value = (name: string) => attributes.find((pair) => pair.key.name === name)?.value;
      console.log([run.workflowId, run.status.name, value('ReactTermination') ?? '-', value('ReactIterations') ?? '-', run.startTime.toISOString()].join('\t'));
      if (++count >= limit) break;
    }
    return 0;
  } finally {
    await context.close();
  }
}
