import { Context } from '@temporalio/activity';
import type { ToolActivityInput, ToolActivityOutput } from '../../src/core/activity-contracts';
import { AgentMetrics, type ToolCallOutcome } from '../../src/core/agent-metrics';
import { cancelledAttemptOutcome } from '../metrics/attempt-outcome';

type ToolActivity = (input: ToolActivityInput) => Promise<ToolActivityOutput>;

/**
 * Wraps a tool's activity so each attempt is counted and timed through the activity's metric
 * meter: `react_agent_tool_calls_total{tool,outcome}` and `react_agent_tool_call_seconds{tool}`.
 * The outcome is `error` when the tool answered with an error observation, `failed` when the
 * attempt threw, `cancelled` or `timed_out` when it was cancelled. The activity keeps its name.
 */
export function withToolCallMetrics<T extends ToolActivity>(tool: string, activity: T): T {
  const measured = async (input: ToolActivityInput): Promise<ToolActivityOutput> => {
    const context = Context.current();
    const startedAt = performance.now();
    let outcome: ToolCallOutcome = 'failed';
    try {
      const output = await activity(input);
      outcome = output.isError ? 'error' : 'ok';
      return output;
    } catch (error) {
      outcome = cancelledAttemptOutcome(context) ?? 'failed';
      throw error;
    } finally {
      const calls = AgentMetrics.toolCalls;
      context.metricMeter.createCounter(calls.name, calls.unit, calls.description).add(1, { tool, outcome });
      const seconds = AgentMetrics.toolCallSeconds;
      context.metricMeter
        .createHistogram(seconds.name, 'float', seconds.unit, seconds.description)
        .record((performance.now() - startedAt) / 1000, { tool });
    }
  };
  Object.defineProperty(measured, 'name', { value: activity.name });
  return measured as T;
}
