import type { ResearchRunInput } from './run-input';
import type { ResearchRunResult } from './run-result';
import type { BatchSummary, ResearchBatchInput } from './batch-contract';
import type { EvaluationOutcome, EvaluationWorkflowInput } from './evaluation/evaluation-contract';

/**
 * Version of the client contract (docs/clients.md): workflow type names, their input and result
 * shapes (schemas/), queries, updates and failure types. A minor bump adds optional fields or
 * new messages (old clients and old runs keep working); a breaking change gets a new workflow
 * type name instead, so runs in flight finish on the old one.
 */
export const CONTRACT_VERSION = '1.2';

/** The task queue workers poll and clients start runs on unless configured otherwise (`REACT_AGENT_TASK_QUEUE`). */
export const DEFAULT_TASK_QUEUE = 'react-agent';

/**
 * The workflows as clients see them: a type name and a signature. Clients (the CLI, tests,
 * any Temporal client) start and type runs with these, never by importing workflows/.
 */
export const WorkflowTypes = {
  researchAgent: 'researchAgent',
  researchBatch: 'researchBatch',
  evaluation: 'evaluation',
  /** One model's shared tokens/requests per minute (issue 33), id `model-limit/<model>`; started by model calls, not clients. */
  modelLimiter: 'modelLimiter',
} as const;

/** Signature of the `researchAgent` workflow (workflows/research-agent.ts satisfies it). */
export type ResearchAgentWorkflow = (input: ResearchRunInput) => Promise<ResearchRunResult>;

/** Signature of the `researchBatch` workflow (workflows/research-batch.ts satisfies it). */
export type ResearchBatchWorkflow = (input: ResearchBatchInput) => Promise<BatchSummary>;

/** Signature of the `evaluation` workflow (workflows/evaluation.ts satisfies it). */
export type EvaluationWorkflow = (input: EvaluationWorkflowInput) => Promise<EvaluationOutcome>;
