import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  patched,
  setHandler,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import {
  DEFAULT_BATCH_CONCURRENCY,
  DEFAULT_RUNS_PER_CONTINUATION,
  pairOfOrdinal,
  type BatchCarry,
  type BatchChunkItem,
  type BatchSummary,
  type ResearchBatchInput,
} from '../src/core/batch-contract';
import { batchProgressQuery } from '../src/core/batch-messages';
import {
  batchProgress,
  recordFinished,
  recordKept,
  recordStarted,
  type BatchProgress,
  type BatchState,
} from '../src/core/batch-progress';
import {
  batchResult,
  batchRunStart,
  batchSummary,
  chunkInput,
  continuedInput,
  continuesAsNew,
  evaluationAtEnd,
  initialCarry,
  lineInput,
  openingRecord,
  pausesForContinueAsNew,
  stateOnCancel,
} from '../src/core/batch-transitions';
import type { ResearchRunResult } from '../src/core/run-result';
import { TEMPORAL_SCHEDULED_START_TIME } from '../src/core/search-attributes';
import { TaskSlots } from '../src/core/task-slots';
import type { Termination } from '../src/core/termination';
import { WorkflowTypes, type ResearchAgentWorkflow } from '../src/core/workflow-types';
import { batchAssembly, batchBookkeeping, batchLines } from './batch-activity-proxies';
import { evaluateBatch } from './batch-evaluation';
import { BatchPatches } from './patches';

/**
 * One workflow run of a batch: its carry (cursor, counts, output, start), its state and the
 * `progress` query, whether it was cancelled, the first failure to write a line, the runs it
 * started (at most `concurrency` at a time, through `TaskSlots` and `condition`) and whether it
 * sent their cancellations. Its decisions are pure functions (src/core/batch-transitions.ts); its
 * steps are the methods `researchBatch` calls in turn. The steps' bodies keep the order of the
 * commands the recorded batch histories hold (test/fixtures/histories/research-batch-*.json).
 */
export class BatchRun {
  readonly batchId: string;
  readonly concurrency: number;
  private readonly total: number;
  private readonly runsPerContinuation: number;
  private readonly scheduledStart: Date;
  private readonly carry: BatchCarry;
  private state: BatchState;
  private cancelled = false;
  /** The first failure to write a run's line: the batch starts no more runs and fails once the running ones ended. */
  private fatal: unknown;
  /** The first ordinal not yet started (or kept). */
  private cursor: number;
  /** Runs started and not yet cancelled: workflow id, by start order. */
  private readonly children = new Set<string>();
  private cancelsSent = false;
  private readonly slots: TaskSlots;

  constructor(readonly input: ResearchBatchInput) {
    const info = workflowInfo();
    this.batchId = info.workflowId;
    this.total = input.questions * input.rollouts;
    this.concurrency = input.concurrency ?? DEFAULT_BATCH_CONCURRENCY;
    this.runsPerContinuation = input.runsPerContinuation ?? DEFAULT_RUNS_PER_CONTINUATION;
    this.scheduledStart = info.typedSearchAttributes.get(TEMPORAL_SCHEDULED_START_TIME) ?? info.startTime;
    this.carry = input.carry ?? initialCarry(input, Date.now(), this.scheduledStart);
    this.state = input.carry ? 'running' : 'starting';
    this.cursor = this.carry.cursor;
    this.slots = new TaskSlots(this.concurrency, condition);
  }

  /** The `progress` query, and the batch's cancellation noticed (not acted on: the steps do, in a non-cancellable scope). */
  register(): void {
    setHandler(batchProgressQuery, () => this.progress());
    CancellationScope.current().cancelRequested.catch(() => {
      this.cancelled = true;
      this.state = stateOnCancel(this.state);
    });
  }

  progress(): BatchProgress {
    const { input, carry } = this;
    return batchProgress({
      batchId: this.batchId,
      ...(input.name ? { name: input.name } : {}),
      state: this.state,
      output: carry.output,
      questions: input.questions,
      concurrency: this.concurrency,
      counts: carry.counts,
      startedAt: carry.startedAt,
      now: Date.now(),
      continuedAsNew: carry.continuedAsNew,
    });
  }

  /** A new batch writes batch.json (and, resuming, checks the output it resumes). */
  async openOutput(): Promise<void> {
    const { batchId: id, concurrency, carry, scheduledStart } = this;
    await batchBookkeeping.openBatchOutput({
      record: openingRecord(this.input, { id, concurrency, carry, scheduledStart }),
      resume: this.input.resume === true,
    });
    if (!this.cancelled) this.state = 'running';
  }

  /**
   * This workflow run's pairs: kept ones counted, the others started one by one as slots free
   * up, until they are all started, the batch is cancelled or a line could not be written, or
   * Temporal suggests continuing as new.
   */
  async startRuns(): Promise<void> {
    if (this.cancelled || this.cursor >= this.total) return;
    const { questions } = this.input;
    const { items } = await batchBookkeeping.prepareBatchChunk(
      chunkInput(this.input, this.carry, this.cursor, this.runsPerContinuation),
    );
    let startedHere = 0;
    for (const item of items) {
      if (item.kept) {
        recordKept(this.carry.counts, pairOfOrdinal(item.ordinal, questions).rollout, item.kept);
        this.cursor = item.ordinal + 1;
        continue;
      }
      await this.slots.free(() => this.stopping);
      if (this.stopping) break;
      if (pausesForContinueAsNew(startedHere, workflowInfo().continueAsNewSuggested)) break;
      const giveBackSlot = this.slots.take();
      startedHere += 1;
      recordStarted(this.carry.counts, pairOfOrdinal(item.ordinal, questions).rollout);
      void this.runPair(item, giveBackSlot);
      this.cursor = item.ordinal + 1;
    }
  }

  /** Lets the running runs end; on a cancellation, cancels each once. Throws the first failure to write a line. */
  async letRunsEnd(): Promise<void> {
    while (this.slots.running > 0) {
      await this.slots.idle(() => this.cancelled && !this.cancelsSent);
      if (this.cancelled && !this.cancelsSent) {
        this.cancelsSent = true;
        for (const workflowId of this.children) this.cancelRun(workflowId);
      }
    }
    if (this.fatal !== undefined) throw this.fatal;
  }

  /** Pairs are left and the batch was not cancelled: it continues as new (with {@link continuation}). */
  continuesAsNew(): boolean {
    return continuesAsNew({ cancelled: this.cancelled, cursor: this.cursor, total: this.total });
  }

  /** The input of the next workflow run, carrying the cursor and the counts. */
  continuation(): ResearchBatchInput {
    return continuedInput(this.input, this.carry, this.cursor, this.carry.counts);
  }

  /** The summary, the iter files assembled from the lines, and (with `evaluate`, unless cancelled) the evaluation. */
  async finish(): Promise<BatchSummary> {
    this.state = 'finishing';
    const { batchId: id, carry, cancelled } = this;
    const summary = batchSummary(this.input, { id, carry, cancelled, endedAt: Date.now() });
    const written = await batchAssembly.finishBatchOutput({ output: carry.output, summary });
    const evaluate = evaluationAtEnd(this.input, cancelled);
    const evaluation =
      evaluate && patched(BatchPatches.evaluateAtEnd) ? await evaluateBatch(id, carry.output, evaluate) : undefined;
    this.state = 'finished';
    return batchResult(summary, written, evaluation);
  }

  /** No more runs start: the batch was cancelled, or a line could not be written. */
  private get stopping(): boolean {
    return this.cancelled || this.fatal !== undefined;
  }

  /** One run and its line; gives its slot back last, where the hand-kept count used to drop, so histories replay. */
  private async runPair(item: BatchChunkItem, giveBackSlot: () => void): Promise<void> {
    const run = batchRunStart(this.batchId, this.input, item);
    let outcome: { termination: Termination; usage: ResearchRunResult['usage']; durationMs: number } | { failed: true };
    let runId: string | undefined;
    let failed: { error: unknown } | undefined;
    try {
      const child = await startChild<ResearchAgentWorkflow>(WorkflowTypes.researchAgent, run.options);
      runId = child.firstExecutionRunId;
      this.children.add(run.workflowId);
      if (this.cancelsSent) this.cancelRun(run.workflowId);
      const result = await child.result();
      outcome = { termination: result.termination, usage: result.usage, durationMs: result.durationMs };
    } catch (error) {
      failed = { error };
      outcome = { failed: true };
    } finally {
      this.children.delete(run.workflowId);
    }
    try {
      await batchLines.writeBatchLine(
        lineInput({ batchId: this.batchId, output: this.carry.output }, { ...run, runId }, item.answer, failed),
      );
    } catch (error) {
      this.fatal ??= error;
    }
    recordFinished(this.carry.counts, run.rollout, outcome);
    giveBackSlot();
  }

  private cancelRun(workflowId: string): void {
    void getExternalWorkflowHandle(workflowId)
      .cancel()
      .catch(() => undefined); // it may have ended meanwhile
  }
}
