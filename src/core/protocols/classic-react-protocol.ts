import { JSON5 } from '../json5';
import type { ChatMessage, MessagePart, PendingMessage } from '../messages';
import type { ToolSpec } from '../tool-spec';
import type { ModelReply, Observation, ParsedTurn, Protocol } from './protocol';

const FORMAT_HELP =
  'Use exactly this format:\nThought: your reasoning\nAction: the tool name\nAction Input: the arguments as a JSON object\n' +
  'or, when you know the answer:\nThought: your reasoning\nFinal Answer: the answer';

const OBSERVATION_LABEL = 'Observation: ';

/** A message's text in pieces, each `Observation: ` starting one: the result is the rest of its piece. */
function observationPieces(content: string): string[] {
  return content.split(/(?=Observation: )/);
}

/** A user message that starts with `Observation:` (results and corrections alike). */
function isClassicObservation(message: ChatMessage): boolean {
  return message.role === 'user' && message.content.startsWith('Observation:');
}

const LINE_TERMINATOR = /[\n\r\u2028\u2029]/;
const WHITESPACE = /\s/;

/** Whether `label` stands at `at`, ASCII letters in either case (as a regex's `i` flag), then a colon. */
function labelAt(text: string, at: number, label: string): boolean {
  if (text[at + label.length] !== ':') return false;
  for (let index = 0; index < label.length; index++) {
    const char = text[at + index] as string;
    if (char !== label[index] && !(char.charCodeAt(0) < 128 && char.toLowerCase() === label[index]?.toLowerCase()))
      return false;
  }
  return true;
}

/**
 * Where the first line that starts (after whitespace, blank lines included) with `label:` has its
 * label, in one pass over the text: what `/^\s*label:/mi` finds, without a pattern built at run time
 * or backtracking over whitespace on a model's text.
 */
function labelledLine(text: string, label: string): number | undefined {
  let atLineStart = true;
  for (let index = 0; index < text.length; index++) {
    const char = text[index] as string;
    if (LINE_TERMINATOR.test(char)) atLineStart = true;
    else if (atLineStart && !WHITESPACE.test(char)) {
      if (labelAt(text, index, label)) return index;
      atLineStart = false;
    }
  }
  return undefined;
}

/** The text after the first line labelled `label:`, up to the first line labelled with one of `until`, trimmed; undefined without such a line. */
export function classicField(content: string, label: string, until: string[]): string | undefined {
  const at = labelledLine(content, label);
  if (at === undefined) return undefined;
  let start = at + label.length + 1;
  while (content[start] === ' ' || content[start] === '\t') start++;
  const rest = content.slice(start);
  const stops = until.map((next) => labelledLine(rest, next)).filter((index): index is number => index !== undefined);
  return rest.slice(0, stops.length ? Math.min(...stops) : rest.length).trim();
}

/**
 * The classic text format: `Thought:` / `Action:` / `Action Input:` / `Observation:`, ending
 * with `Final Answer:`. Stops on `Observation:` so the model never writes its own.
 */
export const classicReactProtocol: Protocol = {
  name: 'classic',
  stop: ['\nObservation:', 'Observation:'],
  nativeTools: false,

  renderSystemPrompt(tools: ToolSpec[], today: string): string {
    const toolLines = tools
      .map((tool) => `- ${tool.name}: ${tool.description} Arguments (JSON schema): ${JSON.stringify(tool.parameters)}`)
      .join('\n');
    return (
      'You are a deep research assistant. Answer the question thoroughly and accurately, using the tools to gather information.\n\n' +
      (tools.length ? `Tools:\n${toolLines}\n\n` : 'No tools are available: answer from what you know.\n\n') +
      `${FORMAT_HELP}\n\nAfter each Action you will get an Observation with the tool's result. Repeat Thought/Action as needed.` +
      `\n\nCurrent date: ${today}`
    );
  },

  cleanOutput(content: string): string {
    const cut = /\n?Observation:/.exec(content);
    return cut ? content.slice(0, cut.index).trimEnd() : content;
  },

  parse(reply: ModelReply, modelCall: number): ParsedTurn {
    const content = reply.content;
    const thought = (classicField(content, 'Thought', ['Action', 'Action Input', 'Final Answer']) ?? '').slice(
      0,
      1_000,
    );
    const finalAnswer = classicField(content, 'Final Answer', []);
    const action = classicField(content, 'Action', ['Action Input', 'Thought', 'Final Answer']);
    if (action) {
      const id = `call-${modelCall}-1`;
      const name = action.split('\n')[0]?.trim().replace(/^`|`$/g, '') ?? '';
      const rawInput = classicField(content, 'Action Input', ['Thought', 'Action', 'Final Answer']);
      if (rawInput === undefined)
        return {
          thought,
          toolCalls: [
            { id, name, arguments: {}, problem: `Error: the Action has no "Action Input:" line. ${FORMAT_HELP}` },
          ],
        };
      const unfenced = rawInput.replace(/^```(?:json)?\s*|\s*```$/g, '');
      try {
        const parsed: unknown = unfenced === '' ? {} : JSON5.parse(unfenced);
        if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
          return { thought, toolCalls: [{ id, name, arguments: parsed as Record<string, unknown> }] };
        return {
          thought,
          toolCalls: [
            { id, name, arguments: {}, problem: `Error: the Action Input must be a JSON object. ${FORMAT_HELP}` },
          ],
        };
      } catch (error) {
        return {
          thought,
          toolCalls: [
            {
              id,
              name,
              arguments: {},
              problem: `Error: the Action Input is not valid JSON (${(error as Error).message}). ${FORMAT_HELP}`,
            },
          ],
        };
      }
    }
    if (finalAnswer) return { thought, toolCalls: [], answer: finalAnswer };
    return { thought, toolCalls: [], problem: `Your reply did not follow the format. ${FORMAT_HELP}` };
  },

  renderObservations(observations: Observation[]): PendingMessage[] {
    const parts: MessagePart[] = [];
    observations.forEach((observation, index) =>
      parts.push({ text: `${index > 0 ? '\n' : ''}Observation: ` }, ...observation.parts),
    );
    return [{ role: 'user', parts }];
  },

  renderCorrection(problem: string): PendingMessage {
    return { role: 'user', parts: [{ text: `Observation: ${problem}` }] };
  },

  finalAnswerRequest(reason: string): string {
    return `${reason} Do not use any more tools. Based on everything above, write your best answer now as:\nThought: your final reasoning\nFinal Answer: the answer`;
  },

  isObservation: isClassicObservation,

  /** Each `Observation: ` piece's text after the label, up to the next one (its separating newline included). */
  observationResults(message: ChatMessage): string[] {
    if (!isClassicObservation(message)) return [];
    return observationPieces(message.content)
      .filter((piece) => piece.startsWith(OBSERVATION_LABEL))
      .map((piece) => piece.slice(OBSERVATION_LABEL.length));
  },

  withObservationResults(message: ChatMessage, results: readonly string[]): ChatMessage {
    let next = 0;
    const pieces = observationPieces(message.content).map((piece) => {
      if (!piece.startsWith(OBSERVATION_LABEL)) return piece;
      const result = results[next];
      next += 1;
      return result === undefined ? piece : `${OBSERVATION_LABEL}${result}`;
    });
    return { ...message, content: pieces.join('') };
  },
};
