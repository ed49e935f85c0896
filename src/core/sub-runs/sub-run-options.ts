/**
 * Sub-runs (issue 30): a run that may delegate hands sub-questions to child `researchAgent` runs
 * through the `delegate` tool. What the input says about it, and what a child's input says.
 */

/** The run input's `subruns` field: whether and how a run may delegate. Off when absent. */
export interface SubRunOptions {
  /**
   * Sub-runs of one `delegate` call running at once (`--subruns N`).
   * @asType integer
   * @minimum 1
   * @maximum 16
   */
  maxParallel: number;
  /**
   * How many levels of sub-runs a tree may have below its lead: 1 (the default) lets the lead
   * delegate and refuses its sub-runs' own `delegate` calls.
   * @asType integer
   * @minimum 1
   * @maximum 3
   */
  maxDepth?: number;
  /**
   * Where this run is in its tree: 0 for the lead (the default), written by the parent for each
   * sub-run it starts.
   * @asType integer
   * @minimum 0
   * @maximum 3
   */
  depth?: number;
  /**
   * The workflow id of the tree's lead run (`ReactTreeId`), written by the parent for each sub-run;
   * a lead's own id when absent.
   * @maxLength 1000
   */
  lead?: string;
}

/** How deep sub-runs may go when the input does not say. */
export const DEFAULT_SUB_RUN_DEPTH = 1;

/** Most tasks one `delegate` call may hand out. */
export const MAX_DELEGATED_TASKS = 8;

/** The tool a run that may delegate is offered. */
export const DELEGATE_TOOL = 'delegate';

/** A run's place in its tree: its depth, how deep the tree may go, and its lead. */
export interface TreePosition {
  depth: number;
  maxDepth: number;
  maxParallel: number;
  lead: string;
}

/** Where the run of `workflowId` with these options stands in its tree; undefined when it has no sub-runs. */
export function treePosition(options: SubRunOptions | undefined, workflowId: string): TreePosition | undefined {
  if (!options) return undefined;
  return {
    depth: options.depth ?? 0,
    maxDepth: options.maxDepth ?? DEFAULT_SUB_RUN_DEPTH,
    maxParallel: options.maxParallel,
    lead: options.lead ?? workflowId,
  };
}

/** Whether a run at this position may start sub-runs (its depth is above the tree's limit). */
export function mayDelegate(position: TreePosition | undefined): position is TreePosition {
  return position !== undefined && position.depth < position.maxDepth;
}

/** The `subruns` a sub-run of a run at `position` is started with. */
export function childSubRunOptions(position: TreePosition): SubRunOptions {
  return {
    maxParallel: position.maxParallel,
    maxDepth: position.maxDepth,
    depth: position.depth + 1,
    lead: position.lead,
  };
}

/**
 * The observation for a `delegate` call the run may not make: a sub-run at the tree's depth limit,
 * or a run started without sub-runs.
 */
export function delegationRefusal(position: TreePosition | undefined): string {
  if (!position)
    return `Error: there is no tool named "${DELEGATE_TOOL}": this research was started without sub-runs. Use your other tools.`;
  return (
    `Error: "${DELEGATE_TOOL}" is refused: this research is itself a sub-run at depth ${position.depth}, and the ` +
    `research it belongs to allows sub-runs ${position.maxDepth} level${position.maxDepth === 1 ? '' : 's'} deep. ` +
    `Research this part yourself with your other tools.`
  );
}

/**
 * The workflow id of the sub-run for task `task` (0-based) of the call at `callIndex` (0-based)
 * in the reply of model call `modelCall`: deterministic, under the parent's id, unique within the
 * run (model calls are numbered across continue-as-new).
 */
export function subRunWorkflowId(parentWorkflowId: string, modelCall: number, callIndex: number, task: number): string {
  return `${parentWorkflowId}/sub-${modelCall}${callIndex > 0 ? `.${callIndex + 1}` : ''}-${task + 1}`;
}
