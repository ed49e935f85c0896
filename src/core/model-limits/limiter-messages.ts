import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type {
  ModelLimitGrant,
  ModelLimitPause,
  ModelLimitReservationRequest,
  ModelLimitSettlement,
} from './model-limit';
import type { ModelLimiterState } from './limiter-state';

/** The `modelLimiter` workflow's input: its model, and what the run before it carried over. */
export interface ModelLimiterInput {
  model: string;
  /** The state carried through continue-as-new; absent when the limiter starts fresh (full budgets). */
  state?: ModelLimiterState;
}

/**
 * Books a call (update-with-start: the first call of a model starts its limiter). Answers at once
 * with a lease and how long to wait, never waits inside the handler (Temporal allows few updates
 * in flight per workflow).
 */
export const reserveModelLimitUpdate = defineUpdate<ModelLimitGrant, [ModelLimitReservationRequest]>(
  'reserveModelLimit',
);

/** A granted call's real usage. */
export const settleModelLimitSignal = defineSignal<[ModelLimitSettlement]>('settleModelLimit');

/** A provider's 429 with retry-after: every worker's calls of the model wait for its end, once. */
export const pauseModelLimitSignal = defineSignal<[ModelLimitPause]>('pauseModelLimit');

/** The limiter's state now (for `react-agent` and tests). */
export const modelLimiterStateQuery = defineQuery<ModelLimiterState>('modelLimiterState');
