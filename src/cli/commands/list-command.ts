import { parseArgs } from 'node:util';
import { preview } from '../../core/text';
import { openCliContext } from '../cli-context';
import { UsageError } from '../usage-error';

export const listHelp = `Usage: react-agent list [--limit N] [--query "VISIBILITY QUERY"]

Lists recent research runs, newest first, one a line, tab-separated: id, status, termination,
model calls, tokens, model, start time, and the question's first words.
  --limit N   how many (default 20)
  --query Q   extra visibility filter, the Web UI's query language, e.g.
                "ReactTermination = 'error'"       runs that ended error
                "ReactQuestion = 'BYD'"            questions with the word BYD
                "ReactModel = 'qwen2.5-7b-instruct' AND ReactTokens > 100000"
                "ExecutionStatus = 'Running' AND StartTime < '2026-12-02T08:00:00Z'"
                "ReactBatchId = 'nightly-2026-12-02'"   one batch's runs
              (docs/web-ui.md has more)`;

/** Characters of the question shown in the QUESTION column. */
const QUESTION_PREVIEW_CHARACTERS = 60;

/** What the server said when it refused the request as invalid (gRPC INVALID_ARGUMENT, under the client's "Failed to list workflows"). */
function invalidArgument(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const { code, details, message, cause } = current as { code?: unknown; details?: unknown; message?: unknown; cause?: unknown };
    if (code === 3) return typeof details === 'string' && details !== '' ? details : String(message);
    current = cause;
  }
  return undefined;
}

/** The question's first words on one line, cut with `…`. */
function questionPreview(question: string): string {
  const short = preview(question, QUESTION_PREVIEW_CHARACTERS);
  return short.endsWith('…') ? `${short.slice(0, -1).trimEnd()}…` : short;
}

export async function listCommand(argumentsList: string[]): Promise<number> {
  const { values } = parseArgs({ args: argumentsList, options: { limit: { type: 'string', default: '20' }, query: { type: 'string' } } });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1) throw new UsageError(`--limit must be a positive whole number, got ${JSON.stringify(values.limit)}.`, listHelp);
  const query = `WorkflowType = 'researchAgent'${values.query ? ` AND (${values.query})` : ''}`;
  const context = await openCliContext();
  try {
    let count = 0;
    console.log(['RUN ID', 'STATUS', 'TERMINATION', 'CALLS', 'TOKENS', 'MODEL', 'STARTED', 'QUESTION'].join('\t'));
    for await (const run of context.client.workflow.list({ query })) {
      const attributes = run.typedSearchAttributes.getAll();
      const value = (name: string) => attributes.find((pair) => pair.key.name === name)?.value;
      const question = value('ReactQuestion');
      console.log(
        [
          run.workflowId,
          run.status.name,
          value('ReactTermination') ?? '-',
          value('ReactIterations') ?? '-',
          value('ReactTokens') ?? '-',
          value('ReactModel') ?? '-',
          run.startTime.toISOString(),
          typeof question === 'string' ? questionPreview(question) : '-',
        ].join('\t'),
      );
      if (++count >= limit) break;
    }
    return 0;
  } catch (error) {
    // The server names what is wrong with the query (an unknown attribute, LIKE on a Text attribute, ORDER BY on SQL visibility).
    const refusal = invalidArgument(error);
    if (refusal !== undefined) throw new UsageError(`The query was refused: ${refusal}`, listHelp);
    throw error;
  } finally {
    await context.close();
  }
}
