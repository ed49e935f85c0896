import { defineQuery } from '@temporalio/workflow';
import type { BatchProgress } from './batch-progress';

/**
 * The batch's query, defined once for the `researchBatch` workflow and its clients. It has the
 * same name as a run's (`progress`), so `react-agent status` asks either the same way.
 */
export const batchProgressQuery = defineQuery<BatchProgress>('progress');

/** `ApplicationFailure` types of a batch. */
export const BatchFailureTypes = {
  /** The batch's input is invalid (bad reference, rollouts 0, a relative output path, bad run options). */
  invalidInput: 'ReactAgent.Batch.InvalidInput',
  /** The output directory cannot be used: not a directory, not writable, or holding another batch's results. */
  outputUnusable: 'ReactAgent.Batch.OutputUnusable',
  /** The output is a local path outside the worker's data roots (REACT_AGENT_DATA_ROOTS). */
  outputOutsideDataRoots: 'ReactAgent.Batch.OutputOutsideDataRoots',
  /** The stored questions are missing from the transcript store. */
  inputMissing: 'ReactAgent.Batch.InputMissing',
} as const;
