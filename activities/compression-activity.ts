import { Context } from '@temporalio/activity';
import { CancelledFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type { CompressContextInput, CompressContextOutput } from '../src/core/activity-contracts';
import type { ChatMessage } from '../src/core/messages';
import type { ProtocolName } from '../src/core/protocols';
import { preview } from '../src/core/text';
import { appendToConversation, composeMessage, loadConversation, putConversation, putMessage } from '../src/storage/conversation';
import { classifyModelError } from './model-errors';
import type { ModelDefaults } from './model-activity';
import { WORKFLOW_ID_HEADER } from './model-activity';
import { countConversationTokens, type TokenCounter } from './token-counter';
import type { TranscriptStore } from '../src/storage/transcript-store';

export interface CompressionDependencies {
  openai: OpenAI;
  store: TranscriptStore;
  tokenCounter: TokenCounter;
  modelDefaults: ModelDefaults;
}

/** Observations shorter than this stay whole: a stub would save nothing. */
const STUB_MINIMUM_CHARACTERS = 600;
const STUB_PREFIX = '[Observation omitted to save context:';
const SUMMARY_MARKER = '\n\n[Summary of the research so far';
/** Longest piece of one observation the summariser reads. */
const SUMMARY_OBSERVATION_CHARACTERS = 4_000;

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
 * Context compression, in two steps. First, observations older than the last K turns become
 * short stubs that name the stored full text (`sha256:…`), so nothing is lost and a reader sees
 * what the model saw. If that is not enough, older turns are folded into an incremental summary
 * written by the model ("old summary + new turns → new summary") and attached to the question.
 */
export function createCompressContext(dependencies: CompressionDependencies) {
  const { openai, store, tokenCounter, modelDefaults } = dependencies;

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
    if (protocol === 'native') return { message: { ...message, content: await replace(message.content) }, stubbed };
    if (protocol === 'classic') {
      const pieces = message.content.split(/(?=Observation: )/);
      const replaced = await Promise.all(pieces.map(async (piece) => (piece.startsWith('Observation: ') ? `Observation: ${await replace(piece.slice('Observation: '.length))}` : piece)));
      return { message: { ...message, content: replaced.join('') }, stubbed };
    }
    const parts = message.content.split(/(<tool_response>\n?[\s\S]*?\n?<\/tool_response>)/);
    const replaced = await Promise.all(
      parts.map(async (part) => {
        const match = /^<tool_response>\n?([\s\S]*?)\n?<\/tool_response>$/.exec(part);
        return match ? `<tool_response>\n${await replace(match[1] ?? '')}\n</tool_response>` : part;
      }),
    );
    return { message: { ...message, content: replaced.join('') }, stubbed };
  };

  const summarize = async (input: CompressContextInput, previousSummary: string, turns: ChatMessage[]): Promise<string> => {
    const context = Context.current();
    const rendered = turns
      .map((message) => {
        const text = message.content.length > SUMMARY_OBSERVATION_CHARACTERS ? `${message.content.slice(0, SUMMARY_OBSERVATION_CHARACTERS)} […]` : message.content;
        const calls = (message.toolCalls ?? []).map((call) => `\n[tool call] ${call.name} ${call.arguments}`).join('');
        return `### ${message.role}\n${text}${calls}`;
      })
      .join('\n\n');
    const ticker = setInterval(() => context.heartbeat({ summarizing: true }), 2_000);
    try {
      const response = await openai.chat.completions.create(
        {
          model: input.model.model,
          messages: [
            {
              role: 'system',
              content:
                'You keep a running summary of a research agent\'s work so it can continue with a shorter context. ' +
                'Write the new summary: the facts found (with their sources), what was tried and did not work, and what is still open. ' +
                'Keep every number, name and URL that may matter for the answer. At most about 600 words, no preamble.',
            },
            { role: 'user', content: `Question: ${input.question}\n\nSummary so far:\n${previousSummary || '(none yet)'}\n\nNew steps to fold in:\n\n${rendered}` },
          ],
          stream: false,
          temperature: 0.2,
          max_tokens: 1_500,
        },
        { signal: context.cancellationSignal, headers: { [WORKFLOW_ID_HEADER]: input.workflowId, 'x-react-agent-purpose': 'summary' } },
      );
      return response.choices[0]?.message?.content?.trim() ?? '';
    } catch (error) {
      if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason instanceof Error ? context.cancellationSignal.reason : new CancelledFailure('cancelled');
      throw classifyModelError(error, { baseUrl: modelDefaults.baseUrl, model: input.model.model });
    } finally {
      clearInterval(ticker);
    }
  };

  return async function compressContext(input: CompressContextInput): Promise<CompressContextOutput> {
    Context.current().heartbeat({ compressing: true });
    const appended = await Promise.all(input.append.map((pending) => composeMessage(store, pending)));
    const start = appended.length ? (await appendToConversation(store, input.conversation, appended)).conversation : input.conversation;
    let messages = await loadConversation(store, start);
    const spans = turnsOf(messages);
    const old = spans.slice(0, Math.max(0, spans.length - input.keepRecentTurns));

    let stubbedObservations = 0;
    for (const span of old) {
      for (let index = span.start; index < span.end; index += 1) {
        const message = messages[index] as ChatMessage;
        if (!isObservation(message, input.protocol)) continue;
        const result = await stubObservation(message, input.protocol);
        messages[index] = result.message;
        stubbedObservations += result.stubbed;
      }
    }

    let summarizedTurns = 0;
    if (input.summarize && old.length && countConversationTokens(messages, tokenCounter) > input.targetTokens) {
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

    const references = await Promise.all(messages.map((message) => putMessage(store, message)));
    const conversation = await putConversation(store, references);
    return { conversation, contextTokens: countConversationTokens(messages, tokenCounter), stubbedObservations, summarizedTurns };
  };
}
