/**
 * The chaos harness's invariant checkers: pure functions of transcripts, request logs, tool logs
 * and times, each returning the violations it found in words (empty when the invariant holds).
 */

import type { ToolLogEntry } from '../../test/integration/support/tool-log';
/** Marks of the form `@@r7-t2-c1@@` in a text, in order (the chaos tools echo their call's mark). */
export function tagsIn(text: string): string[] {
  return [...text.matchAll(/@@([A-Za-z0-9_.-]+)@@/g)].map((match) => match[1] as string);
}

/** A stored transcript message (the shape `loadConversation` returns). */
export interface TranscriptMessage {
  role: string;
  content: string;
  toolCalls?: Array<{ id: string; name: string; arguments: string }>;
  toolCallId?: string;
}

/** One request the scripted model server received, with when it completed. */
export interface ModelRequestLogEntry {
  workflowId?: string;
  /** The `x-react-agent-model-call` header; absent on compression summary requests. */
  modelCall?: number;
  receivedAt: number;
  /** The whole response (a 200 completion) was written. */
  completed: boolean;
  /** When the harness saw it completed (polled, so up to ~50 ms late). */
  completedAt?: number;
}

/** A start or stop line a test tool wrote (test/fakes/test-tools.ts). */
export type { ToolLogEntry };

/** A worker process SIGKILLed at `at` (ms since the epoch). */
export interface WorkerKill {
  pid: number;
  at: number;
}

/** How long a completion poll may lag behind the real completion. */
const COMPLETION_POLL_SLACK_MS = 250;

function roleSequenceProblem(index: number, role: string, previous: string | undefined): string | undefined {
  if (role === 'system') return `message ${index} is a second system message`;
  if (role === previous && (role === 'user' || role === 'assistant'))
    return `messages ${index - 1} and ${index} are both ${role} messages (roles must alternate)`;
  return undefined;
}

/** The bodies of the `<open>…</close>` sections of `text`, in order (an unclosed last one runs to the end). */
function sections(text: string, open: string, close: string): string[] {
  return text
    .split(open)
    .slice(1)
    .map((piece) => {
      const end = piece.indexOf(close);
      return end === -1 ? piece : piece.slice(0, end);
    });
}

/**
 * Checks that the `answers`-th response carries no tag but its call's, and records tags so a
 * tag seen twice (a call issued twice, or answered twice) is reported.
 */
function checkTags(
  problems: string[],
  where: string,
  callTag: string | undefined,
  responseText: string,
  seenResponseTags: Map<string, string>,
): void {
  for (const tag of tagsIn(responseText)) {
    if (callTag !== undefined && tag !== callTag)
      problems.push(
        `${where} carries the result of @@${tag}@@ but answers call @@${callTag}@@ (out of order or misplaced)`,
      );
    const earlier = seenResponseTags.get(tag);
    if (earlier !== undefined && earlier !== where)
      problems.push(`the result of @@${tag}@@ appears twice (${earlier} and ${where})`);
    else seenResponseTags.set(tag, where);
  }
}

/**
 * DeepResearch transcript: system, question, then assistant and user messages alternating; each
 * assistant message's `<tool_call>`s are answered by exactly as many `<tool_response>`s in the
 * next user message, in call order (checked by the tags the chaos tools echo); no assistant
 * message repeated; no call issued twice.
 */
export function checkDeepResearchTranscript(messages: readonly TranscriptMessage[]): string[] {
  const problems: string[] = [];
  if (messages[0]?.role !== 'system') problems.push('message 0 is not the system prompt');
  if (messages[1]?.role !== 'user') problems.push('message 1 is not the question');
  const assistantTexts = new Map<string, number>();
  const callTags = new Map<string, number>();
  const responseTags = new Map<string, string>();
  for (let index = 2; index < messages.length; index += 1) {
    const message = messages[index] as TranscriptMessage;
    const expected = index % 2 === 0 ? 'assistant' : 'user';
    if (message.role !== expected)
      problems.push(`message ${index} is ${message.role}, expected ${expected} (roles must alternate)`);
    if (message.role !== 'assistant') {
      if (
        message.role === 'user' &&
        messages[index - 1]?.role !== 'assistant' &&
        message.content.includes('<tool_response>')
      ) {
        problems.push(`message ${index} has <tool_response>s but does not follow an assistant message`);
      }
      continue;
    }
    const earlier = assistantTexts.get(message.content);
    if (earlier !== undefined) problems.push(`assistant message ${index} repeats assistant message ${earlier}`);
    else assistantTexts.set(message.content, index);
    if (message.content.includes('<tool_response>'))
      problems.push(`assistant message ${index} contains a <tool_response>`);
    const calls = sections(message.content, '<tool_call>', '</tool_call>');
    const next = messages[index + 1];
    const responses = next && next.role === 'user' ? sections(next.content, '<tool_response>', '</tool_response>') : [];
    calls.forEach((call) => {
      const tag = tagsIn(call)[0];
      if (tag === undefined) return;
      const issued = callTags.get(tag);
      if (issued !== undefined)
        problems.push(`tool call @@${tag}@@ was issued twice (messages ${issued} and ${index})`);
      else callTags.set(tag, index);
    });
    if (calls.length > 0 && !next) {
      problems.push(`message ${index} has ${calls.length} <tool_call>s and nothing answers them`);
      continue;
    }
    if (calls.length !== responses.length) {
      problems.push(
        `message ${index} has ${calls.length} <tool_call>s but message ${index + 1} has ${responses.length} <tool_response>s`,
      );
      continue;
    }
    responses.forEach((response, position) => {
      checkTags(
        problems,
        `<tool_response> ${position + 1} of message ${index + 1}`,
        tagsIn(calls[position] as string)[0],
        response,
        responseTags,
      );
    });
  }
  return problems;
}

/**
 * Native (OpenAI tool calling) transcript: every tool call id of an assistant message is answered
 * by exactly one `tool` message right after it, in call order; no stray or duplicated tool
 * messages; no id issued twice; no assistant message repeated; no two user or assistant messages in a row.
 */
export function checkNativeTranscript(messages: readonly TranscriptMessage[]): string[] {
  const problems: string[] = [];
  if (messages[0]?.role !== 'system') problems.push('message 0 is not the system prompt');
  if (messages[1]?.role !== 'user') problems.push('message 1 is not the question');
  const issued = new Map<string, number>();
  const assistantTexts = new Map<string, number>();
  const responseTags = new Map<string, string>();
  let previous: string | undefined = 'user';
  let index = 2;
  while (index < messages.length) {
    const message = messages[index] as TranscriptMessage;
    if (message.role === 'tool') {
      problems.push(
        `message ${index} is a tool message for ${JSON.stringify(message.toolCallId)} with no open call before it (duplicated or misplaced)`,
      );
      previous = 'tool';
      index += 1;
      continue;
    }
    const sequence = roleSequenceProblem(index, message.role, previous);
    if (sequence) problems.push(sequence);
    previous = message.role;
    if (message.role !== 'assistant') {
      index += 1;
      continue;
    }
    const calls = message.toolCalls ?? [];
    const key = `${message.content}\u0000${JSON.stringify(calls)}`;
    const earlier = assistantTexts.get(key);
    if (earlier !== undefined) problems.push(`assistant message ${index} repeats assistant message ${earlier}`);
    else assistantTexts.set(key, index);
    let cursor = index + 1;
    for (const [position, call] of calls.entries()) {
      const before = issued.get(call.id);
      if (before !== undefined)
        problems.push(`tool call id ${call.id} was issued twice (messages ${before} and ${index})`);
      else issued.set(call.id, index);
      const answer = messages[cursor];
      if (!answer || answer.role !== 'tool') {
        problems.push(
          `call ${call.id} (${position + 1} of ${calls.length} in message ${index}) has no tool message right after it`,
        );
        break;
      }
      if (answer.toolCallId !== call.id)
        problems.push(
          `message ${cursor} answers ${JSON.stringify(answer.toolCallId)}, expected ${call.id} (call ${position + 1} of message ${index})`,
        );
      checkTags(problems, `tool message ${cursor}`, tagsIn(call.arguments)[0], answer.content, responseTags);
      cursor += 1;
    }
    if (cursor > index + 1) previous = 'tool';
    index = cursor;
  }
  return problems;
}

export function checkTranscript(
  messages: readonly TranscriptMessage[],
  protocol: 'deep-research' | 'native',
): string[] {
  return protocol === 'native' ? checkNativeTranscript(messages) : checkDeepResearchTranscript(messages);
}

/**
 * The transcript holds one assistant message per recorded model call: exactly `iterations`, or
 * one fewer when the run was cancelled during a model call. More means a reply was stored twice.
 */
export function checkAssistantCount(
  messages: readonly TranscriptMessage[],
  iterations: number,
  cancelled: boolean,
): string[] {
  const assistants = messages.filter((message) => message.role === 'assistant').length;
  const fine = cancelled ? assistants === iterations || assistants === iterations - 1 : assistants === iterations;
  return fine ? [] : [`the transcript has ${assistants} assistant messages for ${iterations} model calls`];
}

/**
 * Completed model calls are never sent again. `recorded` maps each model call number to the time
 * history recorded its completion (ActivityTaskCompleted); `crashes` are the moments a worker or
 * the server was SIGKILLed.
 *
 * - A request for call N received after history recorded N's completion is a violation.
 * - Two completed requests for the same call are a violation unless a crash falls between the
 *   first one's completion and the second one's arrival: then the first reply was lost before
 *   history could record it, and sending it again is the retry doing its job (`resentAfterCrash`).
 * - History recording a completion the model server never completed is a violation.
 */
export function checkModelCalls(
  requests: readonly ModelRequestLogEntry[],
  recorded: ReadonlyMap<number, number>,
  crashes: readonly number[],
): { violations: string[]; resentAfterCrash: number; resent: Array<{ modelCall: number; crashAt: number }> } {
  const violations: string[] = [];
  const resent: Array<{ modelCall: number; crashAt: number }> = [];
  const byCall = new Map<number, ModelRequestLogEntry[]>();
  for (const request of requests) {
    if (request.modelCall === undefined) continue;
    const list = byCall.get(request.modelCall) ?? [];
    list.push(request);
    byCall.set(request.modelCall, list);
  }
  for (const [modelCall, list] of [...byCall.entries()].sort((a, b) => a[0] - b[0])) {
    const recordedAt = recorded.get(modelCall);
    if (recordedAt !== undefined) {
      for (const request of list) {
        if (request.receivedAt > recordedAt)
          violations.push(
            `model call ${modelCall} was sent again ${request.receivedAt - recordedAt} ms after history recorded its completion`,
          );
      }
    }
    const completed = list.filter((request) => request.completed).sort((a, b) => a.receivedAt - b.receivedAt);
    if (recordedAt !== undefined && completed.length === 0)
      violations.push(
        `history records model call ${modelCall} as completed but the model server completed no request for it`,
      );
    for (let position = 1; position < completed.length; position += 1) {
      const first = completed[position - 1] as ModelRequestLogEntry;
      const again = completed[position] as ModelRequestLogEntry;
      const from = (first.completedAt ?? first.receivedAt) - COMPLETION_POLL_SLACK_MS;
      const crash = crashes.find((at) => at >= from && at <= again.receivedAt);
      if (crash !== undefined) resent.push({ modelCall, crashAt: crash });
      else
        violations.push(
          `model call ${modelCall} completed ${completed.length} times; no crash between the completion at ${new Date(first.completedAt ?? first.receivedAt).toISOString()} and the request at ${new Date(again.receivedAt).toISOString()}`,
        );
    }
  }
  for (const [modelCall] of recorded) {
    if (!byCall.has(modelCall))
      violations.push(`history records model call ${modelCall} as completed but the model server never received it`);
  }
  return { violations, resentAfterCrash: resent.length, resent };
}

/** A tool attempt from its start to its stop, to its worker's kill, or still running at `now`. */
export interface ToolInterval {
  workflowId: string;
  tool: string;
  callId: string;
  pid: number;
  attempt?: number;
  start: number;
  end: number;
  endedBy: 'stop' | 'kill' | 'running';
}

/** A tool call's interval from its start line to `end`. */
function intervalOf(start: ToolLogEntry, end: number, endedBy: ToolInterval['endedBy']): ToolInterval {
  return {
    workflowId: start.workflowId,
    tool: start.tool,
    callId: start.callId,
    pid: start.pid,
    ...(start.attempt !== undefined ? { attempt: start.attempt } : {}),
    start: start.at,
    end,
    endedBy,
  };
}

/** Pairs start and stop lines (per call, worker pid and attempt); a start without a stop ends at the first kill of its pid after it, else is running at `now`. */
export function toolIntervals(
  entries: readonly ToolLogEntry[],
  kills: readonly WorkerKill[],
  now: number,
): ToolInterval[] {
  const intervals: ToolInterval[] = [];
  const open = new Map<string, ToolLogEntry>();
  const unfinished: ToolLogEntry[] = [];
  const sorted = [...entries].sort((a, b) => a.at - b.at);
  for (const entry of sorted) {
    const key = `${entry.workflowId}|${entry.callId}|${entry.pid}|${entry.attempt ?? ''}`;
    if (entry.event === 'start') {
      const dangling = open.get(key);
      if (dangling) unfinished.push(dangling);
      open.set(key, entry);
      continue;
    }
    const start = open.get(key);
    if (!start) continue;
    open.delete(key);
    intervals.push(intervalOf(start, entry.at, 'stop'));
  }
  for (const start of [...unfinished, ...open.values()]) {
    const kill = kills
      .filter((candidate) => candidate.pid === start.pid && candidate.at >= start.at)
      .sort((a, b) => a.at - b.at)[0];
    intervals.push(intervalOf(start, kill ? kill.at : now, kill ? 'kill' : 'running'));
  }
  return intervals.sort((a, b) => a.start - b.start);
}

/** A cancelled run's tools: none may still run (or start) `graceMs` after the cancel request at `cancelledAt`. */
export function checkToolsStoppedAfterCancel(
  entries: readonly ToolLogEntry[],
  kills: readonly WorkerKill[],
  cancelledAt: number,
  graceMs: number,
  now: number,
): string[] {
  return toolIntervals(entries, kills, now)
    .filter((interval) => interval.end > cancelledAt + graceMs)
    .map(
      (interval) =>
        `tool ${interval.tool} (call ${interval.callId}, attempt ${interval.attempt ?? '?'}, pid ${interval.pid}) ` +
        (interval.endedBy === 'running'
          ? `was still running ${((now - cancelledAt) / 1000).toFixed(1)} s after the cancel request`
          : `ran until ${((interval.end - cancelledAt) / 1000).toFixed(1)} s after the cancel request (${interval.endedBy === 'kill' ? 'its worker was killed' : 'it stopped'} then)`),
    );
}

/** After a run ended, none of its tools may still be running (a start with neither a stop nor a kill of its worker). */
export function checkNoToolLeftRunning(
  entries: readonly ToolLogEntry[],
  kills: readonly WorkerKill[],
  now: number,
): string[] {
  return toolIntervals(entries, kills, now)
    .filter((interval) => interval.endedBy === 'running')
    .map(
      (interval) =>
        `tool ${interval.tool} (call ${interval.callId}, attempt ${interval.attempt ?? '?'}, pid ${interval.pid}) is still running after the run ended`,
    );
}

/** A run ends `answer`, or `cancelled` when a cancel request was accepted (it may still answer if the cancel came at its end). */
export function checkTermination(termination: string, cancelAccepted: boolean): string[] {
  if (termination === 'answer') return [];
  if (termination === 'cancelled' && cancelAccepted) return [];
  return [`ended ${termination}${cancelAccepted ? '' : ' though it was not cancelled'}`];
}

/** Nearest-rank percentile (p from 0 to 100) of `values`; undefined when empty. */
export function percentile(values: readonly number[], p: number): number | undefined {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length - 1, Math.max(0, rank - 1))];
}
