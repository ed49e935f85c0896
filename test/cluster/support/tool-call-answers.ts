import type { ChatMessage } from '../../../src/core/messages';
import { protocolProblems } from '../../integration/support/agent-environment';

/**
 * Whether every tool call of a transcript was answered by its tool: the protocol's problems
 * (each assistant turn's `<tool_call>`s matched by as many `<tool_response>`s in the next message),
 * and every `<tool_response>` that does not read like the tool's own output (`answeredBy`) — a
 * response the agent had to make up (an error, a timeout) is a call the tool never answered.
 */
export function toolCallAnswers(
  messages: ReadonlyArray<Pick<ChatMessage, 'content'> & { role: string }>,
  answeredBy: RegExp,
): { calls: number; problems: string[] } {
  const problems = protocolProblems(messages as ChatMessage[]);
  let calls = 0;
  for (const [index, message] of messages.entries()) {
    if (message.role === 'assistant') calls += message.content.split('<tool_call>').length - 1;
    if (message.role !== 'user' || index < 2) continue;
    for (const response of message.content.split('<tool_response>').slice(1)) {
      const text = response.split('</tool_response>')[0]?.trim() ?? '';
      if (!answeredBy.test(text))
        problems.push(`message ${index}: a tool response not from the tool: ${JSON.stringify(text.slice(0, 160))}`);
    }
  }
  return { calls, problems };
}
