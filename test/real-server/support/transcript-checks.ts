import type { ChatMessage } from '../../../src/core/messages';
import type { ProtocolName } from '../../../src/core/protocols/protocol';
import { protocolProblems } from '../../integration/support/agent-environment';

/**
 * What is wrong with a finished run's transcript for its protocol: a tool call without its
 * response (tags: a `<tool_call>` without a `<tool_response>` in the next message; native: an
 * assistant `tool_calls` entry without a `tool` message of the same id, in call order, right
 * after it), or roles out of order. Empty when the transcript is one a server accepts back.
 */
export function transcriptProblems(messages: ChatMessage[], protocol: ProtocolName): string[] {
  if (protocol !== 'native') return protocolProblems(messages);
  const problems: string[] = [];
  if (messages[0]?.role !== 'system') problems.push('first message is not the system prompt');
  if (messages[1]?.role !== 'user') problems.push('second message is not the question');
  for (let index = 2; index < messages.length; index += 1) {
    const message = messages[index] as ChatMessage;
    if (message.role !== 'assistant' || !message.toolCalls?.length) continue;
    const answers = messages.slice(index + 1, index + 1 + message.toolCalls.length);
    message.toolCalls.forEach((call, position) => {
      const answer = answers[position];
      if (answer?.role !== 'tool' || answer.toolCallId !== call.id)
        problems.push(`message ${index}: tool call ${call.id} is not answered by message ${index + 1 + position}`);
    });
  }
  return problems;
}
