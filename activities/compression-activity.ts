import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CompressContextInput, CompressContextOutput } from '../src/core/activity-contracts';
import { MAX_REPLY_SHARE_OF_WINDOW, SUMMARY_REPLY_TOKENS, windowMargin, windowOfOverflowMessage } from '../src/core/context-window';
import { FailureTypes } from '../src/core/failure-types';
import type { ChatMessage } from '../src/core/messages';
import type { ProtocolName } from '../src/core/protocols';
import { preview } from '../src/core/text';
import { totalOfCounts } from '../src/domain/message-token-counts';
import { composeMessage, loadConversation, putMessage } from '../src/storage/conversation';
import { countedMessages, carriedConversationCounts, putCountedConversation } from './counted-conversation';
import type { ChatModel } from './model/chat-model';
import { WORKFLOW_ID_LABEL } from './model/chat-request-labels';
import { chatControls } from './model/chat-controls';
import { countMessageTokens, type TokenCounter } from './token-counter';
import { heartbeat } from './heartbeats';
import type { TranscriptStore } from '../src/storage/transcript-store';

export interface CompressionDependencies {
  /** The model that writes the summaries (activities/model/chat-model.ts). */
  chatModel: ChatModel;
  store: TranscriptStore;
  tokenCounter: TokenCounter;
}

/** Observations shorter than this stay whole: a stub would save nothing. */
const STUB_MINIMUM_CHARACTERS = 600;
const STUB_PREFIX = '[Observation omitted to save context:';
const SUMMARY_MARKER = '\n\n[Summary of the research so far';
/** Longest piece of one observation the summariser reads. */
const SUMMARY_OBSERVATION_CHARACTERS = 4_000;

/** The fewest tokens a piece of steps to summarise may have; less and there is no summary. */
const MIN_SUMMARY_PIECE_TOKENS = 64;

const SUMMARY_INSTRUCTIONS =
  "You keep a running summary of a research agent's work so it can continue with a shorter context. " +
  'Write the new summary: the facts found (with their sources), what was tried and did not work, and what is still open. ' +
  'Keep every number, name and URL that may matter for the answer. At most about 600 words, no preamble.';

/** The summariser's request: its instructions, the question, the summary so far and the steps to fold in. */
function summaryMessages(question: string, previousSummary: string, rendered: string): Array<{ role: 'system' | 'user'; content: string }> {
  return [
    { role: 'system', content: SUMMARY_INSTRUCTIONS },
    { role: 'user', content: `Question: ${question}\n\nSummary so far:\n${previousSummary || '(none yet)'}\n\nNew steps to fold in:\n\n${rendered}` },
  ];
}

/** One message as the summariser reads it: its role, its text (long ones cut), its native tool calls. */
function renderStep(message: ChatMessage): string {
  const text = message.content.length > SUMMARY_OBSERVATION_CHARACTERS ? `${message.content.slice(0, SUMMARY_OBSERVATION_CHARACTERS)} […]` : message.content;
  const calls = (message.toolCalls ?? []).map((call) => `\n[tool call] ${call.name} ${call.arguments}`).join('');
  return `### ${message.role}\n${text}${calls}`;
}

/** The conversation with the final answer request as its last user text: added to a last user message, else a new one. */
function withFinalRequest(messages: ChatMessage[], request: string): ChatMessage[] {
  const last = messages.at(-1);
  if (last?.role === 'user') return [...messages.slice(0, -1), { ...last, content: `${last.content}\n\n${request}` }];
  return [...messages, { role: 'user', content: request }];
}

interface TurnSpan {
  start: number;
  end: number;
}

function turnsOf(messages: ChatMessage[]): TurnSpan[] {
  const spans: TurnSpan[] = [];
  for (let index = 2; index < messages.length; index += 1) {
    if (messages[index]?.role === 'assistant') spans.push({ start: index, end: index + 1 });
    else if (spans.length) (spans.at(-1) as TurnSpan).end = index + 1;
  }
  return spans;
}

function isObservation(message: ChatMessage, protocol: ProtocolName): boolean {
  if (protocol === 'native') return message.role === 'tool';
  if (message.role !== 'user') return false;
  return protocol === 'classic' ? message.content.startsWith('Observation:') : message.content.includes('<tool_response>');
}

/**
 * A message's token count: the one carried for a message loaded with the conversation (the same
 * object, not stubbed or rewritten), else counted now and kept for the next time it is asked.
 */
function countsByMessage(messages: ChatMessage[], counts: number[], counter: TokenCounter): (message: ChatMessage) => number {
  const known = new Map(messages.map((message, index) => [message, counts[index] as number]));
  return (message) => {
    const count = known.get(message) ?? countMessageTokens(message, counter);
    known.set(message, count);
    return count;
  };
}

/**
 * Context compression, in two steps. First, observations older than the last K turns become
 * short stubs that name the stored full text (`sha256:…`), so nothing is lost and a reader sees
 * what the model saw. If that is not enough, older turns are folded into an incremental summary
 * written by the model ("old summary + new turns → new summary") and attached to the question;
 * when the model's context window is known the summary requests are sized to fit it.
 *
 * For the final answer call (`finalAnswer`, issue 16) the request for the answer is added last,
 * after compressing, and counts toward the target; `dropTurns` leaves the question alone.
 */
export function createCompressContext(dependencies: CompressionDependencies) {
  const { chatModel, store, tokenCounter } = dependencies;

  const stub = async (body: string): Promise<string> => {
    if (body.length < STUB_MINIMUM_CHARACTERS || body.startsWith(STUB_PREFIX)) return body;
    const reference = await store.putText(body);
    return `${STUB_PREFIX} ${body.length.toLocaleString('en-US')} characters beginning "${preview(body, 160)}". The full text is in the transcript store as ${reference}.]`;
  };

  const stubObservation = async (message: ChatMessage, protocol: ProtocolName): Promise<{ message: ChatMessage; stubbed: number }> => {
    let stubbed = 0;
    const replace = async (body: string) => {
      const replaced = await stub(body);
      if (replaced !== body) stubbed += 1;
      return replaced;
    };
    // A message with nothing stubbed is returned as it came, so its carried token count stays its own.
    const withContent = (content: string) => ({ message: stubbed ? { ...message, content } : message, stubbed });
    if (protocol === 'native') return withContent(await replace(message.content));
    if (protocol === 'classic') {
      const pieces = message.content.split(/(?=Observation: )/);
      const replaced = await Promise.all(pieces.map(async (piece) => (piece.startsWith('Observation: ') ? `Observation: ${await replace(piece.slice('Observation: '.length))}` : piece)));
      return withContent(replaced.join(''));
    }
    const parts = message.content.split(/(<tool_response>\n?[\s\S]*?\n?<\/tool_response>)/);
    const replaced = await Promise.all(
      parts.map(async (part) => {
        const match = /^<tool_response>\n?([\s\S]*?)\n?<\/tool_response>$/.exec(part);
        return match ? `<tool_response>\n${await replace(match[1] ?? '')}\n</tool_response>` : part;
      }),
    );
    return withContent(replaced.join(''));
  };

  /** One summary call: the summary so far and these steps (rendered) folded into a new summary. */
  const summarizeOnce = async (input: CompressContextInput, previousSummary: string, rendered: string, maxTokens: number): Promise<string> => {
    const context = Context.current();
    const reply = await chatModel.chat(
      {
        model: input.model.model,
        messages: summaryMessages(input.question, previousSummary, rendered),
        sampling: { temperature: 0.2, maxOutputTokens: maxTokens },
        labels: { [WORKFLOW_ID_LABEL]: input.workflowId, purpose: 'summary' },
      },
      chatControls({ signal: context.cancellationSignal, heartbeatTimeoutMs: context.info.heartbeatTimeoutMs, onProgress: () => context.heartbeat({ summarizing: true }) }),
    );
    return reply.content.trim();
  };

  /** `text` cut (marked) to at most `tokens` of our estimate; '' when nothing of it fits. */
  const cutToTokens = (text: string, tokens: number): string => {
    if (tokenCounter.count(text) <= tokens) return text;
    let cut = text;
    while (cut.length > 0 && tokenCounter.count(`${cut} […]`) > tokens) cut = cut.slice(0, Math.floor(cut.length * 0.8));
    return cut.length ? `${cut} […]` : '';
  };

  /**
   * The steps folded into the summary in pieces whose request stays within `promptTokens` (our
   * estimate), each piece's summary carried into the next; a step longer than a piece is cut.
   * '' when not even the summary so far leaves room for a step.
   */
  const summarizeWithin = async (input: CompressContextInput, previousSummary: string, steps: string[], promptTokens: number, maxTokens: number): Promise<string> => {
    const roomBeside = (summary: string) =>
      promptTokens -
      tokenCounter.count(
        summaryMessages(input.question, summary, '')
          .map((message) => message.content)
          .join('\n'),
      ) -
      16;
    let summary = previousSummary;
    let piece: string[] = [];
    for (const step of steps) {
      if (piece.length && tokenCounter.count([...piece, step].join('\n\n')) > roomBeside(summary)) {
        summary = await summarizeOnce(input, summary, piece.join('\n\n'), maxTokens);
        piece = [];
      }
      const room = roomBeside(summary);
      if (room < MIN_SUMMARY_PIECE_TOKENS) return '';
      piece.push(cutToTokens(step, room));
    }
    return piece.length ? summarizeOnce(input, summary, piece.join('\n\n'), maxTokens) : summary;
  };

  /**
   * The old turns folded into the summary so far. With `summaryLimits` (the window is known) in
   * pieces that fit; without, in one request as always. A request the server refuses as too long
   * is tried again in smaller pieces (sized from the window its error names, else halved), twice;
   * then there is no summary ('') and compression keeps what stubbing did.
   */
  const summarize = async (input: CompressContextInput, previousSummary: string, turns: ChatMessage[]): Promise<string> => {
    const steps = turns.map(renderStep);
    let replyTokens = Math.min(SUMMARY_REPLY_TOKENS, input.summaryLimits?.replyTokens ?? SUMMARY_REPLY_TOKENS);
    let promptTokens = input.summaryLimits?.promptTokens;
    for (let attempt = 0; ; attempt += 1) {
      try {
        if (promptTokens === undefined) return await summarizeOnce(input, previousSummary, steps.join('\n\n'), replyTokens);
        return await summarizeWithin(input, previousSummary, steps, promptTokens, replyTokens);
      } catch (error) {
        const overflow = error instanceof ApplicationFailure && error.type === FailureTypes.modelContextLengthExceeded;
        if (!overflow) throw error;
        if (attempt >= 2) return '';
        const sent =
          promptTokens ??
          tokenCounter.count(
            summaryMessages(input.question, previousSummary, steps.join('\n\n'))
              .map((message) => message.content)
              .join('\n'),
          );
        const window = windowOfOverflowMessage(error.message);
        if (window !== undefined) replyTokens = Math.max(1, Math.min(replyTokens, Math.floor(window * MAX_REPLY_SHARE_OF_WINDOW)));
        // Our estimate may count fewer tokens than the server: a fifth less than the window leaves.
        const fromWindow = window === undefined ? Number.POSITIVE_INFINITY : Math.floor((window - replyTokens - windowMargin(window)) * 0.8);
        promptTokens = Math.max(MIN_SUMMARY_PIECE_TOKENS * 2, Math.min(fromWindow, Math.floor(sent / 2)));
      }
    }
  };

  return async function compressContext(input: CompressContextInput): Promise<CompressContextOutput> {
    heartbeat({ compressing: true });
    const appended = await Promise.all(input.append.map((pending) => composeMessage(store, pending)));
    // Token counts carried forward (issue 21): a message compression leaves as it was keeps its count.
    const carried = await carriedConversationCounts(store, input.conversation, tokenCounter);
    const added = await Promise.all(appended.map((message) => putMessage(store, message)));
    const loaded = await countedMessages(store, [...carried.references, ...added], [...carried.known, ...added.map(() => undefined)], tokenCounter);
    const start = appended.length ? await putCountedConversation(store, loaded.references, loaded.counts, tokenCounter) : input.conversation;
    let messages = [...loaded.messages];
    const countOf = countsByMessage(loaded.messages, loaded.counts, tokenCounter);
    const tokensOf = (list: ChatMessage[]) => list.reduce((sum, message) => sum + countOf(message), 0);
    const spans = turnsOf(messages);
    const old = spans.slice(0, Math.max(0, spans.length - input.keepRecentTurns));

    let stubbedObservations = 0;
    for (const span of input.finalAnswer?.dropTurns ? [] : old) {
      for (let index = span.start; index < span.end; index += 1) {
        const message = messages[index] as ChatMessage;
        if (!isObservation(message, input.protocol)) continue;
        const result = await stubObservation(message, input.protocol);
        messages[index] = result.message;
        stubbedObservations += result.stubbed;
      }
    }

    const request = input.finalAnswer?.request;
    /** The conversation as the next model call will send it: with the final answer request last. */
    const sent = (list: ChatMessage[]) => (request === undefined ? list : withFinalRequest(list, request));
    let summarizedTurns = 0;
    if (input.finalAnswer?.dropTurns) {
      // The question alone: every turn and any summary left out (they are in the store).
      const question = messages[1] as ChatMessage;
      const markerAt = question.content.indexOf(SUMMARY_MARKER);
      const questionText = markerAt >= 0 ? question.content.slice(0, markerAt) : question.content;
      const note = spans.length || markerAt >= 0 ? `\n\n[The research steps so far do not fit the model's context window; they are in the transcript store as ${start}.]` : '';
      messages = [messages[0] as ChatMessage, { role: 'user', content: `${questionText}${note}` }];
      summarizedTurns = spans.length;
    } else if (input.summarize && old.length && tokensOf(sent(messages)) > input.targetTokens) {
      const original = await loadConversation(store, start);
      const question = messages[1] as ChatMessage;
      const markerAt = question.content.indexOf(SUMMARY_MARKER);
      const previousSummary = markerAt >= 0 ? question.content.slice(question.content.indexOf(':]\n', markerAt) + 3) : '';
      const foldedEnd = (old.at(-1) as TurnSpan).end;
      const summary = await summarize(input, previousSummary, original.slice(2, foldedEnd));
      if (summary) {
        const questionText = markerAt >= 0 ? question.content.slice(0, markerAt) : question.content;
        const withSummary: ChatMessage = {
          role: 'user',
          content: `${questionText}${SUMMARY_MARKER}, written to save context; the steps before it are in the transcript store as ${start}:]\n${summary}`,
        };
        messages = [messages[0] as ChatMessage, withSummary, ...messages.slice(foldedEnd)];
        summarizedTurns = old.length;
      }
    }
    messages = sent(messages);

    const references = await Promise.all(messages.map((message) => putMessage(store, message)));
    const counts = messages.map(countOf);
    const conversation = await putCountedConversation(store, references, counts, tokenCounter);
    return { conversation, contextTokens: totalOfCounts(counts), stubbedObservations, summarizedTurns };
  };
}
