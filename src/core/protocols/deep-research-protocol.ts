import { JSON5 } from '../json5';
import type { ChatMessage, MessagePart, PendingMessage } from '../messages';
import type { ToolSpec } from '../tool-spec';
import type { ModelReply, Observation, ParsedTurn, Protocol, ToolCallRequest } from './protocol';
import { callOverCap, DEFAULT_MAX_TOOL_CALLS_PER_REPLY } from './tool-call-cap';

/** Most tool calls read from one reply; the rest are answered with a note. */
const THOUGHT_PREVIEW_CHARACTERS = 1_000;
const TOOL_RESPONSE_TAG = '<tool_response>';

export const INVALID_TOOL_CALL_HELP =
  'Write the tool call as a JSON object with a string "name" and an object "arguments", inside <tool_call></tool_call>, ' +
  'for example <tool_call>\n{"name": "search", "arguments": {"query": ["..."]}}\n</tool_call>. ' +
  'For python, put the code in <code></code> inside the <tool_call>.';

/** A message's text split around its `<tool_response>` blocks, each block a part of its own (odd indexes). */
function toolResponseParts(content: string): string[] {
  return content.split(/(<tool_response>\n?[\s\S]*?\n?<\/tool_response>)/);
}

/** The result inside one `<tool_response>` block, without the newlines that frame it; undefined for text between blocks. */
function toolResponseResult(part: string): string | undefined {
  const match = /^<tool_response>\n?([\s\S]*?)\n?<\/tool_response>$/.exec(part);
  return match ? (match[1] ?? '') : undefined;
}

/** A user message with a `<tool_response>` in it. */
function isToolResponseMessage(message: ChatMessage): boolean {
  return message.role === 'user' && message.content.includes(TOOL_RESPONSE_TAG);
}

function between(
  text: string,
  open: string,
  close: string,
  from = 0,
): { inner: string; end: number; closed: boolean } | undefined {
  const start = text.indexOf(open, from);
  if (start < 0) return undefined;
  const innerStart = start + open.length;
  const stop = text.indexOf(close, innerStart);
  if (stop < 0) return { inner: text.slice(innerStart), end: text.length, closed: false };
  return { inner: text.slice(innerStart, stop), end: stop + close.length, closed: true };
}

/** How many times `token` occurs in `text` from `from` on. */
function occurrences(text: string, token: string, from: number): number {
  let count = 0;
  for (let at = text.indexOf(token, from); at >= 0; at = text.indexOf(token, at + token.length)) count += 1;
  return count;
}

function describe(value: unknown): string {
  return Array.isArray(value) ? 'a list' : value === null ? 'null' : typeof value;
}

function parseArguments(raw: unknown): { arguments?: Record<string, unknown>; problem?: string } {
  if (raw === undefined || raw === null) return { arguments: {} };
  if (typeof raw === 'string') {
    try {
      const parsed: unknown = JSON5.parse(raw);
      if (parsed && typeof parsed === 'object' && !Array.isArray(parsed))
        return { arguments: parsed as Record<string, unknown> };
    } catch {
      // fall through to the problem below
    }
    return { problem: `"arguments" is a string that is not a JSON object: ${JSON.stringify(raw.slice(0, 200))}` };
  }
  if (typeof raw === 'object' && !Array.isArray(raw)) return { arguments: raw as Record<string, unknown> };
  return { problem: `"arguments" must be an object, got ${describe(raw)}` };
}

/** Reads one `<tool_call>` body. Never throws. */
export function parseToolCallBody(body: string, id: string): ToolCallRequest {
  const code = between(body, '<code>', '</code>');
  if (code) {
    let name = 'python';
    const head = body.slice(0, body.indexOf('<code>')).trim();
    if (head) {
      try {
        const parsed: unknown = JSON5.parse(head);
        if (parsed && typeof parsed === 'object' && typeof (parsed as { name?: unknown }).name === 'string') {
          name = (parsed as { name: string }).name;
        }
      } catch {
        if (/^[A-Za-z_][\w-]*$/.test(head)) name = head;
      }
    }
    return { id, name, arguments: { code: code.inner.trim() } };
  }
  let parsed: unknown;
  try {
    parsed = JSON5.parse(body.trim());
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    return {
      id,
      name: '',
      arguments: {},
      problem: `Error: the tool call is not valid JSON (${reason}). ${INVALID_TOOL_CALL_HELP}`,
    };
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) {
    return {
      id,
      name: '',
      arguments: {},
      problem: `Error: the tool call must be a JSON object, got ${describe(parsed)}. ${INVALID_TOOL_CALL_HELP}`,
    };
  }
  const record = parsed as Record<string, unknown>;
  const name = record.name;
  if (typeof name !== 'string' || name.trim() === '') {
    return { id, name: '', arguments: {}, problem: `Error: the tool call has no "name". ${INVALID_TOOL_CALL_HELP}` };
  }
  const args = parseArguments(record.arguments ?? record.parameters);
  if (args.problem) return { id, name, arguments: {}, problem: `Error: ${args.problem}. ${INVALID_TOOL_CALL_HELP}` };
  return { id, name: name.trim(), arguments: args.arguments ?? {} };
}

/** The model's reasoning: inside <think>, else the text before the first tag; shortened for history. */
export function extractThought(content: string): string {
  const think = between(content, '<think>', '</think>');
  const raw = think ? think.inner : (content.split(/<tool_call>|<answer>/)[0] ?? '');
  const trimmed = raw.trim();
  return trimmed.length > THOUGHT_PREVIEW_CHARACTERS ? `${trimmed.slice(0, THOUGHT_PREVIEW_CHARACTERS - 1)}…` : trimmed;
}

/**
 * The DeepResearch tag protocol: `<think>`, `<tool_call>` with a JSON5 body (python code in
 * `<code>`), observations as user messages in `<tool_response>`, and `<answer>`.
 */
export const deepResearchProtocol: Protocol = {
  name: 'deep-research',
  stop: ['\n<tool_response>', '<tool_response>'],
  nativeTools: false,

  renderSystemPrompt(tools: ToolSpec[], today: string): string {
    const toolLines = tools
      .map((tool) =>
        JSON.stringify({
          type: 'function',
          function: { name: tool.name, description: tool.description, parameters: tool.parameters },
        }),
      )
      .join('\n');
    const toolSection = tools.length
      ? '\n\n# Tools\n\nYou may call one or more tools to help with the question. Their signatures are inside <tools></tools>:\n' +
        `<tools>\n${toolLines}\n</tools>\n\n` +
        'To call a tool, write a JSON object with its name and arguments inside <tool_call></tool_call>:\n' +
        '<tool_call>\n{"name": <tool-name>, "arguments": <arguments-object>}\n</tool_call>\n' +
        'For python, leave the arguments empty and put the code inside <code></code> within the <tool_call>.\n' +
        'Each result comes back to you inside <tool_response></tool_response>.'
      : '\n\nNo tools are available for this question: answer from what you know.';
    return (
      'You are a deep research assistant. You investigate a question thoroughly, across several credible and diverse sources, ' +
      'and give an accurate, objective answer. Think step by step inside <think></think> before you act. ' +
      'When you have gathered enough information, write the complete final answer inside <answer></answer>.' +
      toolSection +
      `\n\nCurrent date: ${today}`
    );
  },

  cleanOutput(content: string): string {
    const cut = content.indexOf(TOOL_RESPONSE_TAG);
    return cut >= 0 ? content.slice(0, cut).trimEnd() : content;
  },

  parse(reply: ModelReply, modelCall: number, maxToolCalls = DEFAULT_MAX_TOOL_CALLS_PER_REPLY): ParsedTurn {
    const content = reply.content;
    const thought = extractThought(content);
    const toolCalls: ToolCallRequest[] = [];
    let position = 0;
    for (;;) {
      const call = between(content, '<tool_call>', '</tool_call>', position);
      if (!call) break;
      const id = `call-${modelCall}-${toolCalls.length + 1}`;
      if (toolCalls.length >= maxToolCalls) {
        // The first call past the cap answers for every one after it (one observation, not thousands).
        toolCalls.push(callOverCap(id, maxToolCalls, call.closed ? occurrences(content, '<tool_call>', call.end) : 0));
        break;
      } else if (!call.closed && call.inner.trim() === '') {
        toolCalls.push({
          id,
          name: '',
          arguments: {},
          problem: `Error: the <tool_call> is empty and has no closing tag. ${INVALID_TOOL_CALL_HELP}`,
        });
      } else {
        toolCalls.push(parseToolCallBody(call.inner, id));
      }
      position = call.end;
      if (!call.closed) break;
    }
    const answerBlock = between(content, '<answer>', '</answer>');
    const answer = answerBlock?.inner.trim();
    const unclosed = answerBlock && !answerBlock.closed ? { unclosedAnswer: true as const } : {};
    if (answer) return { thought, toolCalls, answer, ...unclosed };
    if (toolCalls.length) return { thought, toolCalls, ...unclosed };
    const problem =
      content.trim() === ''
        ? 'Your reply was empty. Continue the research with a <tool_call>, or give your final answer inside <answer></answer>.'
        : answerBlock
          ? 'Your <answer></answer> was empty. Write the final answer inside it.'
          : 'Your reply had neither a <tool_call> nor an <answer>. Call a tool inside <tool_call></tool_call>, or give your final answer inside <answer></answer>.';
    return { thought, toolCalls, problem, ...unclosed };
  },

  renderObservations(observations: Observation[]): PendingMessage[] {
    const parts: MessagePart[] = [];
    observations.forEach((observation, index) => {
      parts.push({ text: `${index > 0 ? '\n' : ''}<tool_response>\n` }, ...observation.parts, {
        text: '\n</tool_response>',
      });
    });
    return [{ role: 'user', parts }];
  },

  renderCorrection(problem: string): PendingMessage {
    return { role: 'user', parts: [{ text: problem }] };
  },

  finalAnswerRequest(reason: string): string {
    return (
      `${reason} Stop calling tools now. Based on everything above, think once more and give the answer you consider most likely, ` +
      'in this format: <think>your final thinking</think>\n<answer>your answer</answer>'
    );
  },

  isObservation: isToolResponseMessage,

  observationResults(message: ChatMessage): string[] {
    if (!isToolResponseMessage(message)) return [];
    return toolResponseParts(message.content)
      .map(toolResponseResult)
      .filter((result): result is string => result !== undefined);
  },

  /** Every `<tool_response>` block written again with its result framed by newlines. */
  withObservationResults(message: ChatMessage, results: readonly string[]): ChatMessage {
    let next = 0;
    const parts = toolResponseParts(message.content).map((part) => {
      const result = toolResponseResult(part);
      if (result === undefined) return part;
      const replaced = results[next] ?? result;
      next += 1;
      return `<tool_response>\n${replaced}\n</tool_response>`;
    });
    return { ...message, content: parts.join('') };
  },
};
