import { formatUsd } from '../core/cost-figures';
import type { RunEvent } from './run-events';

const oneLine = (text: unknown, maxCharacters = 160) => {
  const flat = String(text ?? '')
    .replace(/\s+/g, ' ')
    .trim();
  return flat.length > maxCharacters ? `${flat.slice(0, maxCharacters - 1)}…` : flat;
};

const count = (value: unknown) =>
  typeof value === 'number' && Number.isFinite(value) ? value.toLocaleString('en-US') : '?';

const plural = (value: number, one: string, many: string) => `${count(value)} ${value === 1 ? one : many}`;

function linesFor(event: RunEvent): string[] {
  switch (event.kind) {
    case 'model_call_started':
      return [`[call ${event.modelCall}] ${event.finalAnswer ? 'asking for the final answer' : 'calling the model'}`];
    case 'model_call_completed': {
      const { turn, usage, contextTokens } = event.output;
      const spent = event.spent
        ? `; ${formatUsd(event.spent.costUsd)}${event.spent.maxCostUsd !== undefined ? ` of ${formatUsd(event.spent.maxCostUsd)}` : ''} spent`
        : '';
      const cost = typeof usage?.costUsd === 'number' ? `, ${formatUsd(usage.costUsd)}${spent}` : '';
      const lines = [
        `[call ${event.modelCall}] ${count(contextTokens)} context tokens (+${count(usage?.completionTokens)}${cost})`,
      ];
      if (turn.thought) lines.push(`  thought: ${oneLine(turn.thought)}`);
      for (const call of turn.toolCalls ?? [])
        lines.push(
          `  tool call: ${call?.name || '?'} ${oneLine(JSON.stringify(call?.arguments ?? {}), 120)}${call?.problem ? ` (not run: ${oneLine(call.problem, 80)})` : ''}`,
        );
      if (turn.answer !== undefined) lines.push(`  answer: ${oneLine(turn.answer)}`);
      else if (turn.problem) lines.push(`  format problem: ${oneLine(turn.problem, 100)}`);
      return lines;
    }
    case 'compression_started':
      return [
        `  compressing the context (target ${count(event.targetTokens)} tokens${event.summarize ? ', may summarise old turns' : ''}) ...`,
      ];
    case 'context_compressed': {
      const { stubbedObservations, summarizedTurns, contextTokens } = event.output;
      return [
        `  context compressed: ${plural(stubbedObservations, 'observation', 'observations')} stubbed, ${plural(summarizedTurns, 'turn', 'turns')} summarised; now ${count(contextTokens)} tokens`,
      ];
    }
    case 'context_window_learned': {
      const { contextWindow, source, promptBudget } = event.output;
      if (contextWindow === undefined)
        return ['  model context window: the server does not say; the context budget is limits.maxContextTokens'];
      return [
        `  model context window: ${count(contextWindow)} tokens (${oneLine(source, 100)}); a prompt may take ${count(promptBudget)} of them`,
      ];
    }
    case 'tool_started':
      return [];
    case 'tool_completed':
      return [
        `  ${event.tool} → ${event.output.isError ? 'error: ' : ''}${oneLine(event.output.observation.preview, 140)} (${count(event.output.observation.characters)} chars)`,
      ];
    case 'activity_completed':
      return [`  ${event.activity} completed`];
    case 'activity_failed':
      return [`  ${event.activity} failed: ${oneLine(event.message)}`];
    case 'activity_cancelled':
      return [`  ${event.activity} cancelled`];
    case 'continued_as_new':
      return ['  (continued as new to keep history small; same workflow id)'];
    case 'run_completed':
    case 'run_closed':
      return [];
    // Sub-runs' lines carry their labels: the follower prints them (src/cli/sub-run-follow.ts).
    case 'sub_run_started':
    case 'sub_run_not_started':
    case 'sub_run_closed':
      return [];
    default:
      return [`  (${oneLine((event as { kind?: unknown }).kind ?? 'an event', 60)})`];
  }
}

/**
 * The lines `run` and `follow` print for a run's steps. Never throws: an event it cannot show
 * (an unknown kind, a missing field) becomes one generic line, so the display cannot stop a
 * command that watches a run.
 */
export function progressLines(event: RunEvent): string[] {
  try {
    return linesFor(event);
  } catch (error) {
    const kind =
      typeof (event as { kind?: unknown } | null)?.kind === 'string' ? (event as { kind: string }).kind : 'event';
    return [`  (${oneLine(kind, 60)}: not shown, ${oneLine(error instanceof Error ? error.message : error, 100)})`];
  }
}
