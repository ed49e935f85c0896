import type { Client } from '@temporalio/client';
import type { ResearchRunResult } from '../core/run-result';
import { progressLines } from './progress-lines';
import { RunEventReader, runHistory } from './run-events';

/**
 * Prints a run's steps from its history as they happen (model calls with thoughts and tool
 * calls, tool results, failures) and resolves to its result. Works for a finished run too.
 */
export async function followRun(client: Client, workflowId: string, print: (line: string) => void): Promise<ResearchRunResult> {
  let runId: string | undefined;
  // Each continue-as-new starts a new run under the same workflow id; follow the chain.
  for (;;) {
    const reader = new RunEventReader();
    let next: string | undefined;
    for await (const historyEvent of runHistory(client, workflowId, runId)) {
      for (const event of reader.read(historyEvent)) {
        for (const line of progressLines(event)) print(line);
        if (event.kind === 'run_completed') return event.result;
        if (event.kind === 'run_closed') throw new Error(`Run ${workflowId} ended without a result (${event.status}).`);
        if (event.kind === 'continued_as_new') next = event.newRunId;
      }
    }
    if (!next) break;
    runId = next;
  }
  return (await client.workflow.getHandle(workflowId).result()) as ResearchRunResult;
}

/** The closing lines `run` and `follow` print. */
export function describeResult(result: ResearchRunResult): string {
  const seconds = (result.durationMs / 1000).toFixed(1);
  const head = `Ended: ${result.termination} after ${result.iterations} model calls, ${result.toolCalls} tool calls, ${seconds} s, ${result.usage.totalTokens.toLocaleString('en-US')} tokens.`;
  const error = result.error ? `\nError: ${result.error}` : '';
  return `${head}${error}\n\nAnswer:\n${result.prediction}`;
}
