import type { RunEvent } from './run-events';

const oneLine = (text: string, maxCharacters = 160) => {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > maxCharacters ? `${flat.slice(0, maxCharacters - 1)}…` : flat;
};

/** The lines `run` and `follow` print for a run's steps. */
export function progressLines(event: RunEvent): string[] {
  switch (event.kind) {
    case 'model_call_started':
      return [`[call ${event.modelCall}] ${event.finalAnswer ? 'asking for the final answer' : 'calling the model'}`];
    case 'model_call_completed': {
      const { turn, usage, contextTokens } = event.output;
      const lines = [`[call ${event.modelCall}] ${contextTokens.toLocaleString('en-US')} context tokens (+${usage.completionTokens.toLocaleString('en-US')})`];
      if (turn.thought) lines.push(`  thought: ${oneLine(turn.thought)}`);
      for (const call of turn.toolCalls) lines.push(`  tool call: ${call.name || '?'} ${oneLine(JSON.stringify(call.arguments), 120)}${call.problem ? ` (not run: ${oneLine(call.problem, 80)})` : ''}`);
      if (turn.answer !== undefined) lines.push(`  answer: ${oneLine(turn.answer)}`);
      else if (turn.problem) lines.push(`  format problem: ${oneLine(turn.problem, 100)}`);
      return lines;
    }
    case 'tool_started':
      return [];
    case 'tool_completed':
      return [`  ${event.tool} → ${event.output.isError ? 'error: ' : ''}${oneLine(event.output.observation.preview, 140)} (${event.output.observation.characters.toLocaleString('en-US')} chars)`];
    case 'activity_failed':
      return [`  ${event.activity} failed: ${oneLine(event.message)}`];
    case 'continued_as_new':
      return ['  (continued as new to keep history small; same workflow id)'];
    case 'run_completed':
    case 'run_closed':
      return [];
  }
}
