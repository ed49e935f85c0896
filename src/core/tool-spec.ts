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

/** What the workflow knows about a tool: name, how to describe it, how to schedule it. */
export interface ToolSpec {
  name: string;
  description: string;
  parameters: JsonSchema;
  activity: ToolActivitySettings;
  /** The run waits for an approval (update `approveToolCall`) before each call of this tool. */
  requiresApproval: boolean;
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
