import type { CallModelInput, ToolActivityInput } from './activity-contracts';
import { DEFAULT_LIMITS, type RunLimits } from './run-limits';
import { toolNamesOf, type RunSetup } from './run-state';

/*
 * What a model or tool call carries of its run. Lean (issue 34, marker `lean-activity-inputs`):
 * only what the activity cannot learn for itself, so history grows by less per call; otherwise as
 * runs recorded before sent it, so they replay the calls they made.
 */

/** The run a model call is made for: its workflow id, its setup, and whether its protocol sends tool schemas. */
export interface ModelCallRun {
  workflowId: string;
  setup: RunSetup;
  nativeTools: boolean;
}

/**
 * A model call's fields from its run. Lean: no workflow id (the activity's context has it); with
 * native tool calling the stored specs' reference alone (they are the run's tools, in its order),
 * or the names in a run opened before the specs were stored; nothing of the tools for the other
 * protocols (the system prompt has them). Otherwise: the workflow id and the names, with the
 * reference under native tool calling.
 */
export function modelCallRunFields(
  run: ModelCallRun,
  lean: boolean,
): Pick<CallModelInput, 'workflowId' | 'tools' | 'toolSpecs'> {
  const specs = run.nativeTools && run.setup.toolSpecs !== undefined ? { toolSpecs: run.setup.toolSpecs } : {};
  if (!lean) return { workflowId: run.workflowId, tools: toolNamesOf(run.setup), ...specs };
  if (!run.nativeTools) return {};
  return run.setup.toolSpecs !== undefined ? specs : { tools: toolNamesOf(run.setup) };
}

/**
 * A tool call's fields from its run. Lean: no workflow id, and the observation limit only when it
 * is not the default (the tool activity applies {@link DEFAULT_LIMITS}' own). Otherwise both.
 */
export function toolCallRunFields(
  run: { workflowId: string; limits: RunLimits },
  lean: boolean,
): Pick<ToolActivityInput, 'workflowId' | 'maxObservationCharacters'> {
  const limit = run.limits.maxObservationCharacters;
  if (!lean) return { workflowId: run.workflowId, maxObservationCharacters: limit };
  return limit === DEFAULT_LIMITS.maxObservationCharacters ? {} : { maxObservationCharacters: limit };
}
