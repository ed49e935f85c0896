import { parseArgs } from 'node:util';
import type { WorkflowExecutionInfo } from '@temporalio/client';
import { preview } from '../../core/text';
import { openCliContext } from '../cli-context';
import { UsageError } from '../usage-error';

/** Most runs `--sort tokens` reads before it sorts (narrow the query, e.g. by StartTime, for more). */
const MAX_SORTED_RUNS = 5_000;

export const listHelp = `Usage: react-agent list [--limit N] [--query "VISIBILITY QUERY"] [--sort tokens]

Lists research runs, one a line, tab-separated: id, status, termination, model calls, tokens,
model, start time, and the question's first words; running runs first, then the most recently
closed.
  --limit N      how many (default 20)
  --query Q      extra visibility filter, the Web UI's query language, e.g.
                   "ReactTermination = 'error'"       runs that ended error
                   "ReactQuestion = 'BYD'"            questions with the word BYD
                   "ReactModel = 'qwen2.5-7b-instruct' AND ReactTokens > 100000"
                   "ExecutionStatus = 'Running' AND StartTime < '2026-12-02T08:00:00Z'"
                   "ReactBatchId = 'nightly-2026-12-02'"   one batch's runs
                 (docs/web-ui.md has more)
  --sort tokens  most tokens first: the matching runs (at most ${MAX_SORTED_RUNS.toLocaleString('en')}) are read and
                 sorted here, since SQL visibility (the dev server's) refuses ORDER BY`;

/** Characters of the question shown in the QUESTION column. */
const QUESTION_PREVIEW_CHARACTERS = 60;

/** What the server said when it refused the request as invalid (gRPC INVALID_ARGUMENT, under the client's "Failed to list workflows"). */
function invalidArgument(error: unknown): string | undefined {
  let current = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth += 1) {
    const { code, details, message, cause } = current as {
      code?: unknown;
      details?: unknown;
      message?: unknown;
      cause?: unknown;
    };
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

/**
 * The research runs `filter` selects: `WorkflowType = 'researchAgent' AND (filter)`, a trailing
 * `ORDER BY` kept outside the parentheses (visibility stores that sort, Elasticsearch, take it there).
 */
export function researchRunsQuery(filter: string | undefined): string {
  const [, condition = '', order = ''] = /^(.*?)\s*(\bORDER\s+BY\b.*)?$/is.exec(filter?.trim() ?? '') ?? [];
  return `WorkflowType = 'researchAgent'${condition ? ` AND (${condition})` : ''}${order ? ` ${order}` : ''}`;
}

function attribute(run: WorkflowExecutionInfo, name: string): unknown {
  return run.typedSearchAttributes.getAll().find((pair) => pair.key.name === name)?.value;
}

function line(run: WorkflowExecutionInfo): string {
  const question = attribute(run, 'ReactQuestion');
  return [
    run.workflowId,
    run.status.name,
    attribute(run, 'ReactTermination') ?? '-',
    attribute(run, 'ReactIterations') ?? '-',
    attribute(run, 'ReactTokens') ?? '-',
    attribute(run, 'ReactModel') ?? '-',
    run.startTime.toISOString(),
    typeof question === 'string' ? questionPreview(question) : '-',
  ].join('\t');
}

export async function listCommand(argumentsList: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argumentsList,
    options: { limit: { type: 'string', default: '20' }, query: { type: 'string' }, sort: { type: 'string' } },
  });
  const limit = Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1)
    throw new UsageError(`--limit must be a positive whole number, got ${JSON.stringify(values.limit)}.`, listHelp);
  if (values.sort !== undefined && values.sort !== 'tokens')
    throw new UsageError(`--sort takes only "tokens", got ${JSON.stringify(values.sort)}.`, listHelp);
  const query = researchRunsQuery(values.query);
  const context = await openCliContext();
  try {
    console.log(['RUN ID', 'STATUS', 'TERMINATION', 'CALLS', 'TOKENS', 'MODEL', 'STARTED', 'QUESTION'].join('\t'));
    if (values.sort === 'tokens') {
      const runs: WorkflowExecutionInfo[] = [];
      for await (const run of context.client.workflow.list({ query })) {
        if (runs.length >= MAX_SORTED_RUNS) {
          console.error(
            `More than ${MAX_SORTED_RUNS} runs match; sorted the ${MAX_SORTED_RUNS} newest. Narrow --query (e.g. StartTime > '...') to sort them all.`,
          );
          break;
        }
        runs.push(run);
      }
      const tokens = (run: WorkflowExecutionInfo) => Number(attribute(run, 'ReactTokens') ?? -1);
      for (const run of runs.sort((left, right) => tokens(right) - tokens(left)).slice(0, limit))
        console.log(line(run));
      return 0;
    }
    let count = 0;
    for await (const run of context.client.workflow.list({ query })) {
      console.log(line(run));
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
