import type { JsonSchema, ToolActivitySettings } from '../../src/core/tool-spec';

/** What a tool's handler gets besides its arguments. */
export interface ToolContext {
  /** Aborted when the activity is cancelled (run cancelled, timed out); stop work promptly. */
  signal: AbortSignal;
  /** Report liveness (the wrapper also heartbeats on a timer while the handler runs). */
  heartbeat(details?: unknown): void;
  workflowId: string;
  callId: string;
}

/**
 * A tool the agent can call. Each becomes an activity named after the tool, so it shows in the
 * Web UI under its own name.
 */
export interface ToolDefinition {
  /** Activity and tool name: letters, digits, `_` and `-`. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** JSON schema of the arguments object. */
  parameters: JsonSchema;
  /**
   * When true, the run waits (with a timeout) for someone to approve each call of this tool
   * (`react-agent approve`); a denial or a timeout becomes the observation. Default false.
   */
  requiresApproval?: boolean;
  /** Scheduling overrides; defaults in DEFAULT_TOOL_ACTIVITY_SETTINGS. */
  activity?: Partial<ToolActivitySettings>;
  /**
   * Does the work and returns the observation text. Throw `ToolInputError` for problems the
   * model can fix (the message becomes its observation, no retry); any other error is retried
   * by Temporal and, when attempts run out, becomes an observation naming the error.
   */
  run(args: Record<string, unknown>, context: ToolContext): Promise<string>;
}

/** A problem with the call that the model can correct: becomes the observation, never retried. */
export class ToolInputError extends Error {
  override readonly name = 'ToolInputError';
}
