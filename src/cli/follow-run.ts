import type { WorkflowHandle } from '@temporalio/client';
import { setTimeout as delay } from 'node:timers/promises';
import { progressQuery } from '../../workflows/definitions';
import type { ResearchRunResult } from '../run-input';
import { ProgressLines } from './progress-lines';

/** Prints progress lines every `intervalMs` until the run ends; resolves to its result. */
export async function followRun(handle: WorkflowHandle, print: (line: string) => void, intervalMs = 1_000): Promise<ResearchRunResult> {
  const lines = new ProgressLines();
  let finished = false;
  const result = (handle.result() as Promise<ResearchRunResult>).finally(() => {
    finished = true;
  });
  const poll = (async () => {
    while (!finished) {
      try {
        for (const line of lines.next(await handle.query(progressQuery))) print(line);
      } catch {
        // the run may not have had its first workflow task yet, or just ended
      }
      await delay(intervalMs);
    }
  })();
  try {
    return await result;
  } finally {
    await poll;
  }
}

/** The closing lines `run` and `follow` print. */
export function describeResult(result: ResearchRunResult): string {
  const seconds = (result.durationMs / 1000).toFixed(1);
  const head = `Ended: ${result.termination} after ${result.iterations} model calls, ${result.toolCalls} tool calls, ${seconds} s, ${result.usage.totalTokens.toLocaleString('en-US')} tokens.`;
  const error = result.error ? `\nError: ${result.error}` : '';
  return `${head}${error}\n\nAnswer:\n${result.prediction}`;
}
