import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import {
  dedupeRollout,
  modelCallsOfMessages,
  terminationOfLine,
  toolCallsOfMessages,
  type EvaluationRun,
} from '../core/evaluation/evaluation-runs';
import type { EvaluationReport } from '../core/evaluation/evaluation-report';
import { isS3Location } from '../core/s3-url';
import { jsonParseProblemSuffix } from '../domain/json-parse-problem';
import {
  locationOfFile,
  openOutputLocation,
  OutputLocationError,
  parseS3OutputUrl,
  type OpenLocation,
  type OutputLocation,
} from './output-location';

/**
 * Reading an evaluation's inputs (Node-only): a batch output directory (its `iter<k>.jsonl`,
 * in rollout order) or explicit rollout files, local or in S3 (`s3://bucket/prefix`, or
 * `s3://bucket/prefix/iter1.jsonl`, read through an {@link OutputLocation}), each line this project's iter line or
 * DeepResearch's result line (`question`, `answer`, `messages`, `prediction`, `termination`;
 * its error lines `{error, prediction: "[Failed]", messages: []}` have no termination).
 *
 * - A line that is not JSON fails the whole read, naming the file and line.
 * - A line that is not an object, or lacks the `question` or the `answer` key, is skipped and
 *   listed (an empty `answer` is kept: the run has no reference answer).
 * - A question twice in one file counts once: the last line that is not an error wins.
 * - Rollout files may cover different question sets; the report lists the missing pairs.
 */

/** The input cannot be read; the message names the file (and line). */
export class EvaluationInputError extends Error {
  override readonly name = 'EvaluationInputError';
}

const ITER_FILE = /^iter(\d+)\.jsonl$/;

/** How inputs in S3 are opened. */
export interface EvaluationLocationOptions {
  /**
   * Opens `s3://…` locations (the CLI and the worker pass {@link openOutputLocation} with their S3
   * settings). Default: {@link openOutputLocation} with the AWS SDK's own settings.
   */
  openLocation?: OpenLocation;
}

/** The iter files among a directory's names, by rollout number (iter10 after iter2). */
function iterFilesOf(names: string[]): string[] {
  return names
    .flatMap((name) => {
      const match = ITER_FILE.exec(name);
      return match ? [{ name, rollout: Number(match[1]) }] : [];
    })
    .sort((left, right) => left.rollout - right.rollout)
    .map((entry) => entry.name);
}

/** An S3 location's error as an input error naming the location (a server that is down passes through, so activities retry). */
function s3InputError(error: unknown, url: string, doing: string): unknown {
  if (!(error instanceof OutputLocationError)) return error;
  if (error.problem === 'bucket-missing')
    return new EvaluationInputError(
      `${url} cannot be evaluated: its bucket "${parseS3OutputUrl(url).bucket}" does not exist (${doing}).`,
    );
  return new EvaluationInputError(`${url} cannot be evaluated (${doing}): ${error.message}`);
}

/** What an s3:// path names: an object (a rollout file) or a prefix (a batch output). */
async function s3PathKind(url: string, openLocation: OpenLocation): Promise<{ url: string; isFile: boolean }> {
  let parsed: { url: string; prefix: string };
  try {
    parsed = parseS3OutputUrl(url);
  } catch (error) {
    throw new EvaluationInputError((error as Error).message);
  }
  if (!parsed.prefix) return { url: parsed.url, isFile: false };
  try {
    const { location, name } = locationOfFile(parsed.url, openLocation);
    return { url: parsed.url, isFile: (await location.sizeOf(name)) !== undefined };
  } catch (error) {
    throw s3InputError(error, parsed.url, 'looking for it');
  }
}

/**
 * The rollout files of the given paths: one directory (its iter files by number) or files. A
 * path may be `s3://bucket/prefix` (a batch output there) or `s3://bucket/prefix/iter1.jsonl`;
 * files come back as absolute paths or normalised `s3://` URLs.
 * @throws EvaluationInputError naming the path: none given, no such file, no iter files there (for
 * S3 also: no such bucket, refused credentials).
 */
export async function resolveEvaluationFiles(
  paths: string[],
  options: EvaluationLocationOptions = {},
): Promise<{ files: string[]; directory?: string }> {
  if (paths.length === 0)
    throw new EvaluationInputError('Give a batch output directory or iter*.jsonl files to evaluate.');
  const openLocation = options.openLocation ?? openOutputLocation;
  const entries = await Promise.all(
    paths.map(async (path) => {
      if (isS3Location(path)) return s3PathKind(path, openLocation);
      const absolute = resolve(path);
      const info = await stat(absolute).catch(() => {
        throw new EvaluationInputError(`${absolute} does not exist.`);
      });
      return { url: absolute, isFile: !info.isDirectory() };
    }),
  );
  if (entries.every((entry) => entry.isFile)) return { files: entries.map((entry) => entry.url) };
  if (entries.length > 1) {
    const prefix = entries.find((entry) => !entry.isFile && isS3Location(entry.url));
    if (prefix)
      throw new EvaluationInputError(
        `${prefix.url} is no object: give one batch output (a directory or an s3:// prefix), or rollout files, not both.`,
      );
    throw new EvaluationInputError('Give one batch output directory, or rollout files, not both.');
  }
  const directory = (entries[0] as { url: string }).url;
  if (!isS3Location(directory)) {
    const names = iterFilesOf(await readdir(directory));
    if (names.length === 0) throw new EvaluationInputError(`${directory} holds no iter*.jsonl files.`);
    return { files: names.map((name) => join(directory, name)), directory };
  }
  let location: OutputLocation;
  let names: string[];
  try {
    location = openLocation(directory);
    names = iterFilesOf(await location.list(''));
  } catch (error) {
    throw s3InputError(error, directory, 'listing it');
  }
  if (names.length === 0)
    throw new EvaluationInputError(`${directory} holds no iter*.jsonl files (no batch output under that prefix).`);
  return { files: names.map((name) => location.urlOf(name)), directory };
}

/**
 * A rollout file's text: a local path or an `s3://bucket/key` URL.
 * @throws EvaluationInputError naming the file when it cannot be read.
 */
export async function readEvaluationFile(file: string, options: EvaluationLocationOptions = {}): Promise<string> {
  if (!isS3Location(file)) {
    try {
      return await readFile(file, 'utf8');
    } catch (error) {
      throw new EvaluationInputError(`Cannot read ${file} (${(error as Error).message}).`);
    }
  }
  let text: string | undefined;
  try {
    const { location, name } = locationOfFile(file, options.openLocation ?? openOutputLocation);
    text = await location.readText(name);
  } catch (error) {
    throw s3InputError(error, file, 'reading it');
  }
  if (text === undefined) throw new EvaluationInputError(`Cannot read ${file} (no such object).`);
  return text;
}

/** What was read: each rollout's runs, deduplicated, and what was left out. */
export interface EvaluationInputs {
  files: string[];
  rollouts: EvaluationRun[][];
  skipped: EvaluationReport['skipped'];
  duplicates: NonNullable<EvaluationReport['duplicates']>;
}

export interface ReadEvaluationOptions extends EvaluationLocationOptions {
  /** Counts tokens of a text (tiktoken in the CLI and worker), for lines that record no usage. Default: no count. */
  countTokens?: (text: string) => number;
}

function numberOr(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function tokensOf(
  line: Record<string, unknown>,
  messages: unknown,
  countTokens: ((text: string) => number) | undefined,
): { tokens?: number; tokensCounted?: boolean } {
  const usage = line.usage as Record<string, unknown> | undefined;
  const recorded = numberOr(usage?.totalTokens) ?? numberOr(usage?.total_tokens);
  if (recorded !== undefined && recorded > 0) return { tokens: recorded };
  if (!countTokens || !Array.isArray(messages) || messages.length === 0) return {};
  const text = messages
    .map((message) =>
      typeof (message as { content?: unknown })?.content === 'string' ? (message as { content: string }).content : '',
    )
    .join('\n');
  return { tokens: countTokens(text), tokensCounted: true };
}

/** One line as a run, or why it is skipped. */
export function runOfLine(
  value: unknown,
  where: { file: string; line: number; rollout: number },
  options: ReadEvaluationOptions = {},
): EvaluationRun | { skip: string } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { skip: 'not a JSON object' };
  const line = value as Record<string, unknown>;
  if (typeof line.question !== 'string' || line.question.trim() === '') return { skip: 'no "question"' };
  if (!('answer' in line)) return { skip: 'no "answer" key (write "answer": "" when there is no reference)' };
  const prediction = typeof line.prediction === 'string' ? line.prediction : '';
  const hasError = line.error !== undefined && line.error !== null && line.error !== '';
  const isError =
    line.termination === 'error' || (line.termination === undefined && (hasError || prediction === '[Failed]'));
  const { termination, originalTermination } = terminationOfLine(line.termination, isError);
  const messages = line.messages;
  const modelCalls =
    Array.isArray(messages) && messages.length > 0 ? modelCallsOfMessages(messages) : (numberOr(line.iterations) ?? 0);
  const durationMs = numberOr(line.durationMs);
  const usage = line.usage as Record<string, unknown> | undefined;
  const costUsd = numberOr(usage?.costUsd);
  const promptTokens = numberOr(usage?.promptTokens);
  const cachedPromptTokens = numberOr(usage?.cachedPromptTokens);
  const cacheSavedUsd = numberOr(usage?.cacheSavedUsd);
  return {
    rollout: where.rollout,
    question: line.question,
    reference:
      typeof line.answer === 'string'
        ? line.answer
        : line.answer === null || line.answer === undefined
          ? ''
          : JSON.stringify(line.answer),
    prediction,
    termination,
    ...(originalTermination ? { originalTermination } : {}),
    isError,
    modelCalls,
    toolCalls: toolCallsOfMessages(messages),
    ...tokensOf(line, messages, options.countTokens),
    ...(durationMs !== undefined ? { durationMs } : {}),
    ...(costUsd !== undefined && costUsd >= 0 ? { costUsd } : {}),
    ...(promptTokens !== undefined && promptTokens >= 0 ? { promptTokens } : {}),
    ...(cachedPromptTokens !== undefined && cachedPromptTokens >= 0 ? { cachedPromptTokens } : {}),
    ...(cacheSavedUsd !== undefined ? { cacheSavedUsd } : {}),
    ...(typeof line.runId === 'string' ? { runId: line.runId } : {}),
    file: where.file,
    line: where.line,
  };
}

/** Reads the rollout files (file i is rollout i + 1). Throws {@link EvaluationInputError} for a line that is not JSON. */
export async function readEvaluationInputs(
  files: string[],
  options: ReadEvaluationOptions = {},
): Promise<EvaluationInputs> {
  const rollouts: EvaluationRun[][] = [];
  const skipped: EvaluationReport['skipped'] = [];
  const duplicates: NonNullable<EvaluationReport['duplicates']> = [];
  for (const [index, file] of files.entries()) {
    const text = await readEvaluationFile(file, options);
    const runs: EvaluationRun[] = [];
    const lines = text.split('\n');
    for (const [lineIndex, raw] of lines.entries()) {
      if (raw.trim() === '') continue;
      let value: unknown;
      try {
        value = JSON.parse(raw);
      } catch (error) {
        // Never the parser's message: it quotes the line, and the file may be anything a client named.
        throw new EvaluationInputError(
          `${file} line ${lineIndex + 1} is not JSON${jsonParseProblemSuffix(error)}; an evaluation reads JSON lines, one result object a line.`,
        );
      }
      const runOrSkip = runOfLine(value, { file, line: lineIndex + 1, rollout: index + 1 }, options);
      if ('skip' in runOrSkip) skipped.push({ file, line: lineIndex + 1, reason: runOrSkip.skip });
      else runs.push(runOrSkip);
    }
    const deduplicated = dedupeRollout(runs);
    rollouts.push(deduplicated.runs);
    if (deduplicated.duplicates > 0) duplicates.push({ rollout: index + 1, lines: deduplicated.duplicates });
  }
  return { files, rollouts, skipped, duplicates };
}

/** Sentences about the input for people: skipped lines, duplicates, different question sets. */
export function describeInputs(inputs: EvaluationInputs): string[] {
  const notes: string[] = [];
  for (const skip of inputs.skipped) notes.push(`Skipped ${basename(skip.file)} line ${skip.line}: ${skip.reason}.`);
  if (inputs.skipped.length)
    notes.push(`${inputs.skipped.length} line${inputs.skipped.length === 1 ? '' : 's'} skipped.`);
  for (const duplicate of inputs.duplicates)
    notes.push(
      `Rollout ${duplicate.rollout}: ${duplicate.lines} duplicate line${duplicate.lines === 1 ? '' : 's'} of the same question (a resume?) counted once: the last line that is not an error.`,
    );
  const sets = inputs.rollouts.map((runs) => new Set(runs.map((run) => run.question)));
  const union = new Set(sets.flatMap((set) => [...set]));
  sets.forEach((set, index) => {
    const missing = union.size - set.size;
    if (missing > 0)
      notes.push(
        `Rollout ${index + 1} (${basename(inputs.files[index] ?? '')}) lacks ${missing} of the ${union.size} questions; they count as not correct in it.`,
      );
  });
  return notes;
}
