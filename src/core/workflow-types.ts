import type { ResearchRunInput } from './run-input';
import type { ResearchRunResult } from './run-result';
import type { BatchSummary, ResearchBatchInput } from './batch-contract';
import type { EvaluationOutcome, EvaluationWorkflowInput } from './evaluation/evaluation-contract';

/**
 * The workflows as clients see them: a type name and a signature. Clients (the CLI, tests,
 * any Temporal client) start and type runs with these, never by importing workflows/.
 */
export const WorkflowTypes = {
  researchAgent: 'researchAgent',
  researchBatch: 'researchBatch',
  evaluation: 'evaluation',
} as const;

/** Signature of the `researchAgent` workflow (workflows/research-agent.ts satisfies it). */
export type ResearchAgentWorkflow = (input: ResearchRunInput) => Promise<ResearchRunResult>;

/** Signature of the `researchBatch` workflow (workflows/research-batch.ts satisfies it). */
export type ResearchBatchWorkflow = (input: ResearchBatchInput) => Promise<BatchSummary>;

/** Signature of the `evaluation` workflow (workflows/evaluation.ts satisfies it). */
export type EvaluationWorkflow = (input: EvaluationWorkflowInput) => Promise<EvaluationOutcome>;
