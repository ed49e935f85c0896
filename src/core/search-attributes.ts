import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** How the run ended (see `Termination`). Register as Keyword. */
export const REACT_TERMINATION = defineSearchAttributeKey('ReactTermination', SearchAttributeType.KEYWORD);
/** Model calls made so far. Register as Int. */
export const REACT_ITERATIONS = defineSearchAttributeKey('ReactIterations', SearchAttributeType.INT);

/** The batch a run belongs to (its `researchBatch` workflow id). Register as Keyword. */
export const REACT_BATCH_ID = defineSearchAttributeKey('ReactBatchId', SearchAttributeType.KEYWORD);
/** Which rollout of its question a batch run is (1-based). Register as Int. */
export const REACT_ROLLOUT = defineSearchAttributeKey('ReactRollout', SearchAttributeType.INT);

/** Temporal's own, set on every workflow a schedule starts: the time it was scheduled for (a backfill's past time). */
export const TEMPORAL_SCHEDULED_START_TIME = defineSearchAttributeKey('TemporalScheduledStartTime', SearchAttributeType.DATETIME);

/** The search attributes the project needs registered on the namespace, name → type. */
export const PROJECT_SEARCH_ATTRIBUTES = { ReactTermination: 'Keyword', ReactIterations: 'Int', ReactBatchId: 'Keyword', ReactRollout: 'Int' } as const;
