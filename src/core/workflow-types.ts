import type { ResearchRunInput } from './run-input';
import type { ResearchRunResult } from './run-result';

/**
 * The workflows as clients see them: a type name and a signature. Clients (the CLI, tests,
 * any Temporal client) start and type runs with these, never by importing workflows/.
 */
export const WorkflowTypes = {
  researchAgent: 'researchAgent',
} as const;

/** Signature of the `researchAgent` workflow (workflows/research-agent.ts satisfies it). */
export type ResearchAgentWorkflow = (input: ResearchRunInput) => Promise<ResearchRunResult>;
