import { parseToolCallBody } from '../protocols/deep-research-protocol';

/**
 * One run as an evaluation sees it: the facts read from one line of a rollout file (this
 * project's iter lines or DeepResearch's result lines), without its transcript. Workflow-safe
 * plain data; read in the Node floor (src/storage/evaluation-input.ts).
 */
export interface EvaluationRun {
  /** 1-based rollout (the rollout file's position). */
  rollout: number;
  question: string;
  /** The reference answer; '' when the line has none. */
  reference: string;
  prediction: string;
  /** In this project's vocabulary where known (see {@link terminationOfLine}); else the line's own string. */
  termination: string;
  /** The line's own termination string, when it differs from `termination`. */
  originalTermination?: string;
  /** An error line: termination `error`, or DeepResearch's `{error, prediction: "[Failed]"}` without a termination. */
  isError: boolean;
  /** Assistant messages in the transcript (else the line's `iterations`). */
  modelCalls: number;
  /** Tool calls by tool name, parsed from the transcript. */
  toolCalls: Record<string, number>;
  /** Total tokens: the recorded usage, else a tokenizer count of the messages; absent when neither. */
  tokens?: number;
  /** Whether `tokens` is a tokenizer count (no usage recorded). */
  tokensCounted?: boolean;
  durationMs?: number;
  /** What the run's model calls cost in USD (the line's `usage.costUsd`); absent when its model had no price. */
  costUsd?: number;
  /** The line's `usage.promptTokens`, when it records them. */
  promptTokens?: number;
  /** Of those, read from the server's prompt cache (`usage.cachedPromptTokens`); absent when the server reported none. */
  cachedPromptTokens?: number;
  /** What prompt caching saved the run in USD (`usage.cacheSavedUsd`); negative when cache writes cost more; absent when unpriced or uncached. */
  cacheSavedUsd?: number;
  /** Workflow id of the run, when the line has one. */
  runId?: string;
  /** Where the line came from. */
  file: string;
  line: number;
}

/** DeepResearch's termination strings, mapped to ours (the original is kept beside). */
export function terminationOfLine(
  termination: unknown,
  isErrorLine: boolean,
): { termination: string; originalTermination?: string } {
  if (typeof termination !== 'string' || termination.trim() === '')
    return { termination: isErrorLine ? 'error' : 'unknown' };
  const known = ['answer', 'max_calls', 'timeout', 'token_limit', 'cost_limit', 'cancelled', 'stuck', 'error'];
  if (known.includes(termination)) return { termination };
  const lower = termination.toLowerCase();
  const mapped = lower.includes('llm calls')
    ? 'max_calls'
    : lower.includes('token limit') || lower.includes('token_limit')
      ? 'token_limit'
      : lower.includes('time') || lower.includes('mins')
        ? 'timeout'
        : lower.startsWith('answer')
          ? 'answer'
          : lower.includes('error')
            ? 'error'
            : termination;
  return mapped === termination ? { termination } : { termination: mapped, originalTermination: termination };
}

function countInto(counts: Record<string, number>, name: string): void {
  counts[name] = (counts[name] ?? 0) + 1;
}

/**
 * Tool calls by name in a transcript: every `<tool_call>` body of an assistant message (JSON or
 * JSON5 with a `name`; a body with `<code>` is python unless it names another tool), and every
 * native tool call (`tool_calls[].function.name`, or this project's `toolCalls[].name`). A body
 * that names no tool counts as `(unparsed)`. Never substring tests: python code that says
 * `re.search` is a python call.
 */
export function toolCallsOfMessages(messages: unknown): Record<string, number> {
  const counts: Record<string, number> = {};
  if (!Array.isArray(messages)) return counts;
  for (const message of messages) {
    if (!message || typeof message !== 'object') continue;
    const record = message as { role?: unknown; content?: unknown; tool_calls?: unknown; toolCalls?: unknown };
    if (record.role !== 'assistant') continue;
    const content = typeof record.content === 'string' ? record.content.replace(/<think>[\s\S]*?<\/think>/g, '') : '';
    const pattern = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;
    for (let match = pattern.exec(content); match; match = pattern.exec(content)) {
      const body = match[1] ?? '';
      if (body.trim() === '') continue;
      const parsed = parseToolCallBody(body, 'evaluation');
      countInto(counts, parsed.name && !parsed.problem ? parsed.name : parsed.name || '(unparsed)');
    }
    for (const list of [record.tool_calls, record.toolCalls]) {
      if (!Array.isArray(list)) continue;
      for (const call of list) {
        if (!call || typeof call !== 'object') continue;
        const name = (call as { function?: { name?: unknown } }).function?.name ?? (call as { name?: unknown }).name;
        countInto(counts, typeof name === 'string' && name !== '' ? name : '(unparsed)');
      }
    }
  }
  return counts;
}

/** Assistant messages in a transcript (each one a model call). */
export function modelCallsOfMessages(messages: unknown): number {
  return Array.isArray(messages)
    ? messages.filter((message) => (message as { role?: unknown } | null)?.role === 'assistant').length
    : 0;
}

/**
 * One rollout's runs with each question once: of the lines for the same question (a resumed
 * file can hold several), the last one that is not an error wins; when all are errors, the last.
 * Order: each question where it first appeared. Returns how many lines were dropped.
 */
export function dedupeRollout(runs: EvaluationRun[]): { runs: EvaluationRun[]; duplicates: number } {
  const chosen = new Map<string, EvaluationRun>();
  for (const run of runs) {
    const earlier = chosen.get(run.question);
    if (!earlier || !run.isError || earlier.isError) chosen.set(run.question, run);
  }
  return { runs: [...chosen.values()], duplicates: runs.length - chosen.size };
}
