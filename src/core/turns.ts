import type { MessagePart, PendingMessage } from './messages';
import type { Observation, Protocol, ToolCallRequest } from './protocols';
import { preview } from './text';

/** Rough token estimate of text the workflow writes itself (notes, tags). */
export const estimateTokens = (text: string) => Math.ceil(text.length / 4);

/** What came back for one tool call: parts to compose the observation from, and its token count. */
export interface CallResult {
  parts: MessagePart[];
  tokens: number;
}

/** One turn's tool calls and what came back for each. */
export interface Turn {
  calls: ToolCallRequest[];
  results: Map<string, CallResult>;
}

/** A turn of calls none of which ran: answered, when the run ends, with why. */
export function unansweredTurn(calls: ToolCallRequest[]): Turn {
  return { calls, results: new Map() };
}

/** The messages answering every call of the turn, in call order, with `reason` for calls that have no result. */
export function answerTurn(
  protocol: Protocol,
  turn: Turn,
  reason: string,
): { messages: PendingMessage[]; tokens: number } {
  let tokens = 0;
  const observations: Observation[] = turn.calls.map((call) => {
    const result = turn.results.get(call.id) ?? { parts: [{ text: reason }], tokens: estimateTokens(reason) };
    tokens += result.tokens + 10;
    return { callId: call.id, name: call.name, parts: result.parts };
  });
  return { messages: protocol.renderObservations(observations), tokens };
}

/** The calls of a turn not yet answered, as `name(arguments preview)`, for the `progress` query. */
export function openCallsPreview(turn: Turn | undefined): string[] {
  if (!turn) return [];
  return turn.calls
    .filter((call) => !turn.results.has(call.id))
    .map((call) => `${call.name || '?'}(${preview(JSON.stringify(call.arguments), 80)})`);
}
