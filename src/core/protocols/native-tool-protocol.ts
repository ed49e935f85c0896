import { JSON5 } from '../json5';
import type { ChatMessage, PendingMessage } from '../messages';
import type { ToolSpec } from '../tool-spec';
import { extractThought } from './deep-research-protocol';
import type { ModelReply, Observation, ParsedTurn, Protocol, ToolCallRequest } from './protocol';
import { callOverCap, DEFAULT_MAX_TOOL_CALLS_PER_REPLY, keptToolCalls } from './tool-call-cap';

/**
 * Native OpenAI tool calling: tools go to the API as JSON schemas; each assistant message with
 * `tool_calls` is kept as it came (but for calls past the first one over the cap, left out, see
 * `keptToolCalls`) and every call is answered by a `tool` message with the same `tool_call_id`, in
 * call order. A reply without tool calls is the final answer.
 */
export const nativeToolProtocol: Protocol = {
  name: 'native',
  stop: [],
  nativeTools: true,

  renderSystemPrompt(tools: ToolSpec[], today: string): string {
    return (
      'You are a deep research assistant. You investigate a question thoroughly, across several credible and diverse sources, ' +
      'and give an accurate, objective answer. ' +
      (tools.length
        ? 'Use the tools you are given to gather information; you may call several at once when they do not depend on each other. '
        : 'No tools are available for this question: answer from what you know. ') +
      'When you have gathered enough information, reply with the complete final answer and no tool calls.' +
      `\n\nCurrent date: ${today}`
    );
  },

  cleanOutput(content: string): string {
    return content;
  },

  parse(reply: ModelReply, modelCall: number, maxToolCalls = DEFAULT_MAX_TOOL_CALLS_PER_REPLY): ParsedTurn {
    const thought = extractThought(reply.content.includes('<think>') ? reply.content : '');
    // The calls the stored reply keeps (the model activity stores the same): the first past the cap answers for the rest.
    const kept = keptToolCalls(reply.toolCalls, maxToolCalls);
    const toolCalls: ToolCallRequest[] = kept.map((call, index) => {
      const id = call.id || `call-${modelCall}-${index + 1}`;
      if (index >= maxToolCalls) return callOverCap(id, maxToolCalls, reply.toolCalls.length - kept.length);
      if (!call.name) return { id, name: '', arguments: {}, problem: 'Error: the tool call has no function name.' };
      let parsed: unknown;
      try {
        parsed = call.arguments.trim() === '' ? {} : JSON5.parse(call.arguments);
      } catch (error) {
        return {
          id,
          name: call.name,
          arguments: {},
          problem: `Error: the arguments are not valid JSON (${(error as Error).message}). Send a JSON object matching the tool's parameters.`,
        };
      }
      if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
        return {
          id,
          name: call.name,
          arguments: {},
          problem: "Error: the arguments must be a JSON object matching the tool's parameters.",
        };
      }
      return { id, name: call.name, arguments: parsed as Record<string, unknown> };
    });
    if (toolCalls.length) return { thought, toolCalls };
    const answer = reply.content.replace(/<think>[\s\S]*?<\/think>/g, '').trim();
    if (answer) return { thought, toolCalls, answer };
    return { thought, toolCalls, problem: 'Your reply was empty. Call a tool, or reply with your final answer.' };
  },

  renderObservations(observations: Observation[]): PendingMessage[] {
    return observations.map((observation) => ({
      role: 'tool',
      toolCallId: observation.callId,
      parts: observation.parts,
    }));
  },

  renderCorrection(problem: string): PendingMessage {
    return { role: 'user', parts: [{ text: problem }] };
  },

  finalAnswerRequest(reason: string): string {
    return `${reason} Do not call any more tools. Based on everything above, reply now with the answer you consider most likely.`;
  },

  /** A `tool` message, whose whole text is one call's result. */
  isObservation(message: ChatMessage): boolean {
    return message.role === 'tool';
  },

  observationResults(message: ChatMessage): string[] {
    return message.role === 'tool' ? [message.content] : [];
  },

  withObservationResults(message: ChatMessage, results: readonly string[]): ChatMessage {
    return { ...message, content: results[0] ?? message.content };
  },
};
