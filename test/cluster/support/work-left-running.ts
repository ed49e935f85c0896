import type { Client } from '@temporalio/client';
import { existsSync, readFileSync } from 'node:fs';
import type { ScriptedModelServer } from '../../fakes/scripted-model-server';
import type { ToolLogEntry } from '../../integration/support/tool-log';

/** What still runs after every workflow should have ended. */
export interface WorkLeftRunning {
  /** Workflow ids Temporal's visibility lists as running. */
  workflows: string[];
  /** Tool calls started on a worker that is still alive and never stopped there (`tool callId on pid`). */
  toolCalls: string[];
  /** Model requests the scripted server has neither answered in full nor seen aborted (`#sequence workflow id`). */
  modelRequests: string[];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * Tool calls still running: a `start` in the test tools' log (test/fakes/test-tools.ts) with no
 * `stop` of the same call from the same process, while that process lives. An attempt that died
 * with its worker (SIGKILL) is not running; one whose worker lives on and never stopped it is an
 * orphan — its workflow, or its attempt, is over and it still works.
 */
export function toolCallsRunning(toolLog: string): string[] {
  if (!existsSync(toolLog)) return [];
  const open = new Map<string, number>();
  for (const line of readFileSync(toolLog, 'utf8').split('\n')) {
    if (line.trim() === '') continue;
    const entry = JSON.parse(line) as ToolLogEntry;
    const key = `${entry.tool} ${entry.callId} on pid ${entry.pid}`;
    open.set(key, (open.get(key) ?? 0) + (entry.event === 'start' ? 1 : -1));
  }
  return [...open.entries()]
    .filter(([key, count]) => count > 0 && alive(Number(key.split(' ').pop())))
    .map(([key]) => key);
}

/** The workflows, tool calls and model requests still running now (see {@link WorkLeftRunning}). */
export async function workLeftRunning(
  client: Client,
  toolLog: string,
  model: ScriptedModelServer,
): Promise<WorkLeftRunning> {
  const workflows: string[] = [];
  for await (const execution of client.workflow.list({ query: 'ExecutionStatus = "Running"' }))
    workflows.push(execution.workflowId);
  return {
    workflows,
    toolCalls: toolCallsRunning(toolLog),
    modelRequests: model.requests
      .filter((request) => !request.completed && !request.aborted)
      .map((request) => `#${request.sequence} ${request.workflowId ?? '(judge)'}`),
  };
}
