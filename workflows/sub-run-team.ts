import {
  CancellationScope,
  condition,
  getExternalWorkflowHandle,
  isCancellation,
  ParentClosePolicy,
  type SignalDefinition,
  startChild,
  upsertSearchAttributes,
} from '@temporalio/workflow';
import { finishFromParentSignal, limitsFromParentSignal } from '../src/core/message-definitions';
import type { RunState } from '../src/core/run-state';
import { sharedLimits, subRunLimits } from '../src/core/sub-runs/sub-run-budget';
import type { TreePosition } from '../src/core/sub-runs/sub-run-options';
import type { ResearchRunInput } from '../src/core/run-input';
import { REACT_TREE_ID } from '../src/core/search-attributes';
import type { SubRunOutcome } from '../src/core/sub-runs/sub-run-reports';
import { TaskSlots } from '../src/core/task-slots';
import { preview } from '../src/core/text';
import { WorkflowTypes, type ResearchAgentWorkflow } from '../src/core/workflow-types';
import { rootMessage } from './failures';

/** One sub-run to start: its deterministic id, its task's question (for the record) and its whole input. */
export interface SubRunStart {
  workflowId: string;
  question: string;
  input: ResearchRunInput;
}

/**
 * A run's sub-runs (issue 30): child `researchAgent` workflows started at most `maxParallel` at
 * once, in a scope of their own under the workflow's root. So a stop of the parent's loop
 * (`finishNow`, its deadline) does not cancel them: they are told to finish
 * ({@link SubRunTeam.finishAll}) and report what they have; cancelling the parent's workflow
 * cancels them, and the parent waits until each has ended (answering its own open tool calls)
 * before it ends. A sub-run that fails is an outcome, never the parent's failure.
 */
export class SubRunTeam {
  /** Created with the run, so its parent is the workflow's root scope, not the loop's. */
  private readonly scope = new CancellationScope();
  /** Sub-runs started and not yet ended, by workflow id. */
  private readonly running = new Set<string>();
  private finishRequest?: { reason: string };
  private treeMarked = false;
  /** Tasks of the `delegate` call running now: what a change of the parent's limits is shared between. */
  private tasks = 0;
  /** The `delegate` calls of a turn, one after another (each carves from what the one before left). */
  private delegations: Promise<unknown> = Promise.resolve();

  /** @param tree the run's place in its tree; undefined for a run without sub-runs (it never starts any). */
  constructor(
    private readonly workflowId: string,
    private readonly tree: TreePosition | undefined,
  ) {}

  /**
   * Runs `delegation` once the `delegate` calls before it have ended: two calls of one reply run
   * one after the other, so the second carves its sub-runs' limits from what the first left.
   */
  oneAtATime<T>(delegation: () => Promise<T>): Promise<T> {
    const next = this.delegations.then(delegation);
    this.delegations = next.catch(() => undefined);
    return next;
  }

  /** The ids of the sub-runs running now, in start order. */
  get ids(): string[] {
    return [...this.running];
  }

  /** Runs the sub-runs, at most `maxParallel` at once; each one's outcome, in order. */
  run(starts: SubRunStart[], maxParallel: number): Promise<SubRunOutcome[]> {
    this.markTree();
    this.tasks = starts.length;
    return this.scope.run(async () => {
      const slots = new TaskSlots(maxParallel, condition);
      const outcomes: SubRunOutcome[] = [];
      const started: Promise<void>[] = [];
      for (const [index, start] of starts.entries()) {
        const stopped = await slots.free().then(
          () => undefined,
          (error: unknown) => {
            if (!isCancellation(error)) throw error;
            return 'cancelled';
          },
        );
        const notStarted = stopped ?? (this.finishRequest ? 'the research it belongs to is finishing' : undefined);
        if (notStarted) {
          outcomes[index] = { ...start, failure: `not started: ${notStarted}` };
          continue;
        }
        started.push(
          slots.run(async () => {
            outcomes[index] = await this.runOne(start);
          }),
        );
      }
      await Promise.all(started);
      return outcomes;
    });
  }

  /** Tells every running sub-run to finish now with what it has (and none to start). */
  finishAll(reason: string): void {
    this.finishRequest ??= { reason };
    for (const workflowId of this.running) this.tellToFinish(workflowId);
  }

  /**
   * The parent's limits changed (`setLimits`): the running sub-runs' shares are carved again from
   * what it has now (signal `limitsFromParent`), or they are told to finish when too little is left.
   */
  limitsChanged(state: RunState, finalAnswerPhase: boolean): void {
    if (!this.running.size || !this.tree) return;
    const carved = subRunLimits(state, this.tasks, this.tree.maxParallel, Date.now(), finalAnswerPhase);
    if ('problem' in carved) return this.finishAll('the budget of the research it belongs to was lowered');
    for (const workflowId of this.running) this.signal(workflowId, limitsFromParentSignal, sharedLimits(carved.limits));
  }

  private async runOne(start: SubRunStart): Promise<SubRunOutcome> {
    const { workflowId, question } = start;
    try {
      const child = await startChild<ResearchAgentWorkflow>(WorkflowTypes.researchAgent, {
        workflowId,
        args: [start.input],
        // Terminated or timed out without its cancellation reaching them: the sub-runs are cancelled too.
        parentClosePolicy: ParentClosePolicy.REQUEST_CANCEL,
        typedSearchAttributes: [{ key: REACT_TREE_ID, value: this.tree?.lead ?? this.workflowId }],
        staticSummary: `Sub-run of ${preview(this.workflowId, 120)}: ${preview(question, 150)}`,
      });
      this.running.add(workflowId);
      if (this.finishRequest) this.tellToFinish(workflowId);
      try {
        return { workflowId, question, result: await child.result() };
      } finally {
        this.running.delete(workflowId);
      }
    } catch (error) {
      return { workflowId, question, failure: rootMessage(error) };
    }
  }

  private tellToFinish(workflowId: string): void {
    this.signal(workflowId, finishFromParentSignal, { reason: this.finishRequest?.reason ?? '' });
  }

  /** Signals a sub-run, not waiting; one that ended meanwhile is not an error. */
  private signal<Args extends unknown[]>(workflowId: string, signal: SignalDefinition<Args>, ...args: Args): void {
    void getExternalWorkflowHandle(workflowId)
      .signal(signal, ...args)
      .catch(() => undefined);
  }

  /** The lead's own `ReactTreeId`, set once when it first delegates (its sub-runs get theirs at their start). */
  private markTree(): void {
    if (this.treeMarked || this.tree?.depth !== 0) return;
    this.treeMarked = true;
    upsertSearchAttributes([{ key: REACT_TREE_ID, value: this.tree?.lead ?? this.workflowId }]);
  }
}
