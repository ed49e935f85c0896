import { allHandlersFinished, condition, continueAsNew, patched, setHandler, workflowInfo } from '@temporalio/workflow';
import {
  isPause,
  isSettlement,
  paused,
  reservationProblem,
  reserve,
  settle,
  emptyLimiterState,
  withoutExpiredLeases,
  type ModelLimiterState,
} from '../src/core/model-limits/limiter-state';
import {
  modelLimiterStateQuery,
  pauseModelLimitSignal,
  reserveModelLimitUpdate,
  settleModelLimitSignal,
  type ModelLimiterInput,
} from '../src/core/model-limits/limiter-messages';
import { ModelLimiterPatches } from './patches';

/** Messages one run of the limiter handles before it continues as new (about 9 history events each). */
export const MESSAGES_PER_CONTINUATION = 400;

/** With no lease open and no message for this long, the limiter ends (its budgets are full again by then). */
export const IDLE_END_MS = 10 * 60_000;

/**
 * One model's shared limit (issue 33; docs/model-limits.md): the tokens and requests per minute
 * every worker of the namespace may use, kept in this workflow's state and nowhere else. Each
 * model call books its tokens with the `reserveModelLimit` update, which answers at once with how
 * long to wait; the call's real usage comes back with `settleModelLimit`, a provider's 429 with
 * `pauseModelLimit`. The decisions are src/core/model-limits/limiter-state.ts; this reads as its steps:
 * take messages until the history is long enough or the limiter has been idle, then continue as
 * new with the state, or end.
 */
export async function modelLimiter(input: ModelLimiterInput): Promise<void> {
  let state: ModelLimiterState = input.state ?? emptyLimiterState();
  let handled = 0;
  /** The messages the loop below has taken in (re-arming its idle timer after them). */
  let taken = 0;
  const took = () => {
    handled += 1;
  };

  setHandler(
    reserveModelLimitUpdate,
    (request) => {
      const booked = reserve(state, request, Date.now());
      state = booked.state;
      took();
      if (!patched(ModelLimiterPatches.reservationsCompleteAfterTheirEffect)) return booked.grant;
      // Answered once the loop has taken it in, so the answer comes after the idle timer it re-arms.
      const mine = handled;
      return condition(() => taken >= mine).then(() => booked.grant);
    },
    {
      // A malformed request is refused before it reaches history.
      validator: (request) => {
        const problem = reservationProblem(request);
        if (problem) throw new Error(`Invalid reservation: ${problem}.`);
      },
    },
  );
  setHandler(settleModelLimitSignal, (settlement) => {
    if (isSettlement(settlement)) state = settle(state, settlement, Date.now());
    took();
  });
  setHandler(pauseModelLimitSignal, (pause) => {
    if (isPause(pause)) state = paused(state, pause, Date.now());
    took();
  });
  setHandler(modelLimiterStateQuery, () => state);

  for (;;) {
    // Every message so far is taken (a reservation's answer waits for this): the first ones may
    // have come before this loop started, with the workflow's start.
    const seen = handled;
    taken = handled;
    const moved = await condition(
      () => handled !== seen || handled >= MESSAGES_PER_CONTINUATION || workflowInfo().continueAsNewSuggested,
      IDLE_END_MS,
    );
    if (handled >= MESSAGES_PER_CONTINUATION || workflowInfo().continueAsNewSuggested) break;
    state = withoutExpiredLeases(state, Date.now());
    if (!moved && Object.keys(state.leases).length === 0) return;
  }
  taken = handled;
  await condition(allHandlersFinished);
  await continueAsNew<typeof modelLimiter>({ model: input.model, state: withoutExpiredLeases(state, Date.now()) });
}
