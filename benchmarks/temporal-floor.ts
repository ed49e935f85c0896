import type OpenAI from 'openai';
import { lookup } from '../test/fakes/test-tools';

/** The floor's model call: whether the scripted model answered, and the query of its tool call otherwise. */
export interface FloorReply {
  answered: boolean;
  query: string;
}

/** The two activities of the floor workflow (floor-workflows.ts). */
export interface FloorActivities {
  floorModelCall(workflowId: string, call: number): Promise<FloorReply>;
  floorToolCall(query: string, callId: string): Promise<string>;
}

/** The question, then a turn per earlier call: the scripted model numbers its call by the assistant messages it is sent. */
function floorMessages(call: number): Array<{ role: 'user' | 'assistant'; content: string }> {
  const earlier = Array.from({ length: call - 1 }, (_, index) => [
    { role: 'assistant' as const, content: `<tool_call>step ${index + 1}</tool_call>` },
    { role: 'user' as const, content: '<tool_response>\nobserved\n</tool_response>' },
  ]);
  return [{ role: 'user', content: 'Which company sold more cars in 2024, BYD or Tesla?' }, ...earlier.flat()];
}

/** The bare loop's and the floor's model call: one streamed request to the scripted model server, its reply's text. */
export async function streamScriptedReply(
  openai: OpenAI,
  messages: Array<{ role: 'system' | 'user' | 'assistant'; content: string }>,
  workflowId: string,
  call: number,
): Promise<string> {
  const stream = await openai.chat.completions.create(
    {
      model: 'scripted-model',
      messages,
      stream: true,
      stream_options: { include_usage: true },
      stop: ['\n<tool_response>', '<tool_response>'],
      temperature: 0.6,
      top_p: 0.95,
      max_tokens: 1000,
    },
    { headers: { 'x-react-agent-workflow-id': workflowId, 'x-react-agent-model-call': String(call) } },
  );
  let content = '';
  for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
  return content;
}

/** The bare loop's and the floor's tool call: `lookup` called directly, outside any activity. */
export function runLookup(args: Record<string, unknown>, workflowId: string, callId: string): Promise<string> {
  return lookup.run(args, { signal: new AbortController().signal, heartbeat() {}, workflowId, callId });
}

/**
 * The bare loop's work as activities: the same streamed request to the scripted model server (a
 * short stand-in for the conversation, one assistant message per earlier call) and the same `lookup`.
 */
export function createFloorActivities(openai: OpenAI): FloorActivities {
  return {
    async floorModelCall(workflowId, call) {
      const content = await streamScriptedReply(openai, floorMessages(call), workflowId, call);
      return { answered: /<answer>/.test(content), query: /"query":\s*"([^"]*)"/.exec(content)?.[1] ?? '' };
    },
    floorToolCall: (query, callId) => runLookup({ query }, 'floor', callId),
  };
}
