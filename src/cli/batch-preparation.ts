import { basename } from 'node:path';
import {
  DEFAULT_BATCH_CONCURRENCY,
  MAX_BATCH_CONCURRENCY,
  MAX_BATCH_ROLLOUTS,
  type BatchEvaluation,
  type BatchRunTemplate,
  type ResearchBatchInput,
} from '../core/batch-contract';
import { describeBatchInputProblems } from '../domain/batch-input';
import { validateRunInput } from '../core/run-input';
import { toolNamesFromList } from '../core/tool-spec';
import {
  BatchInputFileError,
  readBatchInputFile,
  storeBatchInput,
  type BatchInputFile,
} from '../storage/batch-input-file';
import { BatchOutputError, checkOutputDirectory, hasBatchResults, readBatchRecord } from '../storage/batch-output';
import { isS3Location } from '../core/s3-url';
import { absoluteLocation, type OutputLocation } from '../storage/output-location';
import { openCliLocation } from './cli-locations';
import type { TranscriptStore } from '../storage/transcript-store';
import { budgetsFrom, everyRunNumber, everyRunOptionSpecs } from './run-options';
import { numberOption, type OptionValues } from './command-line';
import { evaluateOptionFrom, evaluateOptionSpecs } from './evaluate-option';
import { subRunOptionsFrom } from './sub-run-option';
import { UsageError } from './usage-error';

/**
 * The one preparation of a batch's input, shared by `batch` and `schedule create|update`: the
 * options every batch takes, the run options every run of it gets, the batch's own numbers, the
 * checks of the questions file and the output that come before anything starts, and the
 * `researchBatch` input they make.
 */

type Values = OptionValues;

/** The options of a batch that `batch` and `schedule create|update` share (each adds its own). */
export const batchOptionSpecs = {
  output: { type: 'string' },
  rollouts: { type: 'string' },
  concurrency: { type: 'string' },
  name: { type: 'string' },
  ...evaluateOptionSpecs,
  ...everyRunOptionSpecs,
} as const;

/** What the command line says of a batch besides its files. */
export interface BatchSettings {
  /** Runs per question (`--rollouts`, default 1). */
  rollouts: number;
  /** Runs at once (`--concurrency`, default {@link DEFAULT_BATCH_CONCURRENCY}). */
  concurrency: number;
  /** What every run gets (the run options). */
  run: BatchRunTemplate;
  /** `--evaluate [--judge]`; absent without --evaluate. */
  evaluate?: BatchEvaluation;
  /** `--name`; absent when not given or empty. */
  name?: string;
}

/** Reads {@link BatchSettings}, checking (in this order) the numbers, the run options and --evaluate. */
export function batchSettingsFrom(
  values: Values & { evaluate?: boolean; judge?: string; name?: string },
  help: string,
): BatchSettings {
  const { rollouts, concurrency } = batchNumbersFrom(values, help);
  const run = batchRunTemplateFrom(values, help);
  const evaluate = evaluateOptionFrom(values, help);
  return {
    rollouts: rollouts as number,
    concurrency: concurrency as number,
    run,
    ...(evaluate ? { evaluate } : {}),
    ...(values.name ? { name: values.name } : {}),
  };
}

/** The options every run of a batch gets, checked as the workflow will check them. */
export function batchRunTemplateFrom(values: Values, help: string): BatchRunTemplate {
  const limits = budgetsFrom(values, Object.keys(everyRunOptionSpecs), help, { checkRanges: true });
  const model = Object.fromEntries(
    Object.entries({
      model: typeof values.model === 'string' && values.model.trim() ? values.model.trim() : undefined,
      temperature: everyRunNumber(values, 'temperature', help),
      topP: everyRunNumber(values, 'top-p', help),
      maxOutputTokens: everyRunNumber(values, 'max-output-tokens', help),
      modelShare: everyRunNumber(values, 'model-share', help),
    }).filter(([, value]) => value !== undefined),
  );
  const protocol = values.protocol as BatchRunTemplate['protocol'] | undefined;
  const subruns = subRunOptionsFrom(values, help);
  const template: BatchRunTemplate = {
    ...(Object.keys(limits).length ? { limits } : {}),
    ...(Object.keys(model).length ? { model } : {}),
    ...(typeof values.tools === 'string' ? { tools: toolNamesFromList(values.tools) } : {}),
    ...(protocol ? { protocol } : {}),
    ...(subruns ? { subruns } : {}),
  };
  const { problems } = validateRunInput({ ...template, question: 'q' });
  if (problems.length) throw new UsageError(`Invalid run options: ${problems.join('; ')}.`, help);
  return template;
}

/** `--rollouts` (default 1) and `--concurrency` (default 8). */
export function batchNumbersFrom(
  values: Values,
  help: string,
  defaults = true,
): { rollouts?: number; concurrency?: number } {
  const rollouts =
    numberOption(values, 'rollouts', help, { minimum: 1, maximum: MAX_BATCH_ROLLOUTS, integer: true }) ??
    (defaults ? 1 : undefined);
  const concurrency =
    numberOption(values, 'concurrency', help, { minimum: 1, maximum: MAX_BATCH_CONCURRENCY, integer: true }) ??
    (defaults ? DEFAULT_BATCH_CONCURRENCY : undefined);
  return { ...(rollouts !== undefined ? { rollouts } : {}), ...(concurrency !== undefined ? { concurrency } : {}) };
}

/** The input was refused: the lines to print (every problem, with its line), exit 2. */
export class BatchInputRejected extends Error {
  constructor(readonly lines: string[]) {
    super(lines.join('\n'));
  }
}

/** A questions file, read and checked whole. */
export interface CheckedQuestions {
  /** The questions. */
  file: BatchInputFile;
  /** The file's name without its folder, as the batch records it. */
  source: string;
  /** Notes on duplicate questions, for stderr. */
  notes: string[];
}

/** Reads and checks the input file; refuses it with every problem. Returns it with notes on duplicates. */
export async function checkedInputFile(path: string): Promise<CheckedQuestions> {
  let file: BatchInputFile;
  try {
    file = await readBatchInputFile(path);
  } catch (error) {
    if (error instanceof BatchInputFileError) throw new BatchInputRejected([error.message, 'Nothing was started.']);
    throw error;
  }
  if (file.problems.length) {
    const count = file.problems.length;
    throw new BatchInputRejected([
      ...describeBatchInputProblems(path, file.problems),
      `${path}: ${count} problem${count === 1 ? '' : 's'}; nothing was started.`,
    ]);
  }
  const notes = file.duplicates.map(
    (duplicate) =>
      `${path}: the question "${duplicate.question}" appears ${duplicate.indices.length} times (lines ${duplicate.lines.join(', ')}); each is kept as its own item (q${duplicate.indices.join(', q')}).`,
  );
  return { file, source: basename(path), notes };
}

/** The checked questions stored by content hash: the `input`, `questions` and `source` of a `researchBatch` input. */
export async function storedQuestions(
  store: TranscriptStore,
  checked: CheckedQuestions,
): Promise<Pick<ResearchBatchInput, 'input' | 'questions' | 'source'>> {
  return { input: await storeInput(store, checked.file), questions: checked.file.items.length, source: checked.source };
}

/** A questions file and an output, checked before anything starts. */
export interface CheckedBatchFiles extends CheckedQuestions {
  /** The output as the batch records it (an absolute path or an s3:// URL). */
  output: string;
}

/** Checks the questions file, then the output; refuses either with {@link BatchInputRejected}. */
export async function checkedBatchFiles(
  path: string,
  output: string,
  options: { resume: boolean },
): Promise<CheckedBatchFiles> {
  const questions = await checkedInputFile(path);
  return { ...questions, output: await checkedOutputDirectory(output, options) };
}

/** Prints refused input (every problem) and returns exit code 2; rethrows any other error. */
export function reportRejected(error: unknown): number {
  if (!(error instanceof BatchInputRejected)) throw error;
  for (const line of error.lines) console.error(line);
  return 2;
}

/**
 * The `researchBatch` input of checked files (the questions stored as `storedInput`) and settings;
 * `resume` for `batch --resume`, `schedule` for the batches a schedule starts.
 */
export function researchBatchInputOf(
  files: CheckedBatchFiles,
  storedInput: string,
  settings: BatchSettings,
  started: { resume?: boolean; schedule?: { id: string } } = {},
): ResearchBatchInput {
  return {
    input: storedInput,
    questions: files.file.items.length,
    rollouts: settings.rollouts,
    concurrency: settings.concurrency,
    output: files.output,
    run: settings.run,
    ...(settings.name ? { name: settings.name } : {}),
    source: files.source,
    ...(started.resume ? { resume: true } : {}),
    ...(started.schedule ? { schedule: started.schedule } : {}),
    ...(settings.evaluate ? { evaluate: settings.evaluate } : {}),
  };
}

export async function storeInput(store: TranscriptStore, file: BatchInputFile): Promise<string> {
  return storeBatchInput(store, file.items);
}

/**
 * Checks `--output` before anything starts: a directory (made absolute, created if needed,
 * writable) or `s3://bucket/prefix` (the bucket exists and takes these credentials: AWS_* and
 * AWS_ENDPOINT_URL as the workers read them); refuses results already there without --resume.
 * Returns the output as the batch records it.
 */
export async function checkedOutputDirectory(
  directory: string,
  options: { resume: boolean; input?: string },
): Promise<string> {
  let location: OutputLocation;
  try {
    location = openCliLocation(absoluteLocation(directory));
    await checkOutputDirectory(location);
  } catch (error) {
    if (error instanceof BatchOutputError) throw new BatchInputRejected([`${error.message} Nothing was started.`]);
    if (isS3Location(directory) && !(error instanceof Error && error.name === 'ConfigurationError')) {
      throw new BatchInputRejected([
        `Cannot reach the output ${directory} (${(error as Error).message}); check AWS_ENDPOINT_URL and that the S3 server is up. Nothing was started.`,
      ]);
    }
    throw error;
  }
  const output = location.url;
  const record = await readBatchRecord(location).catch(() => undefined);
  if (!options.resume && (await hasBatchResults(location))) {
    throw new BatchInputRejected([
      `${output} already holds results${record ? ` of batch ${record.id}` : ''}. Add --resume to keep them and rerun only what is missing or ended in error, or choose another --output. Nothing was started.`,
    ]);
  }
  if (options.resume && record && options.input && record.input !== options.input) {
    throw new BatchInputRejected([
      `${output} holds results of batch ${record.id} over other questions (${record.input}); --resume needs the same input. Nothing was started.`,
    ]);
  }
  return output;
}

/** A readable, unique batch id: `batch-<name>-20261130-184501-k3f9`. */
export function newBatchId(name?: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const slug = name
    ?.toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return `batch-${slug ? `${slug}-` : ''}${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}

/** The batch's Web UI summary: "20 questions × 3 rollouts → DIR". */
export function batchSummaryText(questions: number, rollouts: number, output: string): string {
  return `${questions} question${questions === 1 ? '' : 's'} × ${rollouts} rollout${rollouts === 1 ? '' : 's'} → ${output}`;
}
