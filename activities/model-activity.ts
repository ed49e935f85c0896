import { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import type OpenAI from 'openai';
import type { CallModelInput, CallModelOutput } from '../src/core/activity-contracts';
import { FailureTypes } from '../src/core/failure-types';
import { appendToStreamTail, type ModelCallHeartbeat, type StreamTail } from '../src/core/model-stream-text';
import type { ChatMessage, NativeToolCall } from '../src/core/messages';
import { modelCallCostUsd, type ModelPrices } from '../src/core/model-prices';
import { protocolByName } from '../src/core/protocols';
import { extractThought } from '../src/core/protocols/deep-research-protocol';
import { preview } from '../src/core/text';
import type { ToolSpec } from '../src/core/tool-spec';
import { appendToConversation, composeMessage, loadConversation, loadMessageReferences, loadToolSpecs, putConversation, putMessage } from '../src/storage/conversation';
import { classifyModelError } from './model-errors';
import { ModelStreamWatchdog } from './model-stream-watchdog';
import { ModelCallMetrics } from './metrics/model-call-metrics';
import { inModelCallSpan, setModelResponse, truncatedContent, type TraceContentOptions } from './tracing/agent-spans';
import type { Span } from '@opentelemetry/api';
import { reasoningOfDelta, toOpenAIMessage, toOpenAITool } from './openai-messages';
import type { ToolRegistry } from './tools/tool-registry';
import { countConversationTokens, type TokenCounter } from './token-counter';
import type { TranscriptStore } from '../src/storage/transcript-store';

/** Sampling defaults the worker applies when a run does not set them. */
export interface ModelDefaults {
  /** Model name (REACT_AGENT_MODEL). */
  model: string;
  temperature: number;
  topP: number;
  maxOutputTokens: number;
  /** The endpoint, for error messages (never the key). */
  baseUrl: string;
  /**
   * Longest wait for the reply's first chunk, in seconds (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS);
   * default {@link DEFAULT_FIRST_TOKEN_SECONDS}. Once chunks flow, the heartbeat timeout bounds the gaps.
   */
  firstTokenSeconds?: number;
}

/** `ModelDefaults.firstTokenSeconds` when the worker does not set it (the config's default). */
export const DEFAULT_FIRST_TOKEN_SECONDS = 300;

export interface ModelActivityDependencies {
  openai: OpenAI;
  store: TranscriptStore;
  tokenCounter: TokenCounter;
  modelDefaults: ModelDefaults;
  /** For native tool calling in runs opened before their specs were stored (no `toolSpecs` in the input): the schemas by name. */
  tools: ToolRegistry;
  /** Prices per model (REACT_AGENT_MODEL_PRICES, read by the worker): a call of a priced model returns its cost with its usage. */
  prices?: ModelPrices;
  /** Prompt and completion text in the call's span (REACT_AGENT_TRACE_CONTENT), truncated; default none. */
  traceContent?: TraceContentOptions;
}

/** Headers that let a model server's logs be matched to a run and a model call. */
export const WORKFLOW_ID_HEADER = 'x-react-agent-workflow-id';
export const MODEL_CALL_HEADER = 'x-react-agent-model-call';

/** Reasoning shortened for history the way the protocols shorten a `<think>` thought. */
function thoughtOfReasoning(reasoning: string): string {
  return extractThought(`<think>${reasoning}</think>`);
}

function cancellationError(): Error {
  const reason: unknown = Context.current().cancellationSignal.reason;
  return reason instanceof Error ? reason : new CancelledFailure('Activity cancelled');
}

/**
 * Appends messages to a conversation, a user message that follows a user message joined to it
 * (chat templates want user and assistant turns to alternate): the request for the final answer
 * after a compression that took the last observations in, or a message injected then. The
 * question (the second message) is never joined to.
 */
async function appendAlternating(store: TranscriptStore, conversation: string, additions: ChatMessage[]): Promise<string> {
  const references = await loadMessageReferences(store, conversation);
  const [first, ...rest] = additions;
  const lastReference = references.at(-1);
  if (first?.role === 'user' && references.length > 2 && lastReference) {
    const last = JSON.parse(await store.getText(lastReference)) as ChatMessage;
    if (last.role === 'user') {
      const joined = await putMessage(store, { ...last, content: `${last.content}\n\n${first.content}` });
      const added = await Promise.all(rest.map((message) => putMessage(store, message)));
      return putConversation(store, [...references.slice(0, -1), joined, ...added]);
    }
  }
  const added = await Promise.all(additions.map((message) => putMessage(store, message)));
  return putConversation(store, [...references, ...added]);
}

/**
 * The model activity: appends the previous turn's observations, streams one chat completion
 * (heartbeating while the request is open; giving up when no first chunk comes within the
 * first-token limit or the stream stalls past the heartbeat timeout), stores the reply with its
 * reasoning, and returns references plus the parsed turn.
 */
export function createCallModel(dependencies: ModelActivityDependencies) {
  const { openai, store, tokenCounter, modelDefaults, tools, prices, traceContent } = dependencies;

  return async function callModel(input: CallModelInput): Promise<CallModelOutput> {
    // Each attempt is counted and timed (react_agent_model_* metrics) once its request is sent.
    const metrics = new ModelCallMetrics(Context.current(), input.model.model);
    // Each attempt in a `chat <model>` span (a no-op unless the worker traces: OTEL_EXPORTER_OTLP_*).
    return inModelCallSpan(input.model.model, { 'react_agent.model_call': input.modelCall }, async (span) => {
      try {
        return await callModelOnce(input, metrics, span);
      } catch (error) {
        metrics.failed(error);
        throw error;
      }
    });
  };

  /**
   * The specs of the run's tools: those stored when it started (fixed for its life, whatever this
   * worker offers now), else, for a run opened before they were stored, the registry's by name.
   */
  async function runToolSpecs(input: CallModelInput): Promise<ToolSpec[]> {
    if (input.toolSpecs === undefined) return tools.specs(input.tools);
    const stored = await loadToolSpecs(store, input.toolSpecs);
    const byName = new Map(stored.map((spec) => [spec.name, spec]));
    return input.tools.flatMap((name) => byName.get(name) ?? []);
  }

  async function callModelOnce(input: CallModelInput, metrics: ModelCallMetrics, span: Span): Promise<CallModelOutput> {
    const context = Context.current();
    const protocol = protocolByName(input.protocol);
    const appended = await Promise.all(input.append.map((pending) => composeMessage(store, pending)));
    const withObservations = appended.length ? await appendAlternating(store, input.conversation, appended) : input.conversation;
    const messages: ChatMessage[] = await loadConversation(store, withObservations);
    const nativeTools = protocol.nativeTools && input.tools.length ? await runToolSpecs(input) : undefined;
    if (traceContent) span.setAttribute('gen_ai.input.messages', truncatedContent(JSON.stringify(messages.map(({ role, content }) => ({ role, content }))), traceContent.maxCharacters));

    const stallLimitMs = context.info.heartbeatTimeoutMs ?? 60_000;
    const firstTokenLimitMs = (modelDefaults.firstTokenSeconds ?? DEFAULT_FIRST_TOKEN_SECONDS) * 1000;
    const requestAbort = new AbortController();
    const signal = AbortSignal.any([context.cancellationSignal, requestAbort.signal]);

    let content = '';
    let reasoning = '';
    const toolCallParts: Array<{ id: string; name: string; arguments: string }> = [];
    let finishReason = '';
    let reportedUsage: OpenAI.CompletionUsage | undefined;
    let chunks = 0;
    // The text as it streams, bounded, for whoever watches the call (`react-agent follow`, the
    // Web UI's pending activity): it rides in the heartbeat details, never in history.
    let streamed: StreamTail = { text: '', characters: 0 };
    let streamedKind: 'reasoning' | 'content' | 'tool' | undefined;
    const addStreamed = (kind: 'reasoning' | 'content' | 'tool', text: string) => {
      if (!text) return;
      const separator = streamedKind !== undefined && streamedKind !== kind ? '\n' : '';
      streamedKind = kind;
      streamed = appendToStreamTail(streamed, separator + text);
    };
    const progress = (): ModelCallHeartbeat => ({
      chunks,
      characters: content.length,
      ...(reasoning ? { reasoningCharacters: reasoning.length } : {}),
      ...(chunks === 0 ? { waitingForFirstTokenSeconds: Math.round(watchdog.waitForFirstChunkMs / 1000) } : {}),
      ...(streamed.characters ? { streamed: streamed.text, streamedCharacters: streamed.characters } : {}),
    });
    const watchdog = new ModelStreamWatchdog({
      firstTokenLimitMs,
      stallLimitMs,
      heartbeat: () => context.heartbeat(progress()),
      abandon: () => requestAbort.abort(),
    });
    try {
      metrics.requestSent();
      const stream = await openai.chat.completions.create(
        {
          model: input.model.model,
          messages: messages.map(toOpenAIMessage),
          stream: true,
          stream_options: { include_usage: true },
          ...(protocol.stop.length ? { stop: protocol.stop } : {}),
          ...(nativeTools ? { tools: nativeTools.map(toOpenAITool), tool_choice: input.finalAnswer ? ('none' as const) : ('auto' as const) } : {}),
          temperature: input.model.temperature ?? modelDefaults.temperature,
          top_p: input.model.topP ?? modelDefaults.topP,
          max_tokens: input.model.maxOutputTokens ?? modelDefaults.maxOutputTokens,
          ...(input.model.presencePenalty !== undefined ? { presence_penalty: input.model.presencePenalty } : {}),
        },
        { signal, headers: { [WORKFLOW_ID_HEADER]: input.workflowId, [MODEL_CALL_HEADER]: String(input.modelCall) } },
      );
      for await (const chunk of stream) {
        watchdog.chunkArrived();
        metrics.chunkArrived();
        chunks += 1;
        const choice = chunk.choices[0];
        const reasoningDelta = reasoningOfDelta(choice?.delta);
        reasoning += reasoningDelta;
        addStreamed('reasoning', reasoningDelta);
        if (choice?.delta?.content) {
          content += choice.delta.content;
          addStreamed('content', choice.delta.content);
        }
        for (const delta of choice?.delta?.tool_calls ?? []) {
          const part = (toolCallParts[delta.index] ??= { id: '', name: '', arguments: '' });
          if (delta.id) part.id = delta.id;
          if (delta.function?.name) {
            // Each native tool call on a line of its own: its name, then its arguments as they come.
            addStreamed('tool', `${!part.name && streamedKind === 'tool' ? '\n' : ''}${delta.function.name}`);
            part.name += delta.function.name;
          }
          if (delta.function?.arguments) {
            part.arguments += delta.function.arguments;
            addStreamed('tool', delta.function.arguments);
          }
        }
        if (choice?.finish_reason) finishReason = choice.finish_reason;
        if (chunk.usage) reportedUsage = chunk.usage;
        context.heartbeat(progress());
      }
    } catch (error) {
      if (!context.cancellationSignal.aborted && !watchdog.abandoned) {
        throw classifyModelError(error, { baseUrl: modelDefaults.baseUrl, model: input.model.model });
      }
    } finally {
      watchdog.stop();
    }
    // An aborted stream can end quietly instead of throwing, so these are checked either way.
    if (context.cancellationSignal.aborted) throw cancellationError();
    if (watchdog.abandoned === 'first-token') {
      throw ApplicationFailure.create({
        type: FailureTypes.modelFirstTokenTimeout,
        message:
          `The model sent no reply within ${firstTokenLimitMs / 1000} s (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS); ` +
          'a slow server can take this long to read a long prompt. Abandoned to be retried.',
      });
    }
    if (watchdog.abandoned === 'stall') {
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
    const promptTokens = reportedUsage?.prompt_tokens ?? tokenCounter.count(messages.map((message) => message.content).join('\n'));
    const completionTokens = reportedUsage?.completion_tokens ?? tokenCounter.count(reasoning + content + nativeCalls.map((call) => call.name + call.arguments).join(''));
    const cachedPromptTokens = reportedUsage?.prompt_tokens_details?.cached_tokens;
    // Absent when the model has no price (src/core/model-prices.ts).
    const costUsd = modelCallCostUsd(prices, input.model.model, { promptTokens, completionTokens, ...(cachedPromptTokens !== undefined ? { cachedPromptTokens } : {}) });
    metrics.succeeded(
      {
        prompt: promptTokens,
        completion: completionTokens,
        reasoning: reportedUsage?.completion_tokens_details?.reasoning_tokens,
        cached: cachedPromptTokens,
      },
      costUsd,
    );
    setModelResponse(span, { model: input.model.model, finishReason, inputTokens: promptTokens, outputTokens: completionTokens });
    if (traceContent) span.setAttribute('gen_ai.output.messages', truncatedContent(JSON.stringify([{ role: 'assistant', content, ...(reasoning ? { reasoning } : {}), ...(nativeCalls.length ? { tool_calls: nativeCalls } : {}) }]), traceContent.maxCharacters));
    const withReply = await appendToConversation(store, withObservations, [
      { role: 'assistant', content: cleaned, ...(reasoning ? { reasoning } : {}), ...(nativeCalls.length ? { toolCalls: nativeCalls } : {}) },
    ]);
    const assistantReference = withReply.messageReferences[0] as string;
    const turn = protocol.parse({ content: cleaned, toolCalls: nativeCalls }, input.modelCall);
    return {
      conversation: withReply.conversation,
      assistant: {
        ref: assistantReference,
        preview: preview(cleaned || nativeCalls.map((call) => `${call.name}(${call.arguments})`).join(' ') || (reasoning ? `(reasoning) ${reasoning}` : '')),
        characters: cleaned.length,
      },
      // A server that streams the reasoning apart leaves the protocol's own thought empty.
      turn: turn.thought || !reasoning ? turn : { ...turn, thought: thoughtOfReasoning(reasoning) },
      usage: { promptTokens, completionTokens, totalTokens: promptTokens + completionTokens, ...(costUsd !== undefined ? { costUsd } : {}) },
      contextTokens: promptTokens + completionTokens,
      finishReason,
      estimatedPromptTokens: countConversationTokens(messages, tokenCounter),
    };
  }
}
