import { ApplicationFailure, Context } from '@temporalio/activity';
import type { BatchItem } from '../src/domain/batch-input';
import { loadBatchInput } from '../src/storage/batch-input-file';
import {
  pairOfOrdinal,
  type BatchChunkItem,
  type FinishBatchOutputInput,
  type OpenBatchOutputInput,
  type OpenBatchOutputOutput,
  type PrepareBatchChunkInput,
  type WriteBatchLineInput,
  type WriteBatchLineOutput,
} from '../src/core/batch-contract';
import { BatchFailureTypes } from '../src/core/batch-messages';
import {
  assembleIterFile,
  BATCH_RECORD_FILE,
  BatchOutputError,
  batchResultLine,
  checkOutputDirectory,
  failedRunLine,
  hasBatchResults,
  readBatchRecord,
  readRunLineTermination,
  resultMessages,
  seedRunLinesFromIterFiles,
  SUMMARY_FILE,
  writeRunLine,
} from '../src/storage/batch-output';
import { checkInsideDataRoots, PathOutsideDataRootsError } from '../src/storage/data-roots';
import { openOutputLocation, type OutputLocation } from '../src/storage/output-location';
import type { ResearchRunResult } from '../src/core/run-result';
import { heartbeat } from './heartbeats';
import { TranscriptMissingError, type TranscriptStore } from '../src/storage/transcript-store';

export interface BatchActivityDependencies {
  store: TranscriptStore;
  /** The worker's model (REACT_AGENT_MODEL), recorded in batch.json when the runs name none. */
  defaultModel: string;
  /** A finished run's result. Default: read through the worker's Temporal client. */
  resultOf?: (workflowId: string, runId?: string) => Promise<ResearchRunResult>;
  /**
   * Opens a batch's output (`record.output`): a local directory, or an S3 prefix for `s3://…`.
   * Default: {@link openOutputLocation} with the AWS SDK's own settings; the worker passes one
   * with its endpoint and region (AWS_ENDPOINT_URL, AWS_REGION).
   */
  openOutput?: (output: string) => OutputLocation;
  /**
   * Folders a local output must lie in, after `..` and symbolic links (`REACT_AGENT_DATA_ROOTS`;
   * src/storage/data-roots.ts), checked by every activity that touches the output. Default: not
   * confined — the worker always passes its roots; only tests and embedders leave them out.
   */
  dataRoots?: readonly string[];
}

/** Stored inputs kept per worker (a batch reads its questions once per continue-as-new run). */
const INPUT_CACHE_SIZE = 4;

/**
 * The batch's side effects (issue 11): the output directory, the questions of each chunk, one
 * run's line, and the iter files at the end. Results never pass through the batch's history:
 * `writeBatchLine` reads the run's result itself and writes its line.
 */
export function createBatchActivities(dependencies: BatchActivityDependencies) {
  const cached = new Map<string, BatchItem[]>();
  const resultOf =
    dependencies.resultOf ??
    ((workflowId: string, runId?: string) =>
      Context.current().client.workflow.getHandle(workflowId, runId).result() as Promise<ResearchRunResult>);

  async function questionsOf(reference: string): Promise<BatchItem[]> {
    const hit = cached.get(reference);
    if (hit) return hit;
    let items: BatchItem[];
    try {
      items = await loadBatchInput(dependencies.store, reference);
    } catch (error) {
      if (error instanceof TranscriptMissingError) {
        throw ApplicationFailure.create({
          type: BatchFailureTypes.inputMissing,
          nonRetryable: true,
          message: `The batch's stored questions ${reference} are not in the transcript store: ${error.message}`,
        });
      }
      throw error;
    }
    cached.set(reference, items);
    if (cached.size > INPUT_CACHE_SIZE) cached.delete(cached.keys().next().value as string);
    return items;
  }

  const openOutput = dependencies.openOutput ?? ((output: string) => openOutputLocation(output));
  const locations = new Map<string, OutputLocation>();
  /** One location (and S3 client) per output, for the few batches a worker serves at once. */
  function locationOf(output: string): OutputLocation {
    let location = locations.get(output);
    if (!location) {
      try {
        location = openOutput(output);
      } catch (error) {
        if (error instanceof BatchOutputError) throw unusable(error.message);
        throw error;
      }
      locations.set(output, location);
      if (locations.size > INPUT_CACHE_SIZE * 4) locations.delete(locations.keys().next().value as string);
    }
    return location;
  }

  const unusable = (message: string) =>
    ApplicationFailure.create({ type: BatchFailureTypes.outputUnusable, nonRetryable: true, message });

  /**
   * The output's location, once it is known to lie inside the data roots. Checked on every call,
   * not only when the batch opens its output: a continued batch's output comes from its input too.
   */
  async function confinedLocationOf(output: string): Promise<OutputLocation> {
    if (dependencies.dataRoots) {
      try {
        await checkInsideDataRoots(output, dependencies.dataRoots, "The batch's output");
      } catch (error) {
        if (error instanceof PathOutsideDataRootsError)
          throw ApplicationFailure.create({
            type: BatchFailureTypes.outputOutsideDataRoots,
            nonRetryable: true,
            message: error.message,
          });
        throw error;
      }
    }
    return locationOf(output);
  }

  return {
    /** Checks the output directory and writes batch.json; refuses another batch's results unless resuming the same input. */
    async openBatchOutput({ record, resume }: OpenBatchOutputInput): Promise<OpenBatchOutputOutput> {
      const output = await confinedLocationOf(record.output);
      try {
        await checkOutputDirectory(output);
      } catch (error) {
        if (error instanceof BatchOutputError) throw unusable(error.message);
        throw error;
      }
      const existing = await readBatchRecord(output).catch((error: unknown) => {
        if (error instanceof BatchOutputError) throw unusable(error.message);
        throw error;
      });
      const earlier = existing && existing.id !== record.id ? existing : undefined;
      if (earlier && resume && earlier.input !== record.input) {
        throw unusable(
          `${record.output} holds results of batch ${earlier.id} over other questions (${earlier.input}); resume it with the same input, or use another directory.`,
        );
      }
      if (!resume && (await hasBatchResults(output)) && existing?.id !== record.id) {
        throw unusable(
          `${record.output} already holds results${earlier ? ` of batch ${earlier.id}` : ''}; add --resume to keep them and rerun only what is missing or ended in error, or use another directory.`,
        );
      }
      heartbeat('checked');
      if (resume)
        await seedRunLinesFromIterFiles(output, record.rollouts, record.questions, () =>
          heartbeat('reading earlier results'),
        );
      const model = record.run.model?.model ?? dependencies.defaultModel;
      const resumed = [
        ...((earlier as { resumed?: string[] } | undefined)?.resumed ?? []),
        ...(earlier && resume ? [earlier.id] : []),
      ];
      await output.writeText(
        BATCH_RECORD_FILE,
        `${JSON.stringify({ ...record, model, ...(existing?.id === record.id ? { startedAt: existing.startedAt } : {}), ...(resumed.length ? { resumed } : {}) }, null, 2)}\n`,
      );
      return { model };
    },

    /** The pairs of ordinals [from, to): each with its question, or kept when resuming and its line did not end `error`. */
    async prepareBatchChunk(input: PrepareBatchChunkInput): Promise<{ items: BatchChunkItem[] }> {
      const location = await confinedLocationOf(input.output);
      const questions = await questionsOf(input.input);
      if (questions.length !== input.questions) {
        throw ApplicationFailure.create({
          type: BatchFailureTypes.invalidInput,
          nonRetryable: true,
          message: `The stored input ${input.input} has ${questions.length} questions, the batch expects ${input.questions}.`,
        });
      }
      const items: BatchChunkItem[] = [];
      for (let ordinal = input.from; ordinal < input.to; ordinal += 1) {
        const { index, rollout } = pairOfOrdinal(ordinal, input.questions);
        if ((ordinal - input.from) % 50 === 0) heartbeat({ ordinal });
        if (input.resume) {
          const earlier = await readRunLineTermination(location, rollout, index);
          if (earlier !== undefined && earlier !== 'error') {
            items.push({ ordinal, kept: earlier });
            continue;
          }
        }
        const item = questions[index] as BatchItem;
        items.push({ ordinal, question: item.question, ...(item.answer !== undefined ? { answer: item.answer } : {}) });
      }
      return { items };
    },

    /** Writes one run's line (replacing any earlier line of the pair): its result with its messages, or its failure. */
    async writeBatchLine(input: WriteBatchLineInput): Promise<WriteBatchLineOutput> {
      const location = await confinedLocationOf(input.output);
      const where = { runId: input.workflowId, batchId: input.batchId, index: input.index, rollout: input.rollout };
      let line: Record<string, unknown>;
      if (input.failure) line = failedRunLine(input.failure, where);
      else {
        heartbeat('reading the result');
        const result = await resultOf(input.workflowId, input.runId);
        heartbeat('reading the transcript');
        line = batchResultLine(result, await resultMessages(dependencies.store, result.transcript), where);
        heartbeat('writing');
      }
      await writeRunLine(location, input.rollout, input.index, `${JSON.stringify(line)}\n`);
      return { termination: line.termination as WriteBatchLineOutput['termination'] };
    },

    /** Assembles iter1…iterK from the run lines, writes summary.json and closes batch.json. */
    async finishBatchOutput({ output: outputUrl, summary }: FinishBatchOutputInput): Promise<{ lines: number[] }> {
      const output = await confinedLocationOf(outputUrl);
      const lines: number[] = [];
      for (let rollout = 1; rollout <= summary.rollouts; rollout += 1) {
        lines.push(await assembleIterFile(output, rollout, summary.questions, (done) => heartbeat({ rollout, done })));
        heartbeat({ rollout, done: summary.questions });
      }
      const total = lines.reduce((sum, count) => sum + count, 0);
      await output.writeText(SUMMARY_FILE, `${JSON.stringify({ ...summary, lines: total }, null, 2)}\n`);
      const record = await readBatchRecord(output);
      if (record) {
        await output.writeText(
          BATCH_RECORD_FILE,
          `${JSON.stringify({ ...record, status: summary.cancelled ? 'cancelled' : 'completed', endedAt: summary.endedAt, counts: summary.perRollout }, null, 2)}\n`,
        );
      }
      return { lines };
    },
  };
}

export type BatchActivities = ReturnType<typeof createBatchActivities>;
