import { CancellationScope, isCancellation, patched, setHandler, sleep, workflowInfo } from '@temporalio/workflow';
import { protocolByName, type Protocol, type ToolCallRequest } from '../src/core/protocols';
import type { ResearchPhase } from '../src/core/research-phase';
import { runProgress } from '../src/core/run-progress';
import { deliverInjectedMessages } from '../src/core/pending';
import { msUntilDeadline } from '../src/core/run-budgets';
import { didNotFitPrediction } from '../src/core/context-window';
import {
  concludeRun,
  endingAfterLoop,
  requestStop,
  withRecord,
  type Conclusion,
  type Ending,
  type FinalEnding,
  type GivenAnswer,
  type StopRequest,
} from '../src/core/run-ending';
import type { ModelOptions } from '../src/core/model-options';
import type { ResearchRunInput } from '../src/core/run-input';
import type { LoopOptions, RunLimits } from '../src/core/run-limits';
import type { RunSetup, RunState } from '../src/core/run-state';
import {
  finishRequestProblem,
  injectedMessageProblem,
  limitChangesProblem,
  RUN_ENDING_PROBLEM,
  type ApprovalDecision,
  type LimitChanges,
} from '../src/core/run-steering';
import { changeLimits, finishRequested, initialRunState, resumedRunState } from '../src/core/run-transitions';
import type { Termination } from '../src/core/termination';
import { unansweredTurn, type Turn } from '../src/core/turns';
import type { ReplyContext } from '../src/core/reply-steps';
import { limitsFromParent } from '../src/core/sub-runs/sub-run-budget';
import { treePosition, type TreePosition } from '../src/core/sub-runs/sub-run-options';
import { LoopPatches } from './patches';
import { SubRunTeam } from './sub-run-team';
import { ToolApprovals } from './tool-approvals';
import {
  approveToolCallUpdate,
  finishFromParentSignal,
  limitsFromParentSignal,
  finishNowUpdate,
  injectMessageUpdate,
  progressQuery,
  setLimitsUpdate,
  type RunProgress,
} from '../src/core/message-definitions';

/** Throws a validator's problem, so the update is refused with it. */
function refuse(problem: string | undefined): void {
  if (problem !== undefined) throw new Error(problem);
}

/**
 * One research run: its state, its phase, the messages injected for the next model call, the
 * tool calls waiting for approval, its deadline, and the message handlers with their validators.
 * The phases (workflows/phases/) read its state and replace it, every change a pure function from
 * src/core/; everything else the run writes itself, through its methods. Why the run ended is the
 * `Ending` the phases return, which carries what it ended with (its error, the last answer, the
 * open calls). Handlers are synchronous, so `allHandlersFinished` holds as soon as the last one ran.
 */
export class ResearchRun {
  readonly workflowId = workflowInfo().workflowId;
  readonly protocol: Protocol;
  /** The client's answer schema, and whether answers are checked against it within bounds (`bounded-answer-checks`). */
  readonly answerChecks: Pick<ReplyContext, 'answerSchema' | 'boundedAnswerChecks'>;
  /** Its place in a tree of sub-runs, when it has `subruns` (issue 30); its sub-runs. */
  readonly tree?: TreePosition;
  readonly team: SubRunTeam;
  state: RunState;
  private phase: ResearchPhase = 'starting';
  /** The tool calls of the turn in progress: `progress` shows them, and a stop meanwhile leaves them open in the ending. */
  private turn?: Turn;
  /** The last answer the model gave in the loop: the prediction if a budget or a stop ends the loop later. */
  private lastAnswer?: GivenAnswer;
  /** Set once the run concluded, for `progress`. */
  private termination?: Termination;
  private readonly inbox: string[] = [];
  private readonly approvals = new ToolApprovals();
  private stop?: StopRequest;
  /** Set once the loop is over (final answer, continue-as-new, finishing): steering is refused. */
  private closed = false;
  private readonly loopScope = new CancellationScope();
  private deadline?: CancellationScope;

  constructor(
    readonly input: ResearchRunInput,
    readonly options: LoopOptions,
    limits: RunLimits,
  ) {
    this.protocol = protocolByName(input.protocol);
    const { answerSchema } = input;
    this.answerChecks = answerSchema
      ? { answerSchema, boundedAnswerChecks: patched(LoopPatches.boundedAnswerChecks) }
      : {};
    this.state = input.resume ? resumedRunState(input.resume) : initialRunState(this.protocol.name, limits, Date.now());
    this.tree = treePosition(input.subruns, this.workflowId);
    this.team = new SubRunTeam(this.workflowId, this.tree);
  }

  /** Messages: defined in src/core/message-definitions.ts, handled by the methods below. */
  register(): void {
    setHandler(progressQuery, () => this.progress());
    setHandler(injectMessageUpdate, (message) => this.injectMessage(message), {
      validator: (message) => refuse(this.injectMessageProblem(message)),
    });
    setHandler(finishNowUpdate, (request) => this.finishNow(request), {
      validator: (request) => refuse(finishRequestProblem(request) ?? this.endingProblem()),
    });
    setHandler(setLimitsUpdate, (changes) => this.setLimits(changes), {
      validator: (changes) => refuse(this.limitsProblem(changes)),
    });
    setHandler(
      approveToolCallUpdate,
      (decision) =>
        patched(LoopPatches.approvalsCompleteAfterTheirEffect)
          ? this.approvals.decideAndAwaitEffect(decision)
          : this.approvals.decide(decision),
      { validator: (decision) => refuse(this.approvals.problem(decision)) },
    );
    // A sub-run (issue 30) follows its parent's finishNow and limits; once it is stopping already, nothing changes.
    if (!this.tree?.depth) return;
    setHandler(finishFromParentSignal, (request) => void (this.endingProblem() ?? this.finishNow(request)));
    setHandler(limitsFromParentSignal, (sent) => {
      if (!this.endingProblem()) this.setLimits(limitsFromParent(this.state, sent));
    });
  }

  progress(): RunProgress {
    const { phase, turn, termination, approvals, team } = this;
    const facts = { phase, turn, awaitingApproval: approvals.awaiting, termination, runningSubRuns: team.ids };
    return runProgress(this.state, facts, Date.now());
  }

  injectMessage({ text }: { text: string }): { modelCall: number } {
    this.inbox.push(text);
    return { modelCall: this.state.modelCalls + 1 };
  }

  finishNow(request: { reason?: string } | undefined): { modelCalls: number } {
    this.state = finishRequested(this.state);
    this.requestStop({
      kind: 'finish',
      reason: typeof request?.reason === 'string' ? request.reason.slice(0, 500) : '',
    });
    return { modelCalls: this.state.modelCalls };
  }

  setLimits(changes: LimitChanges): RunLimits {
    this.state = changeLimits(this.state, changes);
    if (changes.maxDurationMinutes !== undefined) this.armDeadline();
    this.team.limitsChanged(this.state, this.options.finalAnswerPhase);
    return this.state.limits;
  }

  /** Steering is refused once the run is stopping (a stop was requested) or its loop is over. */
  private endingProblem(): string | undefined {
    return this.closed || this.stop ? RUN_ENDING_PROBLEM : undefined;
  }

  private injectMessageProblem(message: { text?: unknown } | undefined): string | undefined {
    return injectedMessageProblem(message, this.injectedCharactersWaiting()) ?? this.endingProblem();
  }

  /** Characters of the messages injected since the last model call (bounded by `MAX_PENDING_INJECTED_CHARACTERS`). */
  private injectedCharactersWaiting(): number {
    return this.inbox.reduce((sum, text) => sum + text.length, 0);
  }

  private limitsProblem(changes: LimitChanges | undefined): string | undefined {
    return this.endingProblem() ?? limitChangesProblem(this.state, changes, Date.now());
  }

  /** The messages injected since the last model call, taken out of the inbox. */
  takeInjected(): string[] {
    return this.inbox.splice(0);
  }

  /** Injected messages go into what is pending for the next model call. */
  deliverInjected(): void {
    this.state = deliverInjectedMessages(this.state, this.takeInjected());
  }

  /** A turn's tool calls start running: the turn in progress until {@link endTurn}. */
  beginTurn(calls: ToolCallRequest[]): Turn {
    const turn = unansweredTurn(calls);
    this.turn = turn;
    this.enter('running_tools');
    return turn;
  }

  /** Every call of the turn in progress came back. */
  endTurn(): void {
    this.turn = undefined;
  }

  /** An answer the model gave in the loop (if the reply had one); accepted or not, the latest stands. */
  noteAnswer(given: GivenAnswer | undefined): void {
    if (given) this.lastAnswer = given;
  }

  /** The run's conclusion from its ending (`concludeRun`); `progress` reports its termination from now on. */
  conclude(ending: FinalEnding): Conclusion {
    const conclusion = concludeRun(ending, this.state.limits, didNotFitPrediction(this.state.details));
    this.termination = conclusion.termination;
    return conclusion;
  }

  /**
   * The ending for a poison pill (workflows/poison-pills.ts): `failed` with the reason, carrying
   * the last answer and the turn in progress; undefined once the run is finishing, where
   * finishing again would meet the same error.
   */
  failedEnding(reason: string): FinalEnding | undefined {
    if (this.phase === 'finishing' || this.phase === 'done') return undefined;
    return this.withRecord({ kind: 'failed', message: reason }) as FinalEnding;
  }

  /**
   * The loop is over: no more steering, the deadline timer cancelled, and `next` — what the run
   * does after the loop — started in the same synchronous step. So the CancelTimer command always
   * follows the first command `next` schedules (a scope's cancellation reaches its timer a
   * microtask later), as in every run recorded before the phases had their own files; nothing can
   * be awaited in between, which would swap the two and fail replay. Safe to call again (the
   * finish after a final answer): there is no timer left to cancel. `keepDeadline` (a light run's
   * finish and continue-as-new, issue 34) leaves the timer to the server, which drops it when the
   * run closes — one TimerCanceled event less; should it fire first, the closed run ignores it.
   */
  leaveLoop<T>(next: () => T, { keepDeadline = false }: { keepDeadline?: boolean } = {}): T {
    this.closed = true;
    if (!keepDeadline) this.deadline?.cancel();
    this.deadline = undefined;
    return next();
  }

  enter(phase: ResearchPhase): void {
    this.phase = phase;
  }

  /** Stops the loop (its scope cancelled) and tells the sub-runs to finish with what they have. */
  private requestStop(stop: StopRequest): void {
    this.stop = requestStop(this.stop, stop);
    this.loopScope.cancel();
    this.team.finishAll(
      stop.kind === 'finish' && stop.reason ? stop.reason : `the research it belongs to: ${stop.kind}`,
    );
  }

  /** (Re)starts the deadline timer for the time budget; when it fires, the loop stops with `timeout`. */
  armDeadline(): void {
    this.deadline?.cancel();
    const scope = new CancellationScope();
    this.deadline = scope;
    scope
      .run(() => sleep(msUntilDeadline(this.state, Date.now())))
      .then(() => {
        if (this.deadline !== scope || this.closed) return;
        this.requestStop({ kind: 'timeout' });
      })
      .catch(() => undefined);
  }

  /**
   * Runs the ReAct loop in the scope a stop request cancels; its ending, with the stop request (if
   * any) taken into account, carrying the last answer the model gave and the calls of a turn the
   * stop interrupted.
   */
  async runLoop(loop: () => Promise<Ending>): Promise<Ending> {
    try {
      return endingAfterLoop(this.withRecord(await this.loopScope.run(loop)), this.stop);
    } catch (error) {
      if (!isCancellation(error)) throw error;
      return endingAfterLoop(this.withRecord({ kind: 'cancelled' }), this.stop);
    }
  }

  private withRecord(ending: Ending): Ending {
    return withRecord(ending, { lastAnswer: this.lastAnswer, openTurn: this.turn });
  }

  /** Waits for a decision on a call that requires approval; undefined when none came within `loop.approvalTimeoutMinutes`. */
  awaitApproval(call: ToolCallRequest): Promise<ApprovalDecision | undefined> {
    return this.approvals.awaitDecision(call, this.options.approvalTimeoutMinutes);
  }

  /** What the transcript's opening recorded: tools, model activity settings, model. */
  get setup(): RunSetup {
    if (!this.state.setup) throw new Error('the transcript is not open yet');
    return this.state.setup;
  }

  modelOptions(): ModelOptions & { model: string } {
    return { ...(this.input.model ?? {}), model: this.input.model?.model ?? this.setup.model };
  }
}
