import { proxyActivities } from '@temporalio/workflow';
import type { NaiveActivities } from './activities';

const activities = proxyActivities<NaiveActivities>({ startToCloseTimeout: '1 minute' });

/**
 * The naive design the benchmark compares against: the workflow holds the whole message list
 * and passes it to every model call, and tool outputs come back whole. Same loop, same
 * scripted model, same tools; only where the transcript lives differs.
 */
export async function naiveResearchAgent(
  question: string,
  maxModelCalls: number,
): Promise<{ calls: number; answer: string }> {
  const messages: Array<{ role: string; content: string }> = [
    { role: 'system', content: 'You are a deep research assistant. Use <tool_call> and <answer>.' },
    { role: 'user', content: question },
  ];
  for (let call = 1; call <= maxModelCalls; call += 1) {
    const content = await activities.naiveCallModel(messages, call);
    messages.push({ role: 'assistant', content });
    const answer = /<answer>([\s\S]*?)<\/answer>/.exec(content);
    if (answer) return { calls: call, answer: answer[1] ?? '' };
    const toolCall = /<tool_call>([\s\S]*?)<\/tool_call>/.exec(content);
    if (toolCall) {
      const output = await activities.naiveTool(toolCall[1] ?? '');
      messages.push({ role: 'user', content: `<tool_response>\n${output}\n</tool_response>` });
    }
  }
  return { calls: maxModelCalls, answer: '' };
}
