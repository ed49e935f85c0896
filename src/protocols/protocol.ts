import type { MessagePart, PendingMessage } from '../messages';
import type { ToolSpec } from '../tool-spec';

/** One tool call the model asked for, as parsed from its output. */
export interface ToolCallRequest {
  /** Unique within the run (`call-<modelCall>-<index>` for text protocols). */
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
}

/**
 * A protocol renders tools into the request and parses the model's output. It is pure and
 * workflow-safe: activities use it to parse, the workflow uses it to compose messages.
 */
export interface Protocol {
  readonly name: string;
  /** Stop sequences for every model call. */
  readonly stop: string[];
  /** The system message: instructions, tools and today's date (YYYY-MM-DD). */
  renderSystemPrompt(tools: ToolSpec[], today: string): string;
  /** Cuts anything the model should not have written (e.g. a hallucinated observation). */
  cleanOutput(content: string): string;
  /** Parses a cleaned output; never throws. */
  parse(content: string, modelCall: number): ParsedTurn;
  /** The message that carries the observations of one turn's tool calls, in call order. */
  renderObservations(observations: MessagePart[][]): PendingMessage;
  /** The message sent back when the output was neither a tool call nor an answer. */
  renderCorrection(problem: string): PendingMessage;
  /** The text appended to ask for the final answer when a budget ran out. */
  finalAnswerRequest(reason: string): string;
}
