import type { JsonSchema, ToolActivitySettings } from '../../src/core/tool-spec';

/** What a tool's handler gets besides its arguments. */
export interface ToolContext {
  /** Aborted when the activity is cancelled (run cancelled, timed out); stop work promptly. */
  signal: AbortSignal;
  /** Report liveness (the wrapper also heartbeats on a timer while the handler runs). */
  heartbeat(details?: unknown): void;
  workflowId: string;
  callId: string;
  /**
   * Records what this attempt has done (e.g. that its request left): heartbeated now and with
   * every timer heartbeat, so the next attempt reads it as `previousAttemptDetails`.
   */
  recordAttemptState?(state: Record<string, unknown>): void;
  /** 1 for the first attempt of this call, 2 for its first retry, … */
  attempt?: number;
  /**
   * The last details the previous attempt heartbeated (undefined on the first attempt): what it
   * had done before it failed or its worker died, e.g. whether a request had left.
   */
  previousAttemptDetails?: unknown;
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
