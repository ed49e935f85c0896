import { parseArgs } from 'node:util';
import {
  approveToolCallUpdate,
  finishNowUpdate,
  injectMessageUpdate,
  setLimitsUpdate,
  type LimitChanges,
} from '../../core/message-definitions';
import { openCliContext, printJson } from '../cli-context';
import { budgetOptionSpecs, budgetOptionsUsage, budgetsFrom } from '../run-options';
import { UsageError } from '../usage-error';

export const injectHelp = `Usage: react-agent inject <run-id> "MESSAGE"

Adds a user message to the run; the model sees it before its next call.`;

export const finishHelp = `Usage: react-agent finish <run-id> [--reason TEXT]

Asks the run to finish now: it stops what it is doing (open tool calls are answered with a
note) and makes one last tool-less call for the best answer.`;

export const limitsHelp = `Usage: react-agent limits <run-id> ${budgetOptionsUsage}

Raises or lowers a running run's budgets; prints the limits in force afterwards. Fewer model
calls or minutes than already used are refused; a token or cost budget below what the run spent
ends it (token_limit, cost_limit) through its final answer before its next model call.`;

export const approveHelp = `Usage: react-agent approve <run-id> <call-id> [--deny] [--reason TEXT] [--reviewer NAME]

Approves (or with --deny, denies) a tool call waiting for approval; 'react-agent status' lists
them. A denial and its reason become the model's observation.`;

/** Sends one update to a run and prints what it returned; a refused update exits 1 with the reason. */
async function sendUpdate(
  workflowId: string,
  send: (
    handle: ReturnType<Awaited<ReturnType<typeof openCliContext>>['client']['workflow']['getHandle']>,
  ) => Promise<unknown>,
): Promise<number> {
  const context = await openCliContext();
  try {
    printJson(await send(context.client.workflow.getHandle(workflowId)));
    return 0;
  } catch (error) {
    const cause = (error as { cause?: Error }).cause;
    console.error(`Refused: ${cause?.message ?? (error as Error).message}`);
    return 1;
  } finally {
    await context.close();
  }
}

export async function injectCommand(argumentsList: string[]): Promise<number> {
  const [workflowId, ...words] = argumentsList;
  const text = words.join(' ').trim();
  if (!workflowId || !text) throw new UsageError('inject needs a run id and a message.', injectHelp);
  return sendUpdate(workflowId, (handle) => handle.executeUpdate(injectMessageUpdate, { args: [{ text }] }));
}

export async function finishCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: { reason: { type: 'string' } },
  });
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('finish needs a run id.', finishHelp);
  return sendUpdate(workflowId, (handle) =>
    handle.executeUpdate(finishNowUpdate, { args: [{ ...(values.reason ? { reason: values.reason } : {}) }] }),
  );
}

export async function limitsCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: budgetOptionSpecs,
  });
  const [workflowId] = positionals;
  if (!workflowId) throw new UsageError('limits needs a run id.', limitsHelp);
  const changes: LimitChanges = budgetsFrom(values, Object.keys(budgetOptionSpecs), limitsHelp, { checkRanges: false });
  if (!Object.keys(changes).length) throw new UsageError('limits needs at least one limit to change.', limitsHelp);
  return sendUpdate(workflowId, (handle) => handle.executeUpdate(setLimitsUpdate, { args: [changes] }));
}

export async function approveCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: { deny: { type: 'boolean' }, reason: { type: 'string' }, reviewer: { type: 'string' } },
  });
  const [workflowId, callId] = positionals;
  if (!workflowId || !callId) throw new UsageError('approve needs a run id and a call id.', approveHelp);
  return sendUpdate(workflowId, (handle) =>
    handle.executeUpdate(approveToolCallUpdate, {
      args: [
        {
          callId,
          approved: !values.deny,
          ...(values.reason ? { reason: values.reason } : {}),
          reviewer: values.reviewer ?? process.env.USER ?? 'cli',
        },
      ],
    }),
  );
}
