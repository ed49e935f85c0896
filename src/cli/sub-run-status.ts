import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { progressQuery } from '../core/message-definitions';
import type { ResearchRunResult } from '../core/run-result';
import { REACT_TREE_ID } from '../core/search-attributes';
import { subRunLabel } from './sub-run-summary';

/** One sub-run as `react-agent status` shows it under its parent (issue 30). */
export interface SubRunStatus {
  /** Its workflow id (`react-agent status|follow|result` take it). */
  workflowId: string;
  /** Its id below the run asked about: `sub-2-1`, or `sub-2-1/sub-1-3` for a sub-run's own sub-run. */
  label: string;
  /** Temporal's status: RUNNING, COMPLETED, FAILED, … */
  status: string;
  /** How it ended, once it did. */
  termination?: string;
  /** Its own model calls so far (its sub-runs' are theirs). */
  modelCalls?: number;
  /** Its model-call budget, carved from its parent's. */
  maxModelCalls?: number;
  /** Tokens so far, its own sub-runs' included once they ended. */
  totalTokens?: number;
  /** Their cost in USD, when the worker prices the model. */
  costUsd?: number;
  /** Set when its figures could not be read: why. */
  unavailable?: string;
}

/** Most sub-runs `status` lists under one run. */
export const MAX_LISTED_SUB_RUNS = 200;

/** A string as a visibility query literal. */
const quoted = (value: string) => `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);
const numberOr = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
/** A cost without the float noise of its sums (0.00019739999999999997 → 0.0001974). */
const usd = (value: number) => Math.round(value * 1e10) / 1e10;

function attribute(info: WorkflowExecutionInfo, name: string): unknown {
  return info.typedSearchAttributes.getAll().find((pair) => pair.key.name === name)?.value;
}

/** The model-call budget a run was started with: its input's `limits.maxModelCalls`, from its first history event. */
async function startedBudget(client: Client, workflowId: string): Promise<number | undefined> {
  const response = await client.workflowService.getWorkflowExecutionHistory({
    namespace: client.options.namespace,
    execution: { workflowId },
    maximumPageSize: 1,
  });
  const payload = response.history?.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
  if (!payload) return undefined;
  const input = defaultPayloadConverter.fromPayload<unknown>(payload);
  return isRecord(input) && isRecord(input.limits) ? numberOr(input.limits.maxModelCalls) : undefined;
}

/** One sub-run's figures: a running one's from its progress query, an ended one's from its result. */
async function statusOf(client: Client, info: WorkflowExecutionInfo, rootId: string): Promise<SubRunStatus> {
  const base: SubRunStatus = {
    workflowId: info.workflowId,
    label: subRunLabel(info.workflowId, rootId),
    status: info.status.name,
  };
  const termination = attribute(info, 'ReactTermination');
  if (typeof termination === 'string') base.termination = termination;
  try {
    const handle = client.workflow.getHandle(info.workflowId);
    if (info.status.name === 'RUNNING') {
      const progress = await handle.query(progressQuery);
      return {
        ...base,
        modelCalls: progress.modelCalls,
        maxModelCalls: progress.limits.maxModelCalls,
        totalTokens: progress.totalTokens,
        ...(progress.costUsd !== undefined ? { costUsd: usd(progress.costUsd) } : {}),
      };
    }
    const maxModelCalls = await startedBudget(client, info.workflowId);
    const withBudget = { ...base, ...(maxModelCalls !== undefined ? { maxModelCalls } : {}) };
    if (info.status.name !== 'COMPLETED')
      return { ...withBudget, modelCalls: numberOr(attribute(info, 'ReactIterations')) };
    const result = (await handle.result()) as ResearchRunResult;
    return {
      ...withBudget,
      termination: result.termination,
      modelCalls: result.iterations,
      totalTokens: result.usage.totalTokens,
      ...(result.usage.costUsd !== undefined ? { costUsd: usd(result.usage.costUsd) } : {}),
    };
  } catch (error) {
    return { ...base, unavailable: (error instanceof Error ? error.message : String(error)).split('\n')[0] };
  }
}

/**
 * The sub-runs below `workflowId` (issue 30), at any depth, in the order they were delegated
 * (each one's own sub-runs right under it), each with its figures: listed from visibility by the
 * tree's `ReactTreeId` (`treeId`, the run's own search attribute; none when it is absent, as it is
 * on a run that never delegated). Visibility may lag a sub-run started a moment ago by a second or so.
 */
export async function subRunStatuses(client: Client, workflowId: string, treeId: unknown): Promise<SubRunStatus[]> {
  if (typeof treeId !== 'string' || !treeId) return [];
  const found: WorkflowExecutionInfo[] = [];
  for await (const info of client.workflow.list({ query: `${REACT_TREE_ID.name} = ${quoted(treeId)}` })) {
    if (!info.workflowId.startsWith(`${workflowId}/`)) continue;
    found.push(info);
    if (found.length >= MAX_LISTED_SUB_RUNS) break;
  }
  // By id, numbers as numbers: in the order they were delegated, each one's own sub-runs right under it.
  found.sort((left, right) => left.workflowId.localeCompare(right.workflowId, 'en', { numeric: true }));
  return Promise.all(found.map((info) => statusOf(client, info, workflowId)));
}
