import type { Client, WorkflowHandle, WorkflowStartOptions } from '@temporalio/client';
import {
  approveToolCallUpdate,
  finishNowUpdate,
  injectMessageUpdate,
  progressQuery,
  setLimitsUpdate,
} from '../core/message-definitions';
import type {
  ApproveToolCallResult,
  FinishNowResult,
  InjectMessageResult,
  RunProgress,
} from '../core/message-definitions';
import { validateRunInput, type ResearchRunRequest } from '../core/run-input';
import type { RunLimits } from '../core/run-limits';
import type { ResearchRunResult } from '../core/run-result';
import type { ApprovalDecision, LimitChanges } from '../core/run-steering';
import { preview } from '../core/text';
import { DEFAULT_TASK_QUEUE, WorkflowTypes, type ResearchAgentWorkflow } from '../core/workflow-types';
import type { LiveTextChunk } from '../domain/live-text';
import { watchRunText, type WatchRunTextOptions } from './live-text';
import { newRunId } from './run-identifiers';

/** Options of `startResearch`; anything else Temporal's start takes passes through. */
export interface StartResearchOptions extends Partial<
  Omit<WorkflowStartOptions<ResearchAgentWorkflow>, 'args' | 'taskQueue' | 'workflowId'>
> {
  /** Task queue of the agent's workers. Default `'react-agent'` (the worker's `REACT_AGENT_TASK_QUEUE` default). */
  taskQueue?: string;
  /** Workflow id. Default `research-<slug of the question>-<UTC time>-<random>`. */
  workflowId?: string;
}

/** A request refused before it reached Temporal: each problem names its field. */
export class InvalidResearchRequestError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid run input: ${problems.join('; ')}.`);
    this.name = 'InvalidResearchRequestError';
  }
}

/** A running or finished `researchAgent` run, with its query and updates typed. */
export class ResearchHandle {
  constructor(readonly workflow: WorkflowHandle<ResearchAgentWorkflow>) {}

  get workflowId(): string {
    return this.workflow.workflowId;
  }

  /** The live view of the run (query `progress`); works after the run ended too. */
  progress(): Promise<RunProgress> {
    return this.workflow.query(progressQuery);
  }

  /** Adds a user message before the next model call (update `injectMessage`). */
  injectMessage(text: string): Promise<InjectMessageResult> {
    return this.workflow.executeUpdate(injectMessageUpdate, { args: [{ text }] });
  }

  /** Goes to the final answer phase now (update `finishNow`). */
  finishNow(reason?: string): Promise<FinishNowResult> {
    return this.workflow.executeUpdate(finishNowUpdate, { args: [reason === undefined ? {} : { reason }] });
  }

  /** Raises or lowers budgets; resolves to the limits in force (update `setLimits`). */
  setLimits(changes: LimitChanges): Promise<RunLimits> {
    return this.workflow.executeUpdate(setLimitsUpdate, { args: [changes] });
  }

  /** Approves or denies a tool call waiting for approval (update `approveToolCall`). */
  approveToolCall(decision: ApprovalDecision): Promise<ApproveToolCallResult> {
    return this.workflow.executeUpdate(approveToolCallUpdate, { args: [decision] });
  }

  /**
   * The text of the run's model calls as they stream (`{ call, kind, text }`), pushed by the
   * worker within milliseconds when it can be reached, else from heartbeat details every few
   * seconds; ends when the run ends or `options.signal` aborts ({@link watchRunText}).
   */
  liveText(options: WatchRunTextOptions = {}): AsyncGenerator<LiveTextChunk> {
    return watchRunText(this.workflow.client, this.workflowId, options);
  }

  /** Waits for the run's result (it follows continue-as-new). */
  result(): Promise<ResearchRunResult> {
    return this.workflow.result();
  }

  /** Asks the run to stop: it answers open tool calls and returns a result ending `cancelled`. */
  async cancel(): Promise<void> {
    await this.workflow.cancel();
  }
}

/**
 * Starts a `researchAgent` run by its type name, with the question (shortened) as its Web UI
 * summary. The request is checked against the contract first (schemas/researchAgent.input.json),
 * so a bad one throws `InvalidResearchRequestError` here instead of starting a run that fails.
 */
export async function startResearch(
  client: Client,
  request: ResearchRunRequest,
  options: StartResearchOptions = {},
): Promise<ResearchHandle> {
  const { problems } = validateRunInput(request);
  if (problems.length) throw new InvalidResearchRequestError(problems);
  const { taskQueue = DEFAULT_TASK_QUEUE, workflowId = newRunId(request.question), ...rest } = options;
  const workflow = await client.workflow.start<ResearchAgentWorkflow>(WorkflowTypes.researchAgent, {
    staticSummary: preview(request.question, 200),
    ...rest,
    taskQueue,
    workflowId,
    args: [request],
  });
  return new ResearchHandle(workflow);
}

/** A handle on a run started earlier (by any client), by its workflow id. */
export function getResearch(client: Client, workflowId: string): ResearchHandle {
  return new ResearchHandle(client.workflow.getHandle<ResearchAgentWorkflow>(workflowId));
}
