import { existsSync, readFileSync } from 'node:fs';

export interface ToolLogEntry {
  tool: string;
  event: 'start' | 'stop';
  reason?: string;
  callId: string;
  workflowId: string;
  at: number;
  pid: number;
  /** The activity attempt, for tools that log it (the chaos tools). */
  attempt?: number;
}

/** Start/stop lines the test tools wrote (see test/fakes/test-tools.ts), for one run. */
export function readToolLog(file: string, workflowId: string): ToolLogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as ToolLogEntry)
    .filter((entry) => entry.workflowId === workflowId);
}

/** Resolves once `predicate` holds for the run's tool log. */
export async function waitForToolLog(
  file: string,
  workflowId: string,
  predicate: (entries: ToolLogEntry[]) => boolean,
  timeoutMs = 30_000,
): Promise<ToolLogEntry[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const entries = readToolLog(file, workflowId);
    if (predicate(entries)) return entries;
    if (Date.now() > deadline)
      throw new Error(`tool log condition not met within ${timeoutMs} ms: ${JSON.stringify(entries)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
