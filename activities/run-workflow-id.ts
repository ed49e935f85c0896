import { Context } from '@temporalio/activity';

/**
 * The workflow id of the run an activity works for: the one its input carries (runs recorded
 * before issue 34's history trim sent it in every model and tool call), else the activity's own
 * workflow's, from its context: the same id, without repeating it in each call's history event.
 */
export function runWorkflowId(carried: string | undefined): string {
  if (carried !== undefined) return carried;
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (workflowId === undefined) throw new Error('an activity of a run was started outside a workflow: no workflow id');
  return workflowId;
}
