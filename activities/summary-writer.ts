import { Context } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import type { CompressContextInput } from '../src/core/activity-contracts';
import {
  MIN_SUMMARY_PIECE_TOKENS,
  SUMMARY_REPLY_TOKENS,
  SUMMARY_RETRIES_AFTER_REFUSAL,
  summaryLimitsAfterRefusal,
  windowOfOverflowMessage,
} from '../src/core/context-window';
import { FailureTypes } from '../src/core/failure-types';
import type { ChatMessage } from '../src/core/messages';
import type { ChatModel } from './model/chat-model';
import { chatControls } from './model/chat-controls';
import { WORKFLOW_ID_LABEL } from './model/chat-request-labels';
import type { TokenCounter } from './token-counter';

/** Longest piece of one observation the summariser reads. */
const SUMMARY_OBSERVATION_CHARACTERS = 4_000;

const SUMMARY_INSTRUCTIONS =
  "You keep a running summary of a research agent's work so it can continue with a shorter context. " +
  'Write the new summary: the facts found (with their sources), what was tried and did not work, and what is still open. ' +
  'Keep every number, name and URL that may matter for the answer. At most about 600 words, no preamble.';

/** What a summary is written for: the run's question and model, and how large its requests may be. */
export type SummaryRequest = Pick<CompressContextInput, 'workflowId' | 'question' | 'model' | 'summaryLimits'>;

/** The summariser's request: its instructions, the question, the summary so far and the steps to fold in. */
function summaryMessages(
  question: string,
  previousSummary: string,
  rendered: string,
): Array<{ role: 'system' | 'user'; content: string }> {
  return [
    { role: 'system', content: SUMMARY_INSTRUCTIONS },
    {
      role: 'user',
      content: `Question: ${question}\n\nSummary so far:\n${previousSummary || '(none yet)'}\n\nNew steps to fold in:\n\n${rendered}`,
    },
  ];
}

/** One message as the summariser reads it: its role, its text (long ones cut), its native tool calls. */
function renderStep(message: ChatMessage): string {
  const text =
    message.content.length > SUMMARY_OBSERVATION_CHARACTERS
      ? `${message.content.slice(0, SUMMARY_OBSERVATION_CHARACTERS)} […]`
      : message.content;
  const calls = (message.toolCalls ?? []).map((call) => `\n[tool call] ${call.name} ${call.arguments}`).join('');
  return `### ${message.role}\n${text}${calls}`;
}

/**
 * The incremental summary of compression's second step ("old summary + new turns → new
 * summary"), written by the model; when the model's context window is known its requests are
 * sized to fit it.
 *
 * @param chatModel The client the summaries are asked of (`REACT_AGENT_SUMMARY_MODEL_API`; the run model's by default).
 * @param summaryModel The model that writes them (`REACT_AGENT_SUMMARY_MODEL`); default each run's own model.
 */
export function createSummaryWriter(chatModel: ChatModel, tokenCounter: TokenCounter, summaryModel?: string) {
  /** Our estimate of a summary request's prompt. */
  const requestTokens = (question: string, previousSummary: string, rendered: string) =>
    tokenCounter.count(
      summaryMessages(question, previousSummary, rendered)
        .map((message) => message.content)
        .join('\n'),
    );

  /** One summary call: the summary so far and these steps (rendered) folded into a new summary. */
  const summarizeOnce = async (
    request: SummaryRequest,
    previousSummary: string,
    rendered: string,
    maxTokens: number,
  ): Promise<string> => {
    const context = Context.current();
    const reply = await chatModel.chat(
      {
        model: summaryModel ?? request.model.model,
        messages: summaryMessages(request.question, previousSummary, rendered),
        sampling: { temperature: 0.2, maxOutputTokens: maxTokens },
        labels: { [WORKFLOW_ID_LABEL]: request.workflowId, purpose: 'summary' },
      },
      chatControls({
        signal: context.cancellationSignal,
        heartbeatTimeoutMs: context.info.heartbeatTimeoutMs,
        onProgress: () => context.heartbeat({ summarizing: true }),
      }),
    );
    return reply.content.trim();
  };

  /** `text` cut (marked) to at most `tokens` of our estimate; '' when nothing of it fits. */
  const cutToTokens = (text: string, tokens: number): string => {
    if (tokenCounter.count(text) <= tokens) return text;
    let cut = text;
    while (cut.length > 0 && tokenCounter.count(`${cut} […]`) > tokens)
      cut = cut.slice(0, Math.floor(cut.length * 0.8));
    return cut.length ? `${cut} […]` : '';
  };

  /**
   * The steps folded into the summary in pieces whose request stays within `promptTokens` (our
   * estimate), each piece's summary carried into the next; a step longer than a piece is cut.
   * '' when not even the summary so far leaves room for a step.
   */
  const summarizeWithin = async (
    request: SummaryRequest,
    previousSummary: string,
    steps: string[],
    promptTokens: number,
    maxTokens: number,
  ): Promise<string> => {
    const roomBeside = (summary: string) => promptTokens - requestTokens(request.question, summary, '') - 16;
    let summary = previousSummary;
    let piece: string[] = [];
    for (const step of steps) {
      if (piece.length && tokenCounter.count([...piece, step].join('\n\n')) > roomBeside(summary)) {
        summary = await summarizeOnce(request, summary, piece.join('\n\n'), maxTokens);
        piece = [];
      }
      const room = roomBeside(summary);
      if (room < MIN_SUMMARY_PIECE_TOKENS) return '';
      piece.push(cutToTokens(step, room));
    }
    return piece.length ? summarizeOnce(request, summary, piece.join('\n\n'), maxTokens) : summary;
  };

  /**
   * `messages` folded into the summary so far. With `summaryLimits` (the window is known) in
   * pieces that fit; without, in one request as always. A request the server refuses as too long
   * is tried again in smaller pieces (`summaryLimitsAfterRefusal`), twice; then there is no
   * summary ('') and compression keeps what stubbing did. Any other failure is the activity's.
   */
  return async function writeSummary(
    request: SummaryRequest,
    previousSummary: string,
    messages: ChatMessage[],
  ): Promise<string> {
    const steps = messages.map(renderStep);
    let replyTokens = Math.min(SUMMARY_REPLY_TOKENS, request.summaryLimits?.replyTokens ?? SUMMARY_REPLY_TOKENS);
    let promptTokens = request.summaryLimits?.promptTokens;
    for (let attempt = 0; ; attempt += 1) {
      try {
        if (promptTokens === undefined)
          return await summarizeOnce(request, previousSummary, steps.join('\n\n'), replyTokens);
        return await summarizeWithin(request, previousSummary, steps, promptTokens, replyTokens);
      } catch (error) {
        const overflow = error instanceof ApplicationFailure && error.type === FailureTypes.modelContextLengthExceeded;
        if (!overflow) throw error;
        if (attempt >= SUMMARY_RETRIES_AFTER_REFUSAL) return '';
        const sent = promptTokens ?? requestTokens(request.question, previousSummary, steps.join('\n\n'));
        ({ promptTokens, replyTokens } = summaryLimitsAfterRefusal(
          sent,
          replyTokens,
          windowOfOverflowMessage(error.message),
        ));
      }
    }
  };
}
