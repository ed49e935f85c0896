import { condition } from '@temporalio/workflow';
import type { ToolCallRequest } from '../src/core/protocols';
import { approvalDecisionProblem, type ApprovalDecision } from '../src/core/run-steering';
import { preview } from '../src/core/text';

/**
 * The tool calls of a run waiting for approval (update `approveToolCall`) and the decisions that
 * came: a call waits in {@link ToolApprovals.awaitDecision}, the update's handler records with
 * {@link ToolApprovals.decide}, and `progress` shows {@link ToolApprovals.awaiting}.
 */
export class ToolApprovals {
  private readonly decisions = new Map<string, ApprovalDecision>();
  /** The calls waiting, by id: tool name and a preview of the arguments. */
  readonly awaiting = new Map<string, { tool: string; arguments: string }>();

  /** Records a decision (the update's validator checked it: {@link ToolApprovals.problem}). */
  decide(decision: ApprovalDecision): { callId: string; approved: boolean } {
    this.decisions.set(decision.callId, decision);
    return { callId: decision.callId, approved: decision.approved };
  }

  /**
   * Records a decision and returns once the waiting call has taken it (its wait's timer cancelled,
   * the call gone on), so the update completes after what it caused, whatever promise turns the
   * handler's interceptors add: a run's history does not depend on whether it is traced.
   */
  async decideAndAwaitEffect(decision: ApprovalDecision): Promise<{ callId: string; approved: boolean }> {
    const decided = this.decide(decision);
    await condition(() => !this.awaiting.has(decision.callId));
    return decided;
  }

  /** Why a decision is refused: malformed, or for no call that is waiting. */
  problem(decision: ApprovalDecision | undefined): string | undefined {
    return approvalDecisionProblem(decision, [...this.awaiting.keys()]);
  }

  /** Waits for a decision on `call`; undefined when none came within `timeoutMinutes`. */
  async awaitDecision(call: ToolCallRequest, timeoutMinutes: number): Promise<ApprovalDecision | undefined> {
    this.awaiting.set(call.id, { tool: call.name, arguments: preview(JSON.stringify(call.arguments), 300) });
    try {
      const decided = await condition(() => this.decisions.has(call.id), `${timeoutMinutes * 60} seconds`);
      return decided ? this.decisions.get(call.id) : undefined;
    } finally {
      this.awaiting.delete(call.id);
    }
  }
}
