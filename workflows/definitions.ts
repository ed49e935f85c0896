import { defineQuery } from '@temporalio/workflow';
import type { Termination } from '../src/termination';

/** A live view of a run, answered by the `progress` query. */
export interface RunProgress {
  /** 'starting' | 'calling_model' | 'running_tools' | 'finishing' | 'done' */
  phase: string;
  modelCalls: number;
  maxModelCalls: number;
  contextTokens: number;
  maxContextTokens: number;
  elapsedMs: number;
  maxDurationMs: number;
  /** The model's last reasoning, shortened. */
  lastThought: string;
  /** Tool calls of the current turn not yet answered, as `name(arguments preview)`. */
  openToolCalls: string[];
  /** Tool calls answered so far. */
  toolCalls: number;
  termination?: Termination;
}

/** Defined once here so the workflow and every client agree on the name and type. */
export const progressQuery = defineQuery<RunProgress>('progress');
