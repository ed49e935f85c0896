import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type { CallModelInput, CallModelOutput } from '../src/activity-contracts';
import { FailureTypes } from '../src/failure-types';
import type { ChatMessage, NativeToolCall } from '../src/messages';
import { protocolByName } from '../src/protocols';
import { preview } from '../src/text';
import { appendToConversation, composeMessage, loadConversation } from './conversation';
import { classifyModelError } from './model-errors';
import { toOpenAIMessage, toOpenAITool } from './openai-messages';
import type { ToolRegistry } from './tools/tool-registry';
import type { TokenCounter } from './token-counter';
import type { TranscriptStore } from './transcript-store';

/** Sampling defaults the worker applies when a run does not set them. */
export interface ModelDefaults {
  /** Model name (REACT_AGENT_MODEL). */
  model: string;
  temperature: number;
  topP: number;
  maxOutputTokens: number;
  /** The endpoint, for error messages (never the key). */
  baseUrl: string;
}

export interface ModelActivityDependencies {
  openai: OpenAI;
  store: TranscriptStore;
  tokenCounter: TokenCounter;
  modelDefaults: ModelDefaults;
  /** For native tool calling: the schemas of the run's tools. */
  tools: ToolRegistry;
}

/** Headers that let a model server's logs be matched to a run and a model call. */
export const WORKFLOW_ID_HEADER = 'x-react-agent-workflow-id';
export const MODEL_CALL_HEADER = 'x-react-agent-model-call';

function cancellationError(): Error {
  const reason: unknown = Context.current().cancellationSignal.reason;
  return reason instanceof Error ? reason : new CancelledFailure('Activity cancelled');
}

/**
 * The model activity: appends the previous turn's observations, streams one chat completion
 * (heartbeating per chunk, abandoning a stream that stalls past the heartbeat timeout), stores
 * the reply, and returns references plus the parsed turn.
 */
export function createCallModel(dependencies: ModelActivityDependencies) {
  const { openai, store, tokenCounter, modelDefaults, tools } = dependencies;

  return async function callModel(input: CallModelInput): Promise<CallModelOutput> {
    const context = Context.current();
    const protocol = protocolByName(input.protocol);
    const appended = await Promise.all(input.append.map((pending) => composeMessage(store, pending)));
    const withObservations = appended.length ? (await appendToConversation(store, input.conversation, appended)).conversation : input.conversation;
    const messages: ChatMessage[] = await loadConversation(store, withObservations);

    const stallLimitMs = context.info.heartbeatTimeoutMs ?? 60_000;
    const requestAbort = new AbortController();
    const signal = AbortSignal.any([context.cancellationSignal, requestAbort.signal]);
    let stalled = false;
    let stallTimer: NodeJS.Timeout | undefined;
    const armStallTimer = () => {
      clearTimeout(stallTimer);
      stallTimer = setTimeout(() => {
        stalled = true;
        requestAbort.abort();
      }, stallLimitMs);
    };

    let content = '';
    const toolCallParts: Array<{ id: string; name: string; arguments: string }> = [];
    let finishReason = '';
    let reportedUsage: { prompt_tokens: number; completion_tokens: number } | undefined;
    let chunks = 0;
    try {
      armStallTimer();
      const stream = await openai.chat.completions.create(
        {
          model: input.model.model,
          messages: messages.map(toOpenAIMessage),
          stream: true,
          stream_options: { include_usage: true },
          ...(protocol.stop.length ? { stop: protocol.stop } : {}),
          ...(protocol.nativeTools && input.tools.length
            ? { tools: tools.specs(input.tools).map(toOpenAITool), tool_choice: input.finalAnswer ? ('none' as const) : ('auto' as const) }
            : {}),
          temperature: input.model.temperature ?? modelDefaults.temperature,
          top_p: input.model.topP ?? modelDefaults.topP,
          max_tokens: input.model.maxOutputTokens ?? modelDefaults.maxOutputTokens,
          ...(input.model.presencePenalty !== undefined ? { presence_penalty: input.model.presencePenalty } : {}),
        },
        { signal, headers: { [WORKFLOW_ID_HEADER]: input.workflowId, [MODEL_CALL_HEADER]: String(input.modelCall) } },
      );
      for await (const chunk of stream) {
        armStallTimer();
        chunks += 1;
        const choice = chunk.choices[0];
        if (choice?.delta?.content) content += choice.delta.content;
        for (const delta of choice?.delta?.tool_calls ?? []) {
          const part = (toolCallParts[delta.index] ??= { id: '', name: '', arguments: '' });
          if (delta.id) part.id = delta.id;
          if (delta.function?.name) part.name += delta.function.name;
          if (delta.function?.arguments) part.arguments += delta.function.arguments;
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason;
        if (chunk.usage) reportedUsage = chunk.usage;
        context.heartbeat({ chunks, characters: content.length });
      }
    } catch (error) {
      if (!context.cancellationSignal.aborted && !stalled) {
        throw classifyModelError(error, { baseUrl: modelDefaults.baseUrl, model: input.model.model });
      }
    } finally {
      clearTimeout(stallTimer);
    }
    // An aborted stream can end quietly instead of throwing, so these are checked either way.
    if (context.cancellationSignal.aborted) throw cancellationError();
    if (stalled) {
      throw ApplicationFailure.create({
        type: FailureTypes.modelBadResponse,
        message: `The model stream sent nothing for ${stallLimitMs / 1000} s (the heartbeat timeout) after ${chunks} chunks; abandoned to be retried.`,
      });
    }
    if (!finishReason) {
      throw ApplicationFailure.create({
        type: FailureTypes.modelBadResponse,
        message: `The model stream ended after ${chunks} chunks without a finish reason; retrying.`,
      });
    }

    const cleaned = protocol.cleanOutput(content);
    const nativeCalls: NativeToolCall[] = toolCallParts.filter(Boolean);
    const withReply = await appendToConversation(store, withObservations, [
      { role: 'assistant', content: cleaned, ...(nativeCalls.length ? { toolCalls: nativeCalls } : {}) },
    ]);
    const assistantReference = withReply.messageReferences[0] as string;
    const promptTokens = reportedUsage?.prompt_tokens ?? tokenCounter.count(messages.map((message) => message.content).join('\n'));
    const completionTokens = reportedUsage?.completion_tokens ?? tokenCounter.count(content + nativeCalls.map((call) => call.name + call.arguments).join(''));
    return {
      conversation: withReply.conversation,
      assistant: { ref: assistantReference, preview: preview(cleaned || nativeCalls.map((call) => `${call.name}(${call.arguments})`).join(' ')), characters: cleaned.length },
      turn: protocol.parse({ content: cleaned, toolCalls: nativeCalls }, input.modelCall),
      usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens },
      contextTokens: promptTokens + completionTokens,
      finishReason,
    };
  };
}
