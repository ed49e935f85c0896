import type { CompressionBudgets } from './compression-plan';
import type { PendingMessage, StoredText, TokenUsage } from './messages';
import type { ParsedTurn, ProtocolName } from './protocols/protocol';
import type { ModelOptions } from './model-options';
import type { JsonSchema, ToolSchedule } from './tool-spec';

/**
 * Inputs and outputs of the activities, shared by the workflow (which schedules them) and the
 * activities (which implement them). Everything here is small: references, previews and the
 * parsed facts the workflow decides on, never a whole context.
 */

/** How the workflow schedules the model activity; comes from the worker's configuration. */
export interface ModelActivitySettings {
  startToCloseSeconds: number;
  heartbeatSeconds: number;
  maxAttempts: number;
  /** Task queue of the model fleet; default the run's own. */
  taskQueue?: string;
}

export interface StartConversationInput {
  question: string;
  protocol: ProtocolName;
  /** Tools the run asked for; undefined = every tool the worker has. */
  tools?: string[];
  /** Today in workflow time, YYYY-MM-DD, for the system prompt. */
  today: string;
  /** JSON schema the final answer must match; described in the system prompt. */
  answerSchema?: JsonSchema;
  /**
   * Store the run's tool specs (descriptions, parameter schemas) as one content-addressed blob and
   * return its reference (`toolSpecs`) with only each tool's {@link ToolSchedule} in `tools`
   * (issue 18, marker `tool-specs-by-reference`). Absent in runs started before: the whole specs
   * come back in `tools`.
   */
  storeToolSpecs?: boolean;
  /**
   * The run may delegate (issue 30): the `delegate` tool is added to its tools, described with
   * this many sub-runs at once. Absent for runs without sub-runs.
   */
  delegate?: { maxParallel: number };
  /**
   * Learn the model server's context window here too (issue 34, marker `light-bookkeeping`),
   * instead of in a `learnContextWindow` activity of its own: `model` absent = the worker's default
   * model. The answer comes back in `StartConversationOutput.contextWindow`. Absent in runs opened
   * before, which asked `learnContextWindow` next.
   */
  contextWindow?: Partial<LearnContextWindowInput>;
}

export interface StartConversationOutput {
  conversation: string;
  /**
   * The run's tools as the workflow schedules them: with `storeToolSpecs`, name, activity settings
   * and approval only; in runs started before, the whole specs (a `ToolSpec` is a `ToolSchedule`).
   */
  tools: ToolSchedule[];
  /**
   * With `storeToolSpecs`: the reference (`sha256:…`) of the stored JSON array of the run's
   * `ToolSpec`s, fixed for the run's life; the model activity sends its schemas from it.
   */
  toolSpecs?: string;
  modelActivity: ModelActivitySettings;
  /** The model this run will use (the input's, else the worker's default). */
  model: string;
  /** Token estimate of the system prompt and question. */
  contextTokens: number;
  /**
   * With `StartConversationInput.contextWindow`: what the model server said of its context window
   * (learned once per worker and model, then cached: activities/context-window-cache.ts); absent
   * when asking it failed, as when the `learnContextWindow` activity failed (the window stays unknown).
   */
  contextWindow?: LearnContextWindowOutput;
}

export interface CallModelInput {
  /**
   * The run's workflow id, as runs recorded before issue 34's history trim sent it; absent, the
   * activity takes its own workflow's id from its context (the same id, 40–50 bytes less a call).
   */
  workflowId?: string;
  /** 1-based number of this model call in the run; sent to the server as a header for correlation. */
  modelCall: number;
  /** The conversation so far. */
  conversation: string;
  /** Messages to append before calling (the previous turn's observations). */
  append: PendingMessage[];
  model: ModelOptions & { model: string };
  protocol: ProtocolName;
  /**
   * The run's tool names (native tool calling sends their schemas). Absent when `toolSpecs` is
   * sent: every tool of the stored specs, which are the run's tools in the run's order.
   */
  tools?: string[];
  /**
   * The run's stored tool specs (`StartConversationOutput.toolSpecs`), with a protocol that sends
   * them (native tool calling): the schemas the run started with, whatever the worker offers now.
   * Absent for the other protocols (the system prompt has them) and in runs opened before
   * `tool-specs-by-reference` (the worker's registry describes `tools` by name).
   */
  toolSpecs?: string;
  /** When true the call is the final-answer call; no tools should be used. */
  finalAnswer?: boolean;
}

export interface CallModelOutput {
  /** The conversation including the appended messages and the model's reply. */
  conversation: string;
  assistant: StoredText;
  turn: ParsedTurn;
  usage: TokenUsage;
  /** Context size after this call: prompt + completion tokens. */
  contextTokens: number;
  /** The server's finish reason: `stop`, `tool_calls`, or `length` when the reply hit the output token limit. */
  finishReason: string;
  /**
   * Our own estimate (o200k) of the prompt this call sent, counted like compression counts. With
   * `usage.promptTokens` it gives the server-to-estimate ratio the workflow calibrates with.
   * Absent in histories recorded before it existed.
   */
  estimatedPromptTokens?: number;
}

export interface ToolActivityInput {
  /** The run's workflow id, as runs recorded before issue 34's history trim sent it; absent, the activity's own (its context). */
  workflowId?: string;
  callId: string;
  arguments: Record<string, unknown>;
  /**
   * Longest observation the model sees; the whole output stays in the store. Absent: the run
   * limits' default (`DEFAULT_LIMITS.maxObservationCharacters`, 40,000), which runs do not repeat in every call.
   */
  maxObservationCharacters?: number;
}

export interface ToolActivityOutput {
  /** What the model sees (possibly truncated with a note). */
  observation: StoredText;
  /** The whole output, when the observation was truncated. */
  fullOutput?: StoredText;
  /** The tool reported a problem the model can act on (bad arguments, not found, …). */
  isError: boolean;
  /** Tokens of the observation. */
  tokens: number;
}

export interface FinishTranscriptInput {
  conversation: string;
  append: PendingMessage[];
}

export interface FinishTranscriptOutput {
  conversation: string;
  messages: number;
}

/** The `compressContext` activity's input: the conversation, and what to compress it to (`CompressionBudgets`, src/core/compression-plan.ts). */
export interface CompressContextInput extends CompressionBudgets {
  workflowId: string;
  conversation: string;
  /** Pending messages, appended before compressing. */
  append: PendingMessage[];
  protocol: ProtocolName;
  /** The run's question (kept first; an incremental summary is attached to it). */
  question: string;
  model: ModelOptions & { model: string };
  /**
   * When the model's context window is known: the most a summary request may take, so the
   * summariser's own call fits the window (its prompt in our estimate's units, its reply in the
   * server's tokens). Older turns are then summarised in pieces that fit.
   */
  summaryLimits?: { promptTokens: number; replyTokens: number };
}

/** What the `learnContextWindow` activity asks the model server about. */
export interface LearnContextWindowInput {
  /** The run's model. */
  model: string;
  /** The run's `model.maxOutputTokens`, if it sets one (else the worker's default applies). */
  maxOutputTokens?: number;
}

export interface LearnContextWindowOutput {
  /** The model server's context window in its tokens, when one of its endpoints said it; absent when none did. */
  contextWindow?: number;
  /** Where it was read, e.g. "llama-server /props (default_generation_settings.n_ctx)". */
  source?: string;
  /** The `max_tokens` the run's model calls ask for: the run's `model.maxOutputTokens`, else the worker's default. */
  maxOutputTokens: number;
  /** What a prompt may take of the window (src/core/context-window.ts `promptBudgetOf`), for display; the workflow computes its own. */
  promptBudget?: number;
}

export interface CompressContextOutput {
  conversation: string;
  /** Token estimate (tiktoken o200k, uncalibrated) of the compressed conversation. */
  contextTokens: number;
  stubbedObservations: number;
  summarizedTurns: number;
}
