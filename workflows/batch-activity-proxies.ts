import { proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { BatchActivities } from '../activities/batch-activities';

/** Output bookkeeping: quick file operations, except assembling the iter files at the end (which heartbeats). */
export const batchBookkeeping = proxyActivities<Pick<BatchActivities, 'openBatchOutput' | 'prepareBatchChunk'>>({
  startToCloseTimeout: '5 minutes',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});
export const batchAssembly = proxyActivities<Pick<BatchActivities, 'finishBatchOutput'>>({
  startToCloseTimeout: '2 hours',
  heartbeatTimeout: '1 minute',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});
/**
 * One run's line: reads the run's result and transcript, writes one file — milliseconds of
 * work, so a local activity: one marker event in the batch's history instead of three events and
 * a workflow task of their own per run. A lost attempt runs again when the batch's workflow task
 * is retried; the write replaces the same file, so it is never doubled.
 */
export const batchLines = proxyLocalActivities<Pick<BatchActivities, 'writeBatchLine'>>({
  startToCloseTimeout: '2 minutes',
  localRetryThreshold: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '60 seconds', maximumAttempts: 20 },
});
