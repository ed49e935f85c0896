import type { ToolCallRequest } from '../src/core/protocols';
import { toolNamesOf } from '../src/core/run-state';
import { delegatedTasks, subRunQuestion } from '../src/core/sub-runs/delegate-tool';
import { subRunLimits } from '../src/core/sub-runs/sub-run-budget';
import {
  childSubRunOptions,
  DELEGATE_TOOL,
  delegationRefusal,
  mayDelegate,
  subRunWorkflowId,
} from '../src/core/sub-runs/sub-run-options';
import { delegationObservation, subRunRecord, withSubRuns } from '../src/core/sub-runs/sub-run-reports';
import { estimateTokens, type CallResult } from '../src/core/turns';
import type { ResearchRun } from './research-run';

/**
 * A `delegate` call (issue 30), run by the workflow itself: its tasks read, each given limits
 * carved from what the run has left, each started as a child `researchAgent` (the run's model,
 * protocol, loop options and tools unless the task narrows them), and the observation is their
 * reports. Their model calls, tokens and cost are the run's from then on. `callIndex` is the
 * call's place in its reply, for the sub-runs' deterministic ids. Two `delegate` calls of one reply
 * run one after the other, so the second's limits are carved from what the first left.
 */
export function delegate(run: ResearchRun, call: ToolCallRequest, callIndex: number): Promise<CallResult> {
  return run.team.oneAtATime(() => delegateNow(run, call, callIndex));
}

/** {@link delegate} once the `delegate` calls before it in the turn have ended. */
async function delegateNow(run: ResearchRun, call: ToolCallRequest, callIndex: number): Promise<CallResult> {
  const note = (text: string): CallResult => ({ parts: [{ text }], tokens: estimateTokens(text) });
  const { tree } = run;
  if (!mayDelegate(tree)) return note(delegationRefusal(tree));
  const subRunTools = toolNamesOf(run.setup).filter((name) => name !== DELEGATE_TOOL);
  const read = delegatedTasks(call.arguments, subRunTools);
  if ('problem' in read) return note(read.problem);
  const carved = subRunLimits(run.state, read.tasks.length, tree.maxParallel, Date.now(), run.options.finalAnswerPhase);
  if ('problem' in carved) return note(carved.problem);
  const { modelCalls } = run.state;
  const starts = read.tasks.map((task, index) => ({
    workflowId: subRunWorkflowId(run.workflowId, modelCalls, callIndex, index),
    question: task.question,
    input: {
      question: subRunQuestion(task, run.input.question),
      protocol: run.protocol.name,
      model: run.modelOptions(),
      tools: task.tools ?? subRunTools,
      limits: carved.limits,
      ...(run.input.loop ? { loop: run.input.loop } : {}),
      subruns: childSubRunOptions(tree),
    },
  }));
  const outcomes = await run.team.run(starts, tree.maxParallel);
  run.state = withSubRuns(run.state, outcomes.map(subRunRecord));
  return note(delegationObservation(outcomes, run.state.limits.maxObservationCharacters));
}
