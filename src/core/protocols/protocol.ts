import type { ChatMessage, MessagePart, NativeToolCall, PendingMessage } from '../messages';
import type { ToolSpec } from '../tool-spec';

/** One tool call the model asked for, as parsed from its output. */
export interface ToolCallRequest {
  /** Unique within the run: the model's id for native calls, `call-<modelCall>-<index>` for text protocols. */
  id: string;
  /** Tool name as the model wrote it ('' when it could not be read). */
  name: string;
  arguments: Record<string, unknown>;
  /**
   * Set when the call could not be understood (bad JSON, no name, …). The workflow answers it
   * with this text as the observation, without running anything, so the model can correct itself.
   */
  problem?: string;
}

/** What the workflow decides on after a model call: parsed facts, never the whole output. */
export interface ParsedTurn {
  /** The model's reasoning, shortened for history. */
  thought: string;
  toolCalls: ToolCallRequest[];
  /** The final answer, when the model gave one. */
  answer?: string;
  /** Set when the output was neither a tool call nor an answer: the correction to send back. */
  problem?: string;
  /**
   * Set when the reply opened an `<answer>` and never closed it (tag protocols): it looks cut off,
   * and `answer` holds only what was written before the end. Absent in histories recorded before it existed.
   */
  unclosedAnswer?: true;
}

/** The model's raw reply: its text and, for native tool calling, its tool calls. */
export interface ModelReply {
  content: string;
  toolCalls: NativeToolCall[];
}

/** The observation of one tool call, composed from parts (text the workflow knows, blobs it references). */
export interface Observation {
  callId: string;
  name: string;
  parts: MessagePart[];
}

/** The protocols a run can choose. */
export const PROTOCOL_NAMES = ['deep-research', 'native', 'classic'] as const;
export type ProtocolName = (typeof PROTOCOL_NAMES)[number];

/**
 * A protocol renders tools into the request and parses the model's output. It is pure and
 * workflow-safe: activities use it to parse, the workflow uses it to compose messages.
 */
export interface Protocol {
  readonly name: ProtocolName;
  /** Stop sequences for every model call. */
  readonly stop: string[];
  /** Whether tools go to the API as JSON schemas (native tool calling) rather than in the prompt. */
  readonly nativeTools: boolean;
  /** The system message: instructions, tools (for text protocols) and today's date (YYYY-MM-DD). */
  renderSystemPrompt(tools: ToolSpec[], today: string): string;
  /** Cuts anything the model should not have written (e.g. a hallucinated observation). */
  cleanOutput(content: string): string;
  /**
   * Parses a cleaned reply; never throws. Calls past the first `maxToolCalls` (default
   * `DEFAULT_MAX_TOOL_CALLS_PER_REPLY`, src/core/protocols/tool-call-cap.ts) are not run: each is
   * answered with an observation saying so.
   */
  parse(reply: ModelReply, modelCall: number, maxToolCalls?: number): ParsedTurn;
  /** The messages that carry one turn's observations, in call order. */
  renderObservations(observations: Observation[]): PendingMessage[];
  /** The message sent back when the output was neither a tool call nor an answer. */
  renderCorrection(problem: string): PendingMessage;
  /** The text that asks for the final answer when a budget ran out. */
  finalAnswerRequest(reason: string): string;
  /** Whether a stored message carries tool results (observations) in this protocol's format. */
  isObservation(message: ChatMessage): boolean;
  /**
   * The tool result texts an observation message carries, in order, as compression reads them to
   * stub ([] for a message that is not an observation).
   */
  observationResults(message: ChatMessage): string[];
  /**
   * The observation message with its tool results, in the order {@link observationResults} gives
   * them, replaced by `results` (a missing one stays as it was); the rest of its text as it was.
   */
  withObservationResults(message: ChatMessage, results: readonly string[]): ChatMessage;
}
