/**
 * The agent's own spans (issue 19), made by the activity attempt that makes the call — never by
 * workflow code, so a replay adds none. Through `@opentelemetry/api` alone: without a tracer
 * provider registered (the worker registers one only when an OTLP endpoint is configured) every
 * span here is a no-op. The parent is the active span: the Temporal activity interceptor's
 * `RunActivity:<type>` span, itself a child of the workflow's `StartActivity:<type>`.
 */
import { SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import type { ToolActivityInput, ToolActivityOutput } from '../../src/core/activity-contracts';
import type { ChatMessage, NativeToolCall } from '../../src/core/messages';

const TRACER_NAME = 'react-agent';

/** How much prompt and completion text model spans carry (REACT_AGENT_TRACE_CONTENT); undefined: none. */
export interface TraceContentOptions {
  maxCharacters: number;
}

/** Shortens span content to `max` characters, saying how much was cut. */
export function truncatedContent(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

function recordFailure(span: Span, error: unknown): void {
  const failure = error instanceof Error ? error : new Error(String(error));
  span.recordException(failure);
  span.setStatus({ code: SpanStatusCode.ERROR, message: failure.message });
  span.setAttribute('error.type', (failure as { type?: string }).type ?? failure.name);
}

/**
 * Runs one model call attempt in a `chat <model>` span (GenAI semantic conventions: CLIENT
 * kind, `gen_ai.operation.name` = chat, `gen_ai.request.model`; the body sets the response's
 * attributes through the span it is given).
 */
export async function inModelCallSpan<T>(
  model: string,
  attributes: Record<string, string | number>,
  body: (span: Span) => Promise<T>,
): Promise<T> {
  return trace.getTracer(TRACER_NAME).startActiveSpan(
    `chat ${model}`,
    {
      kind: SpanKind.CLIENT,
      attributes: { 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': model, ...attributes },
    },
    async (span) => {
      try {
        return await body(span);
      } catch (error) {
        recordFailure(span, error);
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

/** A model reply's attributes: finish reason and token usage. */
export function setModelResponse(
  span: Span,
  response: { model: string; finishReason: string; inputTokens: number; outputTokens: number },
): void {
  span.setAttributes({
    'gen_ai.response.model': response.model,
    'gen_ai.response.finish_reasons': [response.finishReason],
    'gen_ai.usage.input_tokens': response.inputTokens,
    'gen_ai.usage.output_tokens': response.outputTokens,
  });
}

/** The prompt's messages in the span (`gen_ai.input.messages`, roles and contents), truncated; nothing without `traceContent`. */
export function setModelInputContent(
  span: Span,
  messages: readonly ChatMessage[],
  traceContent: TraceContentOptions | undefined,
): void {
  if (traceContent)
    span.setAttribute(
      'gen_ai.input.messages',
      truncatedContent(
        JSON.stringify(messages.map(({ role, content }) => ({ role, content }))),
        traceContent.maxCharacters,
      ),
    );
}

/** The reply in the span (`gen_ai.output.messages`: content, reasoning, native tool calls), truncated; nothing without `traceContent`. */
export function setModelOutputContent(
  span: Span,
  reply: { content: string; reasoning: string; toolCalls: NativeToolCall[] },
  traceContent: TraceContentOptions | undefined,
): void {
  if (!traceContent) return;
  const { content, reasoning, toolCalls } = reply;
  span.setAttribute(
    'gen_ai.output.messages',
    truncatedContent(
      JSON.stringify([
        {
          role: 'assistant',
          content,
          ...(reasoning ? { reasoning } : {}),
          ...(toolCalls.length ? { tool_calls: toolCalls } : {}),
        },
      ]),
      traceContent.maxCharacters,
    ),
  );
}

type ToolActivity = (input: ToolActivityInput) => Promise<ToolActivityOutput>;

/**
 * Wraps a tool's activity so each attempt runs in an `execute_tool <name>` span
 * (`gen_ai.operation.name` = execute_tool, `gen_ai.tool.name`); an error observation or a throw
 * marks it as an error. The activity keeps its name.
 */
export function withToolCallSpan<T extends ToolActivity>(tool: string, activity: T): T {
  const traced = (input: ToolActivityInput): Promise<ToolActivityOutput> =>
    trace.getTracer(TRACER_NAME).startActiveSpan(
      `execute_tool ${tool}`,
      {
        kind: SpanKind.INTERNAL,
        attributes: {
          'gen_ai.operation.name': 'execute_tool',
          'gen_ai.tool.name': tool,
          'gen_ai.tool.call.id': input.callId,
        },
      },
      async (span) => {
        try {
          const output = await activity(input);
          if (output.isError) {
            span.setStatus({ code: SpanStatusCode.ERROR, message: 'the tool answered with an error observation' });
            span.setAttribute('error.type', 'tool_error');
          }
          return output;
        } catch (error) {
          recordFailure(span, error);
          throw error;
        } finally {
          span.end();
        }
      },
    );
  Object.defineProperty(traced, 'name', { value: activity.name });
  return traced as T;
}
