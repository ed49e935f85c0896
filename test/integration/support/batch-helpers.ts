import { readdirSync, readFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Client, WorkflowHandle } from '@temporalio/client';
import type { ResearchBatchInput } from '../../../src/core/batch-contract';
import type { BatchItem } from '../../../src/domain/batch-input';
import { storeBatchInput } from '../../../src/storage/batch-input-file';
import type { ScriptedReply, ScriptedRequest } from '../../fakes/scripted-model-server';
import { countAssistantMessages } from '../../fakes/scripted-model-server';
import { WorkflowTypes, type ResearchBatchWorkflow } from '../../../src/core/workflow-types';
import type { TranscriptStore } from '../../../src/storage/transcript-store';

let sequence = 0;
export function batchId(label: string): string {
  sequence += 1;
  return `${label}-${process.pid}-${sequence}-${Date.now().toString(36)}`;
}

export function questions(count: number, prefix = 'Question'): BatchItem[] {
  return Array.from({ length: count }, (_, index) => ({
    question: `${prefix} number ${index}?`,
    answer: `ref-${index}`,
  }));
}

/** Where a batch starts: an integration `AgentEnvironment` or the workflow tier's `WorkflowEnvironment`. */
export interface BatchEnvironment {
  store: TranscriptStore;
  client: Client;
  taskQueue: string;
}

/** Stores the questions as the CLI does and starts a `researchBatch` on the environment's task queue. */
export async function startBatch(
  environment: BatchEnvironment,
  id: string,
  items: BatchItem[],
  options: Omit<ResearchBatchInput, 'input' | 'questions'>,
): Promise<WorkflowHandle<ResearchBatchWorkflow>> {
  const input = await storeBatchInput(environment.store, items);
  return environment.client.workflow.start<ResearchBatchWorkflow>(WorkflowTypes.researchBatch, {
    taskQueue: environment.taskQueue,
    workflowId: id,
    args: [{ input, questions: items.length, ...options }],
  });
}

/** The (index, rollout) of a batch run's model request, from the workflow-id header. */
export function pairOf(request: ScriptedRequest): { batchId: string; index: number; rollout: number } | undefined {
  const match = /^(.+)\/q(\d+)-r(\d+)$/.exec(request.workflowId ?? '');
  return match ? { batchId: match[1] as string, index: Number(match[2]), rollout: Number(match[3]) } : undefined;
}

/** The model call number within its run (1-based), from the assistant messages the request carries. */
export function turnOf(request: ScriptedRequest): number {
  return countAssistantMessages(request.messages) + 1;
}

export const answerReply = (text: string, extra: Partial<ScriptedReply> = {}): ScriptedReply => ({
  content: `<think>Done.</think>\n<answer>${text}</answer>`,
  ...extra,
});
export const toolReply = (
  name: string,
  args: Record<string, unknown>,
  extra: Partial<ScriptedReply> = {},
): ScriptedReply => ({
  content: `<think>Use ${name}.</think>\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`,
  ...extra,
});

export interface ResultLine {
  question: string;
  answer: string;
  messages: Array<{ role: string; content: string }>;
  prediction: string;
  termination: string;
  runId: string;
  index: number;
  rollout: number;
  error?: string;
  [key: string]: unknown;
}

/** The lines of `iter<rollout>.jsonl`, parsed (empty when the file is absent). */
export function iterLines(output: string, rollout: number): ResultLine[] {
  const path = join(output, `iter${rollout}.jsonl`);
  if (!existsSync(path)) return [];
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as ResultLine);
}

/** How many run lines the batch has written so far (the per-run files). */
export function runLinesWritten(output: string): number {
  const runs = join(output, 'runs');
  if (!existsSync(runs)) return 0;
  return readdirSync(runs).reduce(
    (total, rollout) => total + readdirSync(join(runs, rollout)).filter((name) => name.endsWith('.json')).length,
    0,
  );
}

export async function waitFor(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Problems with an iter file: each question index exactly once, in order, for this rollout. */
export function iterFileProblems(lines: ResultLine[], questionCount: number, rollout: number): string[] {
  const problems: string[] = [];
  const indices = lines.map((line) => line.index);
  if (lines.length !== questionCount)
    problems.push(`iter${rollout} has ${lines.length} lines, expected ${questionCount}`);
  const seen = new Set<number>();
  for (const index of indices) {
    if (seen.has(index)) problems.push(`iter${rollout}: index ${index} appears twice`);
    seen.add(index);
  }
  for (let index = 0; index < questionCount; index += 1)
    if (!seen.has(index)) problems.push(`iter${rollout}: index ${index} missing`);
  if (indices.some((index, position) => position > 0 && index < (indices[position - 1] as number)))
    problems.push(`iter${rollout}: lines not in question order`);
  for (const line of lines)
    if (line.rollout !== rollout) problems.push(`iter${rollout}: a line of rollout ${line.rollout}`);
  return problems;
}
