import type { ChatMessage } from './messages';
import type { Protocol } from './protocols/protocol';
import { preview } from './text';

/**
 * What a context compression does to a conversation, decided as pure functions: which
 * observations become stubs, whether older turns are folded into a summary, and the messages
 * that come out. The `compressContext` activity (activities/compression-activity.ts) carries it
 * out: it stores the stubbed texts, asks the model for the summary and stores the result.
 *
 * A conversation is the system message, the question, then turns: an assistant message and what
 * follows it up to the next one.
 */

/** What the workflow asks of a compression besides the conversation (part of `CompressContextInput`). */
export interface CompressionBudgets {
  /** Turns at the end kept whole: their observations are never stubbed nor summarised. */
  keepRecentTurns: number;
  /** Stop compressing once our estimate (o200k, uncalibrated) is at or under this; the workflow converts its target into these units. */
  targetTokens: number;
  /** Whether older turns may be folded into a model-written summary. */
  summarize: boolean;
  /**
   * For the final answer call (issue 16): the request that ends the conversation, added after
   * compressing as the last user text (counted in `targetTokens`); with `dropTurns`, every turn and
   * any summary are left out, so the question alone comes before it.
   */
  finalAnswer?: { request: string; dropTurns?: boolean };
}

/** Observations shorter than this stay whole: a stub would save nothing. */
export const STUB_MINIMUM_CHARACTERS = 600;
const STUB_PREFIX = '[Observation omitted to save context:';
const SUMMARY_MARKER = '\n\n[Summary of the research so far';

/** One turn: messages `start` (its assistant message) up to, not including, `end`. */
export interface TurnSpan {
  start: number;
  end: number;
}

/** The turns of a conversation, after its system message and question. */
export function turnSpans(messages: readonly ChatMessage[]): TurnSpan[] {
  const spans: TurnSpan[] = [];
  for (let index = 2; index < messages.length; index += 1) {
    if (messages[index]?.role === 'assistant') spans.push({ start: index, end: index + 1 });
    else if (spans.length) (spans.at(-1) as TurnSpan).end = index + 1;
  }
  return spans;
}

/** Whether a tool result becomes a stub: long enough to save something, and not a stub already. */
export function isStubbable(result: string): boolean {
  return result.length >= STUB_MINIMUM_CHARACTERS && !result.startsWith(STUB_PREFIX);
}

/** The stub that stands for a tool result: its length, its beginning, and where the whole text is stored. */
export function stubText(result: string, reference: string): string {
  return `${STUB_PREFIX} ${result.length.toLocaleString('en-US')} characters beginning "${preview(result, 160)}". The full text is in the transcript store as ${reference}.]`;
}

/** An observation message of which some tool results become stubs. */
export interface ObservationToStub {
  /** Its index in the conversation. */
  index: number;
  /** Its tool results in order, as the protocol reads them (`Protocol.observationResults`). */
  results: string[];
  /** For each result, whether it becomes a stub ({@link isStubbable}); at least one does. */
  stubbed: boolean[];
}

/** What to compress, decided before anything is stored or summarised. */
export interface CompressionPlan {
  /** Every turn of the conversation. */
  turns: TurnSpan[];
  /** The turns before the last `keepRecentTurns`: their observations stubbed, the turns folded into a summary when that is not enough. */
  oldTurns: TurnSpan[];
  /** The observations of the old turns with a result to stub (none when the turns are dropped). */
  stubs: ObservationToStub[];
  /** How many tool results become stubs, over all of {@link stubs}. */
  stubbedResults: number;
  /** The question alone comes out (`finalAnswer.dropTurns`): no stubs, no summary. */
  dropTurns: boolean;
}

/** The plan for a conversation: its turns, which are old, and which of their observations' results become stubs. */
export function planCompression(
  messages: readonly ChatMessage[],
  protocol: Protocol,
  budgets: CompressionBudgets,
): CompressionPlan {
  const turns = turnSpans(messages);
  const oldTurns = turns.slice(0, Math.max(0, turns.length - budgets.keepRecentTurns));
  const dropTurns = budgets.finalAnswer?.dropTurns === true;
  const stubs: ObservationToStub[] = [];
  for (const turn of dropTurns ? [] : oldTurns) {
    for (let index = turn.start; index < turn.end; index += 1) {
      const results = protocol.observationResults(messages[index] as ChatMessage);
      const stubbed = results.map(isStubbable);
      if (stubbed.includes(true)) stubs.push({ index, results, stubbed });
    }
  }
  const stubbedResults = stubs.reduce((sum, stub) => sum + stub.stubbed.filter(Boolean).length, 0);
  return { turns, oldTurns, stubs, stubbedResults, dropTurns };
}

/**
 * Whether the old turns are folded into a summary: allowed, there are some, and the stubbed
 * conversation as it will be sent (`sentTokens`, asked only when the rest allows a summary) is
 * over the target.
 */
export function summaryDue(plan: CompressionPlan, budgets: CompressionBudgets, sentTokens: () => number): boolean {
  return !plan.dropTurns && budgets.summarize && plan.oldTurns.length > 0 && sentTokens() > budgets.targetTokens;
}

/** The messages a summary folds in: every message of the old turns (from the conversation as it was, not stubbed). */
export function foldedMessages(plan: CompressionPlan, original: readonly ChatMessage[]): ChatMessage[] {
  return original.slice(2, foldedEnd(plan));
}

function foldedEnd(plan: CompressionPlan): number {
  return (plan.oldTurns.at(-1) as TurnSpan).end;
}

/** The question message read apart: the question's own text and the summary a compression attached to it ('' when none). */
export function readQuestion(question: ChatMessage): { text: string; summary: string; hasSummary: boolean } {
  const markerAt = question.content.indexOf(SUMMARY_MARKER);
  if (markerAt < 0) return { text: question.content, summary: '', hasSummary: false };
  return {
    text: question.content.slice(0, markerAt),
    summary: question.content.slice(question.content.indexOf(':]\n', markerAt) + 3),
    hasSummary: true,
  };
}

/**
 * The conversation with the old turns folded into `summary`: the system message, the question
 * with the summary attached (naming `stored`, the conversation before compressing), the recent turns.
 */
export function withSummary(
  plan: CompressionPlan,
  messages: readonly ChatMessage[],
  summary: string,
  stored: string,
): ChatMessage[] {
  const question = readQuestion(messages[1] as ChatMessage);
  const content = `${question.text}${SUMMARY_MARKER}, written to save context; the steps before it are in the transcript store as ${stored}:]\n${summary}`;
  return [messages[0] as ChatMessage, { role: 'user', content }, ...messages.slice(foldedEnd(plan))];
}

/** The question alone: every turn and any summary left out, with a note naming `stored` (where they are) when there were any. */
export function questionAlone(plan: CompressionPlan, messages: readonly ChatMessage[], stored: string): ChatMessage[] {
  const question = readQuestion(messages[1] as ChatMessage);
  const note =
    plan.turns.length || question.hasSummary
      ? `\n\n[The research steps so far do not fit the model's context window; they are in the transcript store as ${stored}.]`
      : '';
  return [messages[0] as ChatMessage, { role: 'user', content: `${question.text}${note}` }];
}

/** The conversation as the next model call sends it: with the final answer request as its last user text (added to a last user message, else a new one). */
export function withFinalRequest(
  messages: readonly ChatMessage[],
  finalAnswer: CompressionBudgets['finalAnswer'],
): ChatMessage[] {
  if (finalAnswer === undefined) return [...messages];
  const last = messages.at(-1);
  if (last?.role === 'user')
    return [...messages.slice(0, -1), { ...last, content: `${last.content}\n\n${finalAnswer.request}` }];
  return [...messages, { role: 'user', content: finalAnswer.request }];
}
