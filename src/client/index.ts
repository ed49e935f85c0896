/*
 * The agent's client library: start and steer runs from your own TypeScript service with
 * `@temporalio/client` (`import { startResearch } from 'durable-react-agent/client'`). Everything
 * here is also reachable from any other Temporal SDK by name; docs/clients.md is the contract.
 */
export {
  InvalidResearchRequestError,
  ResearchHandle,
  getResearch,
  startResearch,
  type StartResearchOptions,
} from './research-client';
export { newRunId, questionSlug } from './run-identifiers';
export {
  LiveTextWatcher,
  watchRunText,
  type LiveTextNotice,
  type LiveTextWatcherOptions,
  type WatchRunTextOptions,
} from './live-text';
export type { LiveTextChunk, LiveTextKind } from '../domain/live-text';
export {
  CONTRACT_VERSION,
  DEFAULT_TASK_QUEUE,
  WorkflowTypes,
  type EvaluationWorkflow,
  type ResearchAgentWorkflow,
  type ResearchBatchWorkflow,
} from '../core/workflow-types';
export {
  approveToolCallUpdate,
  finishNowUpdate,
  injectMessageUpdate,
  progressQuery,
  setLimitsUpdate,
} from '../core/message-definitions';
export type {
  ApproveToolCallResult,
  FinishNowRequest,
  FinishNowResult,
  InjectMessageRequest,
  InjectMessageResult,
  RunProgress,
} from '../core/message-definitions';
export { batchProgressQuery, BatchFailureTypes } from '../core/batch-messages';
export { FailureTypes, type FailureType } from '../core/failure-types';
export { EvaluationFailureTypes } from '../core/evaluation/evaluation-contract';
export { validateRunInput, type ResearchRunRequest } from '../core/run-input';
export type { ResearchRunResult, RunDetails } from '../core/run-result';
export type { RunLimits, LoopOptions } from '../core/run-limits';
export type { ModelOptions } from '../core/model-options';
export type { ApprovalDecision, LimitChanges } from '../core/run-steering';
export type { Termination } from '../core/termination';
export type { ResearchBatchInput, BatchSummary } from '../core/batch-contract';
export type { BatchProgress } from '../core/batch-progress';
export type { EvaluationWorkflowInput, EvaluationOutcome } from '../core/evaluation/evaluation-contract';
