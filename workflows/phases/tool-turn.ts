import { isCancellation } from '@temporalio/workflow';
import { malformedRepliesEnd } from '../../src/core/reply-steps';
import type { ToolCallRequest } from '../../src/core/protocols';
import type { Ending } from '../../src/core/run-ending';
import { approvalRefusal } from '../../src/core/run-steering';
import { answerToolTurn, hasUnreadableCall, observeRepeats } from '../../src/core/run-transitions';
import { goneToolObservation } from '../../src/core/tool-spec';
import { estimateTokens, type CallResult, type Turn } from '../../src/core/turns';
import { toolActivityOptions } from '../activity-options';
import { runActivities } from '../activity-proxies';
import { failureType, rootMessage } from '../failures';
import { LoopPatches } from '../patches';
import { leanActivityInputs, patchedOrLight } from '../light-bookkeeping';
import { toolNamesOf, toolScheduleOf } from '../../src/core/run-state';
import { toolCallRunFields } from '../../src/core/call-inputs';
import { forEachAtMost } from '../../src/core/task-slots';
import type { ResearchRun } from '../research-run';
import { delegate } from '../delegation';
import { DELEGATE_TOOL } from '../../src/core/sub-runs/sub-run-options';

/**
 * One turn's tool calls: at most `loop.maxParallelToolCalls` at a time, each waiting for approval
 * when its tool requires it, results kept in call order; then stuck detection over the turn.
 * Returns `stuck` or the malformed-replies end when one applies, nothing when the loop goes on.
 */
export async function runToolTurn(
  run: ResearchRun,
  calls: ToolCallRequest[],
  malformedLimitReached: boolean,
): Promise<Ending | undefined> {
  const turn = run.beginTurn(calls);
  await runCalls(run, turn);
  run.endTurn();
  run.state = answerToolTurn(run.state, turn, run.protocol);
  if (run.options.stuckDetection) {
    const observed = observeRepeats(
      run.state,
      calls,
      hasUnreadableCall(calls) && patchedOrLight(LoopPatches.unusableReplies),
    );
    run.state = observed.state;
    if (observed.stuck) return { kind: 'budget_ended', budget: 'stuck' };
  }
  if (!malformedLimitReached) return undefined;
  const ended = malformedRepliesEnd(run.state, { protocol: run.protocol, options: run.options });
  run.state = ended.state;
  return ended.ending;
}

/**
 * Runs the calls, at most `loop.maxParallelToolCalls` at a time, each slot passing straight to the
 * next call in the step its call ended, as the turn's lanes did (`forEachAtMost` without a
 * `waitUntil`; through `condition` the calls would start later and runs in flight would not
 * replay). A call that fails (a cancellation) takes no more calls in its slot, the others go on;
 * every call is waited for, so no tool still runs when the run reports its end. The steps up to
 * the end of the turn are those of the lanes too: keep this function and its `await`.
 */
async function runCalls(run: ResearchRun, turn: Turn): Promise<void> {
  await forEachAtMost(turn.calls, run.options.maxParallelToolCalls, (call) => runToolCall(run, turn, call), {
    othersGoOn: true,
  });
}

/** The failure type the Temporal worker gives an activity type it has not registered. */
const ACTIVITY_NOT_REGISTERED = 'NotFoundError';

/**
 * One call's observation, stored in the turn in the step it is known: its problem, an unknown
 * tool, a refusal, the tool's stored output, its failure, or that the tool has gone. A run with
 * sub-runs runs `delegate` itself (issue 30), the call's place in its reply naming its sub-runs.
 */
async function runToolCall(run: ResearchRun, turn: Turn, call: ToolCallRequest): Promise<void> {
  const answer = (result: CallResult): void => void turn.results.set(call.id, result);
  const note = (text: string): void => answer({ parts: [{ text }], tokens: estimateTokens(text) });
  if (call.problem) return note(call.problem);
  if (call.name === DELEGATE_TOOL && run.tree) return answer(await delegate(run, call, turn.calls.indexOf(call)));
  const spec = toolScheduleOf(run.setup, call.name);
  if (!spec)
    return note(
      `Error: there is no tool named "${call.name}". Available tools: ${toolNamesOf(run.setup).join(', ') || 'none'}.`,
    );
  if (spec.requiresApproval) {
    const refusal = approvalRefusal(call.name, await run.awaitApproval(call), run.options.approvalTimeoutMinutes);
    if (refusal) return note(refusal);
  }
  try {
    const outcome = await runActivities.runTool(call.name, toolActivityOptions(spec.activity, call.arguments), {
      callId: call.id,
      arguments: call.arguments,
      ...toolCallRunFields({ workflowId: run.workflowId, limits: run.state.limits }, leanActivityInputs()),
    });
    return answer({ parts: [{ ref: outcome.observation.ref }], tokens: outcome.tokens });
  } catch (error) {
    if (isCancellation(error)) throw error;
    // A tool the run started with that the worker no longer registers (the SDK's NotFoundError, after the tool's attempts).
    if (run.setup.toolSpecs !== undefined && failureType(error) === ACTIVITY_NOT_REGISTERED)
      return note(goneToolObservation(call.name, toolNamesOf(run.setup)));
    return note(`Error: the tool "${call.name}" failed: ${rootMessage(error)}`);
  }
}
