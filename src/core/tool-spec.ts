/** A JSON schema object describing a tool's arguments. */
export type JsonSchema = Record<string, unknown>;

/**
 * How the workflow schedules one tool's activity. Every field has a default so a tool only
 * states what differs.
 */
export interface ToolActivitySettings {
  /** Longest one attempt may run. Default 300 s. */
  startToCloseSeconds: number;
  /** The tool must heartbeat at least this often or the attempt is failed and retried. Default 30 s. */
  heartbeatSeconds: number;
  /** Attempts before the failure becomes an observation for the model. Default 3. */
  maxAttempts: number;
  /** First retry delay. Default 1 s. */
  initialRetrySeconds: number;
  /** Task queue of the fleet that runs this tool; default: the run's own task queue. */
  taskQueue?: string;
}

export const DEFAULT_TOOL_ACTIVITY_SETTINGS: ToolActivitySettings = {
  startToCloseSeconds: 300,
  heartbeatSeconds: 30,
  maxAttempts: 3,
  initialRetrySeconds: 1,
};

/**
 * What the workflow keeps of one of its run's tools: enough to schedule and guard its calls.
 * Since `tool-specs-by-reference` (issue 18) it is all that history holds of a tool; how the tool
 * is described to the model (description, parameters) is in the run's stored specs.
 */
export interface ToolSchedule {
  name: string;
  activity: ToolActivitySettings;
  /** The run waits for an approval (update `approveToolCall`) before each call of this tool. */
  requiresApproval: boolean;
}

/** A tool as the model is shown it and the workflow schedules it: name, description, parameters, scheduling. */
export interface ToolSpec extends ToolSchedule {
  description: string;
  parameters: JsonSchema;
}

/** The part of a spec the workflow keeps in history. */
export function toolScheduleOf(spec: ToolSchedule): ToolSchedule {
  return { name: spec.name, activity: spec.activity, requiresApproval: spec.requiresApproval };
}

/**
 * The observation for a call of a tool the run was given at its start but no tool worker offers
 * any more (its MCP server no longer lists it, or the worker's tools were configured otherwise):
 * the run's tool list is fixed when it starts, so the model is told, not shown another list.
 */
export function goneToolObservation(name: string, runTools: string[]): string {
  return (
    `Error: the tool "${name}" is no longer offered: it was available when this research started, but the worker that took the call ` +
    `does not have it now (its MCP server may no longer list it, or the worker was configured without it). ` +
    `Use another tool${runTools.length > 1 ? ` (this research's tools: ${runTools.filter((tool) => tool !== name).join(', ')})` : ''} or answer with what you have.`
  );
}

/**
 * Tool names from a comma-separated list, as `REACT_AGENT_TOOLS` and `--tools` take them:
 * `none` (or nothing but commas and spaces) is no tools, names are trimmed.
 */
export function toolNamesFromList(list: string): string[] {
  if (list.trim() === 'none') return [];
  return list
    .split(',')
    .map((name) => name.trim())
    .filter(Boolean);
}
