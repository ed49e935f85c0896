import type { PendingMessage, TokenUsage } from './messages';
import type { RunLimits } from './run-limits';
import type { RunDetails } from './run-result';
import type { StuckDetectorState } from './stuck-detection';
import type { UnusableReplyStreak } from './unusable-replies';
import type { ToolSchedule } from './tool-spec';
import type { ModelActivitySettings } from './activity-contracts';
import type { SubRunTotals } from './sub-runs/sub-run-record';

/** What the run learned when its transcript was opened; carried so a continued run needs no new activity. */
export interface RunSetup {
  /** The run's tools as the workflow schedules them (whole specs in runs opened before `tool-specs-by-reference`). */
  tools: ToolSchedule[];
  /** Reference of the run's stored tool specs (absent in runs opened before `tool-specs-by-reference`). */
  toolSpecs?: string;
  modelActivity: ModelActivitySettings;
  model: string;
}

/** How a run schedules calls of the tool `name`; undefined when the run was not given it. */
export function toolScheduleOf(setup: RunSetup, name: string): ToolSchedule | undefined {
  return setup.tools.find((tool) => tool.name === name);
}

/** The names of a run's tools. */
export function toolNamesOf(setup: RunSetup): string[] {
  return setup.tools.map((tool) => tool.name);
}

/**
 * Everything a run needs to go on, small and serialisable: it is carried into the next run on
 * continue-as-new (history of the new run starts from here), and the `progress` query reads it.
 */
export interface RunState {
  /** Workflow time the first run started (the time budget counts from here across runs). */
  startedAt: number;
  limits: RunLimits;
  setup?: RunSetup;
  /** The conversation as the model will see it next (without `pending`). */
  conversation: string;
  /** Messages to append before the next model call (last turn's observations, notes). */
  pending: PendingMessage[];
  pendingTokens: number;
  /** The tool calls whose observations are in `pending`, for withholding them at the token limit. */
  pendingCallIds: string[];
  modelCalls: number;
  /** Model calls made in the current run (for continue-as-new). */
  modelCallsThisRun: number;
  toolCallsAnswered: number;
  usage: TokenUsage;
  /**
   * What the last model call cost in USD, when its model had a price: the room a cost budget keeps
   * for the final answer call (src/core/run-budgets.ts `costUsedUp`). Absent until a priced call.
   */
  lastCallCostUsd?: number;
  contextTokens: number;
  lastThought: string;
  stuck: StuckDetectorState;
  /** Truncated and malformed replies since the last usable one (absent in states carried by older runs: none). */
  unusableReplies?: UnusableReplyStreak;
  /**
   * The model server's tokens per token of our estimate, as the last model call reported
   * (src/core/token-calibration.ts); estimates are multiplied by it. Absent until a call reported one: 1.
   */
  serverTokensPerEstimatedToken?: number;
  answerAttempts: number;
  /**
   * The sub-runs this run delegated to (issue 30) and the model calls they made; their tokens and
   * cost are in `usage`. Absent until the run delegates.
   */
  subRuns?: SubRunTotals;
  /** The most tokens a reply may have (the run's `model.maxOutputTokens`, else the worker's), once learned at the start; what the context window keeps for the reply. */
  maxOutputTokens?: number;
  details: RunDetails;
}
