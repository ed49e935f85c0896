import { randomUUID } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, constants, mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { loadConversation } from './conversation';
import type { TranscriptStore } from './transcript-store';
import type { BatchRecord } from '../core/batch-contract';
import type { ChatMessage } from '../core/messages';
import type { ResearchRunResult } from '../core/run-result';
import { TERMINATIONS, type Termination } from '../core/termination';

/**
 * A batch's output directory (Node-only; written by workers, checked by the CLI):
 *
 * ```
 * DIR/batch.json               id, input reference, options, model, started/ended, counts
 * DIR/iter1.jsonl … iterK.jsonl one line per (question, rollout), in question order
 * DIR/summary.json             at the end: counts by termination per rollout, tokens, durations
 * DIR/runs/iter<k>/q<index>.json   each run's line, written once by the activity that ends it
 * ```
 *
 * Each run's line is its own file, written to a temporary name and renamed into place, so a
 * retried activity (a killed worker, a restarted server) replaces the line rather than adding
 * one, and a crash never leaves half a line. The iter files are assembled from those files at
 * the end, so every (question, rollout) is in its iter file exactly once.
 */

export const BATCH_RECORD_FILE = 'batch.json';
export const SUMMARY_FILE = 'summary.json';
export const RUN_LINES_DIRECTORY = 'runs';

export function iterFileName(rollout: number): string {
  return `iter${rollout}.jsonl`;
}

export function runLinePath(output: string, rollout: number, index: number): string {
  return join(output, RUN_LINES_DIRECTORY, `iter${rollout}`, `q${index}.json`);
}

/** The output directory cannot be used; the message says why and which path. */
export class BatchOutputError extends Error {
  override readonly name = 'BatchOutputError';
}

/**
 * `mkdir -p`, one level at a time. (Node 20's `mkdir(path, { recursive: true })` spins forever
 * on some paths it cannot create, e.g. under /proc; this fails with the parent's error instead.)
 */
export async function makeDirectories(path: string): Promise<void> {
  try {
    if ((await stat(path)).isDirectory()) return;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  const parent = dirname(path);
  if (parent !== path) await makeDirectories(parent);
  try {
    await mkdir(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    if (!(await stat(path)).isDirectory()) throw error;
  }
}

/** Writes a file so a reader sees the old content or the new, never part of it. */
export async function writeFileAtomically(path: string, text: string): Promise<void> {
  await makeDirectories(dirname(path));
  const temporary = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(text, 'utf8');
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
}

/** Creates the directory if needed and checks it is a directory this process can list and write. */
export async function checkOutputDirectory(output: string): Promise<void> {
  try {
    await makeDirectories(output);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new BatchOutputError(`The output path ${output} is not a directory.`);
    throw new BatchOutputError(`Cannot create the output directory ${output} (${describeFsError(error)}).`);
  }
  const info = await stat(output);
  if (!info.isDirectory()) throw new BatchOutputError(`The output path ${output} is not a directory.`);
  try {
    await access(output, constants.R_OK | constants.W_OK | constants.X_OK);
    await readdir(output);
    const probe = join(output, `.write-check-${randomUUID()}`);
    await writeFileAtomically(probe, 'ok');
    await rm(probe, { force: true });
  } catch (error) {
    throw new BatchOutputError(`The output directory ${output} is not readable and writable (${describeFsError(error)}).`);
  }
}

export async function readBatchRecord(output: string): Promise<BatchRecord | undefined> {
  try {
    return JSON.parse(await readFile(join(output, BATCH_RECORD_FILE), 'utf8')) as BatchRecord;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new BatchOutputError(`Cannot read ${join(output, BATCH_RECORD_FILE)} (${describeFsError(error)}).`);
  }
}

/** Whether the directory holds results: run lines or non-empty iter files. */
export async function hasBatchResults(output: string): Promise<boolean> {
  let names: string[];
  try {
    names = await readdir(output);
  } catch {
    return false;
  }
  for (const name of names) {
    if (/^iter\d+\.jsonl$/.test(name) && (await stat(join(output, name))).size > 0) return true;
  }
  if (!names.includes(RUN_LINES_DIRECTORY)) return false;
  for (const rolloutDirectory of await readdir(join(output, RUN_LINES_DIRECTORY)).catch(() => [] as string[])) {
    const lines = await readdir(join(output, RUN_LINES_DIRECTORY, rolloutDirectory)).catch(() => [] as string[]);
    if (lines.some((name) => /^q\d+\.json$/.test(name))) return true;
  }
  return false;
}

/** The termination of the line a pair already has, or undefined when it has none. */
export async function readRunLineTermination(output: string, rollout: number, index: number): Promise<Termination | undefined> {
  let text: string;
  try {
    text = await readFile(runLinePath(output, rollout, index), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  try {
    const termination = (JSON.parse(text) as { termination?: unknown }).termination;
    return (TERMINATIONS as readonly unknown[]).includes(termination) ? (termination as Termination) : 'error';
  } catch {
    return 'error';
  }
}

/**
 * Makes run-line files for lines of existing iter files that have none (a directory whose run
 * lines were removed, or iter files from elsewhere), so a resume sees every earlier result.
 * Lines without a valid `index` are ignored. Returns how many run lines it wrote.
 */
export async function seedRunLinesFromIterFiles(output: string, rollouts: number, questions: number, onProgress?: () => void): Promise<number> {
  let written = 0;
  for (let rollout = 1; rollout <= rollouts; rollout += 1) {
    const path = join(output, iterFileName(rollout));
    try {
      await stat(path);
    } catch {
      continue;
    }
    const lines = createInterface({ input: createReadStream(path, 'utf8'), crlfDelay: Infinity });
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
      const target = runLinePath(output, rollout, index);
      try {
        await stat(target);
      } catch {
        await writeFileAtomically(target, `${line}\n`);
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
export async function assembleIterFile(output: string, rollout: number, questions: number, onProgress?: (done: number) => void): Promise<number> {
  const path = join(output, iterFileName(rollout));
  const temporary = `${path}.${randomUUID()}.tmp`;
  const handle = await open(temporary, 'w');
  let lines = 0;
  try {
    for (let index = 0; index < questions; index += 1) {
      let text: string;
      try {
        text = await readFile(runLinePath(output, rollout, index), 'utf8');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      await handle.write(text.endsWith('\n') ? text : `${text}\n`);
      lines += 1;
      if (onProgress && index % 500 === 499) onProgress(index + 1);
    }
    await handle.datasync();
  } finally {
    await handle.close();
  }
  await rename(temporary, path);
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
export function failedRunLine(failure: { message: string; question: string; answer?: string }, where: { runId: string; batchId: string; index: number; rollout: number }): Record<string, unknown> {
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
 * streamed it apart, as the `<think>` part (as `react-agent result` does, src/cli/materialise-result.ts).
 */
export async function resultMessages(store: TranscriptStore, transcript: string): Promise<Array<{ role: string; content: string }>> {
  const messages: ChatMessage[] = transcript ? await loadConversation(store, transcript) : [];
  return messages.map((message) => ({
    role: message.role,
    content: !message.reasoning || message.content.includes('<think>') ? message.content : `<think>${message.reasoning}</think>\n${message.content}`,
  }));
}

function describeFsError(error: unknown): string {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'ENOTDIR') return 'a part of the path is not a directory';
  if (code === 'EROFS') return 'read-only file system';
  if (code === 'ENOSPC') return 'no space left';
  return (error as Error).message;
}
