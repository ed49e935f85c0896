import { Context } from '@temporalio/activity';
import JSON5 from 'json5';
import type OpenAI from 'openai';
import type { ToolDefinition } from '../../activities';

/** Activities of the naive baseline: the whole transcript goes in, whole outputs come out. */
export function createNaiveActivities(openai: OpenAI, model: string, tool: ToolDefinition) {
  return {
    async naiveCallModel(messages: Array<{ role: string; content: string }>, call: number): Promise<string> {
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      const stream = await openai.chat.completions.create(
        { model, messages: messages as never, stream: true, stop: ['\n<tool_response>', '<tool_response>'] },
        { headers: { 'x-react-agent-workflow-id': workflowId, 'x-react-agent-model-call': String(call) } },
      );
      let content = '';
      for await (const chunk of stream) content += chunk.choices[0]?.delta?.content ?? '';
      return content;
    },
    async naiveTool(body: string): Promise<string> {
      const parsed = JSON5.parse(body) as { arguments: Record<string, unknown> };
      const workflowId = Context.current().info.workflowExecution?.workflowId ?? '';
      return tool.run(parsed.arguments, {
        signal: new AbortController().signal,
        heartbeat: () => undefined,
        workflowId,
        callId: 'naive',
      });
    },
  };
}

export type NaiveActivities = ReturnType<typeof createNaiveActivities>;
