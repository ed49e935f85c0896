import type { Script, ScriptedReply, ScriptedRequest } from '../../fakes/scripted-model-server';
import { countAssistantMessages } from '../../fakes/scripted-model-server';

/**
 * Routes model requests to a per-run script by the workflow-id header, so one scripted server
 * serves many runs at once. A scenario is either a list of replies (turn i gets reply i) or a
 * function of the turn.
 */
export class Scenarios {
  private readonly byWorkflow = new Map<string, (turn: number, request: ScriptedRequest) => ScriptedReply>();

  add(
    workflowId: string,
    replies: ScriptedReply[] | ((turn: number, request: ScriptedRequest) => ScriptedReply),
  ): string {
    const pick = Array.isArray(replies)
      ? (turn: number) => replies[Math.min(turn, replies.length) - 1] as ScriptedReply
      : replies;
    this.byWorkflow.set(workflowId, pick);
    return workflowId;
  }

  /** A sub-run (`<lead id>/sub-…`, issue 30) is answered by its lead's scenario, which tells them apart by `request.workflowId`. */
  readonly script: Script = (request) => {
    const scenario = request.workflowId
      ? (this.byWorkflow.get(request.workflowId) ?? this.byWorkflow.get(request.workflowId.split('/sub-')[0] as string))
      : undefined;
    if (!scenario) return { status: 500, errorMessage: `no scenario for workflow ${request.workflowId}` };
    return scenario(countAssistantMessages(request.messages) + 1, request);
  };
}

let sequence = 0;
/** A fresh workflow id for a test run. */
export function runId(label: string): string {
  sequence += 1;
  return `${label}-${process.pid}-${sequence}-${Date.now().toString(36)}`;
}

export const toolCall = (
  name: string,
  args: Record<string, unknown>,
  thought = `I will use ${name}.`,
): ScriptedReply => ({
  content: `<think>${thought}</think>\n<tool_call>\n${JSON.stringify({ name, arguments: args })}\n</tool_call>`,
});

export const answer = (text: string, thought = 'I know enough now.'): ScriptedReply => ({
  content: `<think>${thought}</think>\n<answer>${text}</answer>`,
});
