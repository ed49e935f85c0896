import { join } from 'node:path';
import { loadConversation } from './conversation';
import { OutputLocationError, outputLocationOf, type OutputLocation } from './output-location';
import type { TranscriptStore } from './transcript-store';
import type { BatchRecord } from '../core/batch-contract';
import type { ChatMessage } from '../core/messages';
import type { ResearchRunResult } from '../core/run-result';
import { TERMINATIONS, type Termination } from '../core/termination';
import { jsonParseProblemSuffix } from '../domain/json-parse-problem';

export { makeDirectories, writeFileAtomically } from './output-location';

/**
 * A batch's output (Node-only; written by workers, checked by the CLI), in a local directory or
 * under an S3 prefix (`--output s3://bucket/prefix`, through {@link OutputLocation}):
 *
 * ```
 * DIR/batch.json               id, input reference, options, model, started/ended, counts
 * DIR/iter1.jsonl … iterK.jsonl one line per (question, rollout), in question order
 * DIR/summary.json             at the end: counts by termination per rollout, tokens, durations
 * DIR/runs/iter<k>/q<index>.json   each run's line, written once by the activity that ends it
 * ```
 *
 * Each run's line is its own file, written whole at once (a temporary name renamed into place;
 * one put on S3), so a retried activity (a killed worker, a restarted server) replaces the line
 * rather than adding one, and a crash never leaves half a line. The iter files are assembled
 * from those files at the end, so every (question, rollout) is in its iter file exactly once.
 *
 * Every function takes the output as an {@link OutputLocation}, or as a local directory path.
 */

export const BATCH_RECORD_FILE = 'batch.json';
export const SUMMARY_FILE = 'summary.json';
export const RUN_LINES_DIRECTORY = 'runs';

export function iterFileName(rollout: number): string {
  return `iter${rollout}.jsonl`;
}

/** A run line's path inside the output: `runs/iter<k>/q<index>.json`. */
export function runLineName(rollout: number, index: number): string {
  return `${RUN_LINES_DIRECTORY}/iter${rollout}/q${index}.json`;
}

/** A run line's path under a local output directory. */
export function runLinePath(output: string, rollout: number, index: number): string {
  return join(output, RUN_LINES_DIRECTORY, `iter${rollout}`, `q${index}.json`);
}

/** The output cannot be used; the message says why and where. (The same class as {@link OutputLocationError}.) */
export const BatchOutputError = OutputLocationError;
export type BatchOutputError = OutputLocationError;

/** Creates the location if needed and checks it can be listed and written (for S3: the bucket exists and takes these credentials). */
export async function checkOutputDirectory(output: string | OutputLocation): Promise<void> {
  await outputLocationOf(output).check();
}

export async function readBatchRecord(output: string | OutputLocation): Promise<BatchRecord | undefined> {
  const location = outputLocationOf(output);
  let text: string | undefined;
  try {
    text = await location.readText(BATCH_RECORD_FILE);
  } catch (error) {
    // A file-system refusal (permissions, a directory in the way) cannot heal; a store that is down can, so it passes through.
    if (error instanceof OutputLocationError || typeof (error as NodeJS.ErrnoException).code !== 'string') throw error;
    throw new OutputLocationError(`Cannot read ${BATCH_RECORD_FILE} in ${location.url} (${(error as Error).message}).`);
  }
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as BatchRecord;
  } catch (error) {
    // Never the parser's message: it quotes the file.
    throw new OutputLocationError(
      `Cannot read ${BATCH_RECORD_FILE} in ${location.url}: it is not JSON${jsonParseProblemSuffix(error)}.`,
    );
  }
}

/** Whether the location holds results: run lines or non-empty iter files. */
export async function hasBatchResults(output: string | OutputLocation): Promise<boolean> {
  const location = outputLocationOf(output);
  let names: string[];
  try {
    names = await location.list('');
  } catch {
    return false;
  }
  for (const name of names) {
    if (/^iter\d+\.jsonl$/.test(name) && ((await location.sizeOf(name)) ?? 0) > 0) return true;
  }
  if (!names.includes(RUN_LINES_DIRECTORY)) return false;
  for (const rolloutDirectory of await location.list(RUN_LINES_DIRECTORY).catch(() => [] as string[])) {
    const lines = await location.list(`${RUN_LINES_DIRECTORY}/${rolloutDirectory}`).catch(() => [] as string[]);
    if (lines.some((name) => /^q\d+\.json$/.test(name))) return true;
  }
  return false;
}

/** Writes one run's line (replacing an earlier one of the pair). */
export async function writeRunLine(
  output: string | OutputLocation,
  rollout: number,
  index: number,
  line: string,
): Promise<void> {
  await outputLocationOf(output).writeText(runLineName(rollout, index), line);
}

/** The termination of the line a pair already has, or undefined when it has none. */
export async function readRunLineTermination(
  output: string | OutputLocation,
  rollout: number,
  index: number,
): Promise<Termination | undefined> {
  const text = await outputLocationOf(output).readText(runLineName(rollout, index));
  if (text === undefined) return undefined;
  try {
    const termination = (JSON.parse(text) as { termination?: unknown }).termination;
    return (TERMINATIONS as readonly unknown[]).includes(termination) ? (termination as Termination) : 'error';
  } catch {
    return 'error';
  }
}

/**
 * Makes run-line files for lines of existing iter files that have none (a location whose run
 * lines were removed, or iter files from elsewhere), so a resume sees every earlier result.
 * Lines without a valid `index` are ignored. Returns how many run lines it wrote.
 */
export async function seedRunLinesFromIterFiles(
  output: string | OutputLocation,
  rollouts: number,
  questions: number,
  onProgress?: () => void,
): Promise<number> {
  const location = outputLocationOf(output);
  let written = 0;
  for (let rollout = 1; rollout <= rollouts; rollout += 1) {
    const lines = await location.readLines(iterFileName(rollout));
    if (!lines) continue;
    for await (const line of lines) {
      onProgress?.();
      if (line.trim() === '') continue;
      let index: unknown;
      try {
        index = (JSON.parse(line) as { index?: unknown }).index;
      } catch {
        continue;
      }
      if (typeof index !== 'number' || !Number.isInteger(index) || index < 0 || index >= questions) continue;
      const target = runLineName(rollout, index);
      if ((await location.sizeOf(target)) === undefined) {
        await location.writeText(target, `${line}\n`);
        written += 1;
      }
    }
  }
  return written;
}

/**
 * Rebuilds `iter<k>.jsonl` from the run lines, in question order, replacing the old file at once.
 * Returns how many lines it holds.
 */
export async function assembleIterFile(
  output: string | OutputLocation,
  rollout: number,
  questions: number,
  onProgress?: (done: number) => void,
): Promise<number> {
  const location = outputLocationOf(output);
  const writer = await location.openWriter(iterFileName(rollout));
  let lines = 0;
  try {
    for (let index = 0; index < questions; index += 1) {
      const text = await location.readText(runLineName(rollout, index));
      if (text === undefined) continue;
      await writer.write(text.endsWith('\n') ? text : `${text}\n`);
      lines += 1;
      if (onProgress && index % 500 === 499) onProgress(index + 1);
    }
  } catch (error) {
    await writer.abort();
    throw error;
  }
  await writer.close();
  return lines;
}

/**
 * A run's line in DeepResearch's result shape — `question`, `answer`, `messages`, `prediction`,
 * `termination` first — then ours.
 */
export function batchResultLine(
  result: ResearchRunResult,
  messages: Array<{ role: string; content: string }>,
  where: { runId: string; batchId: string; index: number; rollout: number },
): Record<string, unknown> {
  return {
    question: result.question,
    answer: result.answer ?? '',
    messages,
    prediction: result.prediction,
    termination: result.termination,
    runId: where.runId,
    batchId: where.batchId,
    index: where.index,
    rollout: where.rollout,
    usage: result.usage,
    iterations: result.iterations,
    toolCalls: result.toolCalls,
    contextTokens: result.contextTokens,
    durationMs: result.durationMs,
    ...(result.error !== undefined ? { error: result.error } : {}),
    ...(result.parsedAnswer !== undefined ? { parsedAnswer: result.parsedAnswer } : {}),
  };
}

/** The line of a run that failed instead of returning a result: termination `error`, the failure as `error`. */
export function failedRunLine(
  failure: { message: string; question: string; answer?: string },
  where: { runId: string; batchId: string; index: number; rollout: number },
): Record<string, unknown> {
  return {
    question: failure.question,
    answer: failure.answer ?? '',
    messages: [],
    prediction: '',
    termination: 'error',
    runId: where.runId,
    batchId: where.batchId,
    index: where.index,
    rollout: where.rollout,
    usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
    iterations: 0,
    toolCalls: 0,
    durationMs: 0,
    error: failure.message,
  };
}

/**
 * The run's messages as DeepResearch writes them: an assistant turn's reasoning, when the server
 * streamed it apart, as the `<think>` part (as `react-agent result` does, src/cli/materialise-result.ts);
 * native tool calls as `tool_calls` and the call a tool message answers as `tool_call_id`.
 */
export async function resultMessages(store: TranscriptStore, transcript: string): Promise<ResultMessage[]> {
  const messages: ChatMessage[] = transcript ? await loadConversation(store, transcript) : [];
  return messages.map((message) => ({
    role: message.role,
    content:
      !message.reasoning || message.content.includes('<think>')
        ? message.content
        : `<think>${message.reasoning}</think>\n${message.content}`,
    // Native tool calls in OpenAI's shape, so an evaluation can count them (issue 12).
    ...(message.toolCalls?.length
      ? {
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: call.name, arguments: call.arguments },
          })),
        }
      : {}),
    ...(message.toolCallId ? { tool_call_id: message.toolCallId } : {}),
  }));
}

/** A message of a result line: DeepResearch's role and content, plus native tool calls in OpenAI's shape when there are any. */
export interface ResultMessage {
  role: string;
  content: string;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
  tool_call_id?: string;
}
