/**
 * The streamed replies of Anthropic's Messages API and OpenAI's Responses API as their servers
 * send them (issue 31), for tests of `activities/model/anthropic-messages-model.ts` and
 * `openai-responses-model.ts` over the real SDKs: a fake `fetch` that records each request's body
 * and answers with a scripted SSE body or an error.
 */

/** One SSE event with its name, as both APIs send them. */
export const sseEvent = (data: Record<string, unknown>): string =>
  `event: ${String(data.type)}\ndata: ${JSON.stringify(data)}\n\n`;

/** What an Anthropic reply holds, in order. */
export interface AnthropicReplyScript {
  thinking?: { text: string; signature: string };
  text?: string;
  toolUses?: Array<{ id: string; name: string; input: Record<string, unknown> }>;
  stopReason?: string;
  usage?: { input: number; output: number; cacheRead?: number; cacheWrite?: number };
}

/** An Anthropic Messages stream: message_start, each block streamed in pieces, message_delta, message_stop. */
export function anthropicStream(script: AnthropicReplyScript): string {
  const usage = script.usage ?? { input: 10, output: 5 };
  const events: Array<Record<string, unknown>> = [
    {
      type: 'message_start',
      message: {
        id: 'msg_1',
        type: 'message',
        role: 'assistant',
        model: 'claude-test',
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: {
          input_tokens: usage.input,
          output_tokens: 1,
          cache_read_input_tokens: usage.cacheRead ?? 0,
          cache_creation_input_tokens: usage.cacheWrite ?? 0,
        },
      },
    },
  ];
  let index = 0;
  if (script.thinking) {
    events.push({
      type: 'content_block_start',
      index,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    });
    for (const piece of halves(script.thinking.text))
      events.push({ type: 'content_block_delta', index, delta: { type: 'thinking_delta', thinking: piece } });
    events.push({
      type: 'content_block_delta',
      index,
      delta: { type: 'signature_delta', signature: script.thinking.signature },
    });
    events.push({ type: 'content_block_stop', index });
    index += 1;
  }
  if (script.text) {
    events.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
    for (const piece of halves(script.text))
      events.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text: piece } });
    events.push({ type: 'content_block_stop', index });
    index += 1;
  }
  for (const call of script.toolUses ?? []) {
    events.push({
      type: 'content_block_start',
      index,
      content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} },
    });
    for (const piece of halves(JSON.stringify(call.input)))
      events.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: piece } });
    events.push({ type: 'content_block_stop', index });
    index += 1;
  }
  events.push({
    type: 'message_delta',
    delta: {
      stop_reason: script.stopReason ?? (script.toolUses?.length ? 'tool_use' : 'end_turn'),
      stop_sequence: null,
    },
    usage: { output_tokens: usage.output },
  });
  events.push({ type: 'message_stop' });
  return events.map(sseEvent).join('');
}

/** What a Responses reply holds, in order. */
export interface ResponsesReplyScript {
  reasoning?: { id: string; summary: string; encrypted: string };
  text?: string;
  functionCalls?: Array<{ callId: string; name: string; arguments: string }>;
  /** `completed` (default) or `incomplete` (max_output_tokens). */
  status?: 'completed' | 'incomplete';
  usage?: { input: number; output: number; cached?: number; reasoning?: number };
}

/** A Responses stream: response.created, each output item added, streamed and done, then response.completed or .incomplete. */
export function responsesStream(script: ResponsesReplyScript): string {
  const usage = script.usage ?? { input: 10, output: 5 };
  const events: Array<Record<string, unknown>> = [];
  let sequence = 0;
  const push = (event: Record<string, unknown>) => events.push({ ...event, sequence_number: sequence++ });
  const response = (status: string, output: unknown[]) => ({
    id: 'resp_1',
    object: 'response',
    created_at: 0,
    model: 'gpt-test',
    status,
    output,
    error: null,
    incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
    usage:
      status === 'in_progress'
        ? null
        : {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: usage.cached ?? 0 },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: usage.reasoning ?? 0 },
            total_tokens: usage.input + usage.output,
          },
  });
  push({ type: 'response.created', response: response('in_progress', []) });
  const output: unknown[] = [];
  let index = 0;
  if (script.reasoning) {
    const done = {
      type: 'reasoning',
      id: script.reasoning.id,
      summary: [{ type: 'summary_text', text: script.reasoning.summary }],
      encrypted_content: script.reasoning.encrypted,
    };
    push({
      type: 'response.output_item.added',
      output_index: index,
      item: { ...done, summary: [], encrypted_content: null },
    });
    for (const piece of halves(script.reasoning.summary))
      push({
        type: 'response.reasoning_summary_text.delta',
        output_index: index,
        item_id: done.id,
        summary_index: 0,
        delta: piece,
      });
    push({ type: 'response.output_item.done', output_index: index, item: done });
    output.push(done);
    index += 1;
  }
  if (script.text) {
    const done = {
      type: 'message',
      id: 'msg_1',
      role: 'assistant',
      status: 'completed',
      content: [{ type: 'output_text', text: script.text, annotations: [] }],
    };
    push({
      type: 'response.output_item.added',
      output_index: index,
      item: { ...done, content: [], status: 'in_progress' },
    });
    for (const piece of halves(script.text))
      push({
        type: 'response.output_text.delta',
        output_index: index,
        item_id: 'msg_1',
        content_index: 0,
        delta: piece,
      });
    push({ type: 'response.output_item.done', output_index: index, item: done });
    output.push(done);
    index += 1;
  }
  for (const call of script.functionCalls ?? []) {
    const done = {
      type: 'function_call',
      id: `fc_${call.callId}`,
      call_id: call.callId,
      name: call.name,
      arguments: call.arguments,
      status: 'completed',
    };
    push({
      type: 'response.output_item.added',
      output_index: index,
      item: { ...done, arguments: '', status: 'in_progress' },
    });
    for (const piece of halves(call.arguments))
      push({ type: 'response.function_call_arguments.delta', output_index: index, item_id: done.id, delta: piece });
    push({ type: 'response.output_item.done', output_index: index, item: done });
    output.push(done);
    index += 1;
  }
  const status = script.status ?? 'completed';
  push({ type: `response.${status}`, response: response(status, output) });
  return events.map(sseEvent).join('');
}

/** A text in two pieces (one when it is a single character). */
function halves(text: string): string[] {
  const middle = Math.ceil(text.length / 2);
  return text.length > 1 ? [text.slice(0, middle), text.slice(middle)] : [text];
}

/** An answer of the fake fetch: an SSE body, or an error status with its JSON body and headers. */
export type ScriptedAnswer = string | { status: number; body: unknown; headers?: Record<string, string> };

/** A fake `fetch` answering each request with the next scripted answer, keeping each request's URL, headers and JSON body. */
export function scriptedFetch(answers: ScriptedAnswer[]) {
  const requests: Array<{ url: string; headers: Headers; body: Record<string, unknown> }> = [];
  const fetch = (async (input: string | URL | Request, init?: RequestInit) => {
    const request = new Request(input, init);
    requests.push({
      url: request.url,
      headers: request.headers,
      body: (await request.text().then((text) => (text ? JSON.parse(text) : {}))) as Record<string, unknown>,
    });
    const answer = answers.shift();
    if (answer === undefined) throw new Error('no scripted answer left');
    if (typeof answer === 'string')
      return new Response(answer, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    return new Response(JSON.stringify(answer.body), {
      status: answer.status,
      headers: { 'content-type': 'application/json', ...answer.headers },
    });
  }) as typeof globalThis.fetch;
  return { fetch, requests };
}
