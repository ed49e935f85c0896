import type { TokenUsage } from '../messages';
import type { Termination } from '../termination';

/** One sub-run as its parent records it: the parent's result carries these (the per-child breakdown). */
export interface SubRunRecord {
  /** The sub-run's workflow id (`react-agent result <id>` has its whole answer and transcript). */
  workflowId: string;
  /** Its task's question, shortened. */
  question: string;
  /** How it ended; `error` too when it could not start or failed as a workflow. */
  termination: Termination;
  /** Model calls of the sub-run and of its own sub-runs. */
  modelCalls: number;
  /** Tokens and cost of the sub-run and of its own sub-runs. */
  usage: TokenUsage;
  durationMs: number;
  /** Set when it ended `error`: why. */
  error?: string;
}

/** A run's sub-runs so far (`RunState.subRuns`, `ResearchRunResult.subRuns`). */
export interface SubRunTotals {
  /** Model calls of all of them, their own sub-runs' included. */
  modelCalls: number;
  runs: SubRunRecord[];
}
