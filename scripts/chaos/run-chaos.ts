import { WorkflowFailedError } from '@temporalio/client';
import { defaultPayloadConverter, WorkflowExecutionAlreadyStartedError } from '@temporalio/common';
import { optionalTsToMs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { loadConversation } from '../../src/storage/conversation';
import type { CallModelInput } from '../../src/core/activity-contracts';
import { resolveTemporalCli } from '../../src/processes/temporal-cli';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { WorkerProcess } from '../../test/integration/support/worker-process';
import { resolveChaosOptions, type ChaosOptions } from './chaos-options';
import { ChaosEnvironment } from './chaos-environment';
import { summarizeRecovery, type ChaosReport, type ChaosRunOutcome, type WorkerKillRecord } from './chaos-report';
import { chaosScript, planChaos, runInput, type CancelVia } from './chaos-scenario';
import {
  checkAssistantCount,
  checkModelCalls,
  checkNoToolLeftRunning,
  checkTermination,
  checkToolsStoppedAfterCancel,
  checkTranscript,
  toolIntervals,
  type ToolLogEntry,
  type WorkerKill,
} from './invariants';
import { Random } from './random';

const EventType = temporal.api.enums.v1.EventType;
const STARTED = temporal.api.enums.v1.PendingActivityState.PENDING_ACTIVITY_STATE_STARTED;

export interface ChaosHooks {
  /** Aborting stops the chaos at once; everything is still cleaned up. */
  signal?: AbortSignal;
  /** Progress lines (default: none). */
  log?: (line: string) => void;
}

interface WorkerSlot {
  index: number;
  worker?: WorkerProcess;
  restarting?: Promise<void>;
}

/** What a run's history says: when each model call's completion and each activity's completion were recorded. */
interface HistoryFacts {
  modelCompletions: Map<number, number>;
  activityCompletions: number[];
  /** WorkflowExecutionCancelRequested, and the first ActivityTaskCancelRequested after it. */
  cancelRecordedAt?: number;
  activityCancelRequestedAt?: number;
  /** Workflow tasks that timed out (a killed worker's task, or its sticky queue), with the timeout type. */
  workflowTaskTimeouts: Array<{ at: number; type: string }>;
}

function historyFacts(events: temporal.api.history.v1.IHistoryEvent[]): HistoryFacts {
  const modelCallOf = new Map<string, number>();
  const modelCompletions = new Map<number, number>();
  const activityCompletions: number[] = [];
  const workflowTaskTimeouts: HistoryFacts['workflowTaskTimeouts'] = [];
  let cancelRecordedAt: number | undefined;
  let activityCancelRequestedAt: number | undefined;
  for (const event of events) {
    const eventAt = optionalTsToMs(event.eventTime);
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CANCEL_REQUESTED) cancelRecordedAt ??= eventAt;
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_CANCEL_REQUESTED && cancelRecordedAt !== undefined)
      activityCancelRequestedAt ??= eventAt;
    if (event.eventType === EventType.EVENT_TYPE_WORKFLOW_TASK_TIMED_OUT && eventAt !== undefined) {
      const type = event.workflowTaskTimedOutEventAttributes?.timeoutType;
      workflowTaskTimeouts.push({
        at: eventAt,
        type:
          type === temporal.api.enums.v1.TimeoutType.TIMEOUT_TYPE_SCHEDULE_TO_START
            ? 'schedule-to-start (sticky)'
            : 'start-to-close',
      });
    }
    if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED) {
      const attributes = event.activityTaskScheduledEventAttributes;
      if (attributes?.activityType?.name === 'callModel') {
        const first = attributes.input?.payloads?.[0];
        const input = first ? (defaultPayloadConverter.fromPayload(first) as CallModelInput) : undefined;
        if (input) modelCallOf.set(String(event.eventId), input.modelCall);
      }
    } else if (event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED) {
      const at = optionalTsToMs(event.eventTime);
      if (at === undefined) continue;
      activityCompletions.push(at);
      const modelCall = modelCallOf.get(String(event.activityTaskCompletedEventAttributes?.scheduledEventId));
      if (modelCall !== undefined) modelCompletions.set(modelCall, at);
    }
  }
  return {
    modelCompletions,
    activityCompletions: activityCompletions.sort((a, b) => a - b),
    workflowTaskTimeouts,
    ...(cancelRecordedAt !== undefined ? { cancelRecordedAt } : {}),
    ...(activityCancelRequestedAt !== undefined ? { activityCancelRequestedAt } : {}),
  };
}

function readToolLog(file: string): ToolLogEntry[] {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as ToolLogEntry];
      } catch {
        return []; // a line cut short by a SIGKILL
      }
    });
}

function messageOf(error: unknown): string {
  if (error instanceof WorkflowFailedError) return `${error.message}${error.cause ? `: ${error.cause.message}` : ''}`;
  return error instanceof Error ? error.message : String(error);
}

/** Resolves with `promise`, or rejects as soon as `signal` aborts. */
function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * Runs the chaos: starts the environment, starts the planned runs while killing workers,
 * restarting the dev server and cancelling runs, waits for every run to end, checks the
 * invariants, stops every process and deletes the temp dir. Resolves with the report (whose
 * `violations` must be empty); rejects only when the chaos itself could not be carried out.
 */
export async function runChaos(partial: Partial<ChaosOptions> = {}, hooks: ChaosHooks = {}): Promise<ChaosReport> {
  const options = resolveChaosOptions(partial);
  const log = hooks.log ?? (() => undefined);
  const verbose = options.verbose ? log : () => undefined;
  // Aborted by the caller, or by the harness itself when a step fails, so every loop stops.
  const stop = new AbortController();
  const signal = stop.signal;
  const onOuterAbort = () => stop.abort(hooks.signal?.reason ?? new Error('chaos aborted'));
  if (hooks.signal?.aborted) onOuterAbort();
  else hooks.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const began = Date.now();
  const sleep = (ms: number) => delay(Math.max(0, ms), undefined, { signal });
  const random = Random.derive(options.seed, 'chaos');
  const plan = planChaos(options, `chaos-s${options.seed}-${began.toString(36)}`);
  const plans = new Map(plan.runs.map((run) => [run.workflowId, run]));
  const outcomes: ChaosRunOutcome[] = plan.runs.map((run) => ({ plan: run, status: 'not-started', violations: [] }));
  const finished = new Set<string>();
  const kills: WorkerKillRecord[] = [];
  const serverRestarts: ChaosReport['serverRestarts'] = [];
  const cancels = { client: 0, cli: 0, missed: 0 };
  const environment = new ChaosEnvironment(options.keep);
  let checked = false;

  /** Retries `action` while the server is down or restarting, until `timeoutMs`; `final` errors are thrown at once. */
  const withServer = async <T>(
    what: string,
    action: () => Promise<T>,
    final: (error: unknown) => boolean = () => false,
    timeoutMs = 180_000,
  ): Promise<T> => {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      await abortable(environment.gate.wait(), signal);
      try {
        return await abortable(action(), signal);
      } catch (error) {
        if (signal.aborted || final(error) || Date.now() > deadline) throw error;
        verbose(`chaos: ${what} failed (${messageOf(error).split('\n')[0]}); retrying`);
        await sleep(500);
      }
    }
  };

  const waitUntil = async (what: string, predicate: () => boolean, timeoutMs = 180_000) => {
    const deadline = Date.now() + timeoutMs;
    while (!predicate()) {
      if (Date.now() > deadline) throw new Error(`chaos: gave up waiting for ${what} after ${timeoutMs / 1000} s`);
      await sleep(100);
    }
  };

  try {
    log(
      `chaos: ${options.runs} runs, ${options.workerKills} worker kills, ${options.serverRestarts} server restarts, ${options.cancels} cancels, ${options.workers} workers, seed ${options.seed}`,
    );
    log(
      `chaos: starting the dev server, the scripted model server and ${options.workers} worker processes (temp dir ${environment.directory})`,
    );
    await abortable(
      environment.start(chaosScript(plans, options.seed), {
        REACT_AGENT_MODEL_HEARTBEAT_SECONDS: String(options.modelHeartbeatSeconds),
        REACT_AGENT_MODEL_MAX_ATTEMPTS: '12',
      }),
      signal,
    );
    const client = environment.temporal;

    // ---- Workers: slots that are killed and refilled. ----
    const slots: WorkerSlot[] = Array.from({ length: options.workers }, (_, index) => ({ index }));
    const bringUp = async (slot: WorkerSlot) => {
      for (let attempt = 1; ; attempt += 1) {
        await abortable(environment.gate.wait(), signal);
        try {
          const worker = await abortable(environment.startWorker(), signal);
          slot.worker = worker;
          verbose(`chaos: worker ${slot.index} up (pid ${worker.pid})`);
          return;
        } catch (error) {
          if (signal.aborted || attempt >= 6)
            throw new Error(`chaos: worker ${slot.index} could not be started: ${messageOf(error)}`);
          verbose(`chaos: worker ${slot.index} did not start (${messageOf(error).split('\n')[0]}); retrying`);
          await sleep(1_000);
        }
      }
    };
    await Promise.all(slots.map(bringUp));
    const upSlots = () => slots.filter((slot) => slot.worker !== undefined && slot.restarting === undefined);
    log(`chaos: ready after ${((Date.now() - began) / 1000).toFixed(1)} s; chaos begins`);

    const t0 = Date.now();
    const sleepUntil = (offsetMs: number) => sleep(t0 + offsetMs - Date.now());
    let settleDeadline = Number.POSITIVE_INFINITY;
    const settle = new AbortController();
    const inFlight = () =>
      outcomes.filter((outcome) => outcome.startedAt !== undefined && !finished.has(outcome.plan.workflowId));

    // ---- Runs: started at their moments, each watched until it ends. ----
    const watch = async (outcome: ChaosRunOutcome) => {
      const id = outcome.plan.workflowId;
      for (;;) {
        try {
          const result = (await abortable(client.workflow.getHandle(id).result(), settle.signal)) as ResearchRunResult;
          outcome.status = 'completed';
          outcome.result = result;
          break;
        } catch (error) {
          if (error instanceof WorkflowFailedError) {
            outcome.status = 'failed';
            outcome.failure = messageOf(error);
            break;
          }
          if (signal.aborted) return;
          if (settle.signal.aborted || Date.now() > settleDeadline) {
            outcome.status = 'not-terminal';
            outcome.failure = `no result within ${options.settleSeconds} s after the chaos ended (${messageOf(error)})`;
            break;
          }
          await sleep(1_000).catch(() => undefined);
        }
      }
      finished.add(id);
      verbose(
        `chaos: ${id} ended ${outcome.result?.termination ?? outcome.status} (${finished.size}/${outcomes.length})`,
      );
    };
    const watchers: Array<Promise<void>> = [];
    const starter = (async () => {
      for (const outcome of outcomes) {
        const run = outcome.plan;
        await sleepUntil(run.startAtMs);
        await withServer(`starting ${run.workflowId}`, () =>
          client.workflow
            .start('researchAgent', {
              taskQueue: environment.taskQueue,
              workflowId: run.workflowId,
              args: [runInput(run)],
              staticSummary: run.question,
            })
            .then(() => undefined)
            .catch((error: unknown) => {
              if (error instanceof WorkflowExecutionAlreadyStartedError) return; // a retry after the first try did start it
              throw error;
            }),
        );
        outcome.startedAt = Date.now();
        watchers.push(watch(outcome));
      }
    })();

    // ---- Chaos steps that must not overlap (a worker kill reads every run's state first). ----
    let exclusive: Promise<unknown> = Promise.resolve();
    const serially = <T>(step: () => Promise<T>): Promise<T> => {
      const next = exclusive.then(step, step);
      exclusive = next.catch(() => undefined);
      return next;
    };

    /** Workflow ids of the runs in flight with an activity running on the worker with `pid`. */
    const runsWithActivityOn = async (pid: number): Promise<string[]> => {
      const found = await Promise.all(
        inFlight().map(async (outcome) => {
          try {
            const description = await Promise.race([
              client.workflow.getHandle(outcome.plan.workflowId).describe(),
              delay(3_000).then(() => undefined),
            ]);
            const busy = description?.raw.pendingActivities?.some(
              (activity) => activity.state === STARTED && (activity.lastWorkerIdentity ?? '').startsWith(`${pid}@`),
            );
            return busy ? [outcome.plan.workflowId] : [];
          } catch {
            return [];
          }
        }),
      );
      return found.flat();
    };

    const workerChaos = (async () => {
      // Kill only while every other worker is up (at least one keeps polling), a random one of them.
      const enoughUp = () => environment.gate.up && upSlots().length >= Math.min(2, options.workers);
      for (const at of plan.workerKillsAtMs) {
        await sleepUntil(at);
        for (let killed = false; !killed;) {
          await waitUntil('a worker to kill', enoughUp);
          killed = await serially(() => (enoughUp() ? killOne() : Promise.resolve(false)));
        }
      }
    })();

    /** SIGKILLs a random live worker (after noting which runs had an activity on it) and restarts it in the background. */
    async function killOne(): Promise<boolean> {
      const slot = random.pick(upSlots());
      const worker = slot.worker as WorkerProcess;
      const affected = await runsWithActivityOn(worker.pid);
      const killedAt = await environment.killWorker(worker);
      slot.worker = undefined;
      kills.push({ pid: worker.pid, at: killedAt, affected, recoveryMs: [] });
      verbose(
        `chaos: SIGKILLed worker ${slot.index} (pid ${worker.pid}) with activities of ${affected.length} runs (kill ${kills.length}/${options.workerKills})`,
      );
      const restarting = sleep(random.integer(200, 1_500))
        .then(() => bringUp(slot))
        .finally(() => {
          slot.restarting = undefined;
        });
      slot.restarting = restarting;
      restarting.catch(() => undefined);
      return true;
    }

    const serverChaos = (async () => {
      const server = environment.server;
      if (!server) return;
      for (const at of plan.serverRestartsAtMs) {
        await sleepUntil(at);
        await serially(async () => {
          environment.gate.down();
          const killedAt = Date.now();
          await server.kill();
          verbose(`chaos: SIGKILLed the dev server (restart ${serverRestarts.length + 1}/${options.serverRestarts})`);
          await sleep(random.integer(500, 2_000));
          for (let attempt = 1; ; attempt += 1) {
            try {
              await server.restart();
              break;
            } catch (error) {
              if (signal.aborted || attempt >= 3)
                throw new Error(`chaos: the dev server did not restart: ${messageOf(error)}`);
              await sleep(1_000);
            }
          }
          environment.gate.open();
          serverRestarts.push({ killedAt, downMs: Date.now() - killedAt });
          verbose(`chaos: dev server back after ${((Date.now() - killedAt) / 1000).toFixed(1)} s`);
        });
      }
    })();

    const temporalCli = resolveTemporalCli().path;
    const requestCancel = async (workflowId: string, via: CancelVia): Promise<number> => {
      let requestedAt = Date.now();
      await withServer(
        `cancelling ${workflowId}`,
        () => {
          requestedAt = Date.now();
          if (via === 'client')
            return client.workflow
              .getHandle(workflowId)
              .cancel()
              .then(() => undefined);
          return new Promise<void>((resolve, reject) =>
            execFile(
              temporalCli,
              [
                'workflow',
                'cancel',
                '--workflow-id',
                workflowId,
                '--address',
                environment.serverAddress,
                '--namespace',
                'default',
              ],
              { timeout: 30_000 },
              (error, _stdout, stderr) =>
                error ? reject(new Error(`temporal workflow cancel: ${stderr.trim() || error.message}`)) : resolve(),
            ),
          );
        },
        (error) => /already completed|not found|already finished/i.test(messageOf(error)),
      );
      return requestedAt;
    };

    const cancelChaos = (async () => {
      for (const cancel of plan.cancels) {
        await sleepUntil(cancel.atMs);
        let done = false;
        for (let attempt = 0; attempt < 60 && !done; attempt += 1) {
          const candidates = inFlight().filter(
            (outcome) =>
              outcome.cancel === undefined && outcome.startedAt !== undefined && Date.now() - outcome.startedAt > 1_000,
          );
          if (candidates.length === 0) {
            await sleep(500);
            continue;
          }
          // Prefer a run with a tool running right now: that is where a cancel can leave one behind.
          const open = new Set(
            toolIntervals(readToolLog(environment.toolLog), kills, Date.now())
              .filter((interval) => interval.endedBy === 'running')
              .map((interval) => interval.workflowId),
          );
          const preferred = candidates.filter((outcome) => open.has(outcome.plan.workflowId));
          const target = random.pick(preferred.length ? preferred : candidates);
          try {
            const requestedAt = await requestCancel(target.plan.workflowId, cancel.via);
            target.cancel = { via: cancel.via, requestedAt };
            cancels[cancel.via] += 1;
            done = true;
            verbose(
              `chaos: cancelled ${target.plan.workflowId} through the ${cancel.via === 'client' ? 'client' : 'temporal CLI'}`,
            );
          } catch (error) {
            if (signal.aborted) throw error;
            verbose(`chaos: cancelling ${target.plan.workflowId} missed (${messageOf(error).split('\n')[0]})`);
          }
        }
        if (!done) cancels.missed += 1;
      }
    })();

    const progress = setInterval(() => {
      log(
        `chaos: ${((Date.now() - t0) / 1000).toFixed(0)} s: runs started ${outcomes.filter((outcome) => outcome.startedAt !== undefined).length}/${outcomes.length}, ` +
          `ended ${finished.size}; worker kills ${kills.length}/${options.workerKills}; server restarts ${serverRestarts.length}/${options.serverRestarts}; cancels ${cancels.client + cancels.cli}/${options.cancels}`,
      );
    }, 15_000);
    try {
      await Promise.all([starter, workerChaos, serverChaos, cancelChaos]);
      log(
        `chaos: chaos over after ${((Date.now() - t0) / 1000).toFixed(1)} s; waiting for ${inFlight().length} runs to end`,
      );
      settleDeadline = Date.now() + options.settleSeconds * 1_000;
      const settleTimer = setTimeout(() => settle.abort(new Error('settle deadline')), options.settleSeconds * 1_000);
      try {
        await abortable(Promise.all(watchers), signal);
      } finally {
        clearTimeout(settleTimer);
      }
      await abortable(Promise.all(slots.map((slot) => slot.restarting ?? Promise.resolve())), signal);
    } finally {
      clearInterval(progress);
    }

    // ---- Checks. ----
    log(`chaos: all runs ended after ${((Date.now() - t0) / 1000).toFixed(1)} s; checking invariants`);
    const now = Date.now();
    const toolLog = readToolLog(environment.toolLog);
    const requests = environment.modelRequests();
    const workerKills: WorkerKill[] = kills.map((kill) => ({ pid: kill.pid, at: kill.at }));
    const crashes = [...workerKills.map((kill) => kill.at), ...serverRestarts.map((restart) => restart.killedAt)];
    const resent: ChaosReport['resent'] = [];
    const crashKind = (at: number): 'server kill' | 'worker kill' =>
      serverRestarts.some((restart) => restart.killedAt === at) ? 'server kill' : 'worker kill';
    const completions = new Map<string, number[]>();
    for (const outcome of outcomes) {
      const { workflowId, protocol } = outcome.plan;
      const violations = outcome.violations;
      if (outcome.status === 'not-started') violations.push('was never started');
      if (outcome.status === 'failed') violations.push(`closed without a result: ${outcome.failure ?? ''}`);
      if (outcome.status === 'not-terminal')
        violations.push(`did not reach a terminal state: ${outcome.failure ?? ''}`);
      if (outcome.status === 'not-started') continue;
      let facts: HistoryFacts | undefined;
      try {
        const history = await withServer(
          `reading the history of ${workflowId}`,
          () => client.workflow.getHandle(workflowId).fetchHistory(),
          () => false,
          60_000,
        );
        facts = historyFacts(history.events ?? []);
        completions.set(workflowId, facts.activityCompletions);
      } catch (error) {
        violations.push(`its history could not be read: ${messageOf(error)}`);
      }
      const result = outcome.result;
      if (result) {
        violations.push(...checkTermination(result.termination, outcome.cancel !== undefined));
        if (result.transcript) {
          try {
            const messages = await loadConversation(environment.store, result.transcript);
            violations.push(...checkTranscript(messages, protocol));
            violations.push(...checkAssistantCount(messages, result.iterations, result.termination === 'cancelled'));
          } catch (error) {
            violations.push(`its transcript could not be loaded: ${messageOf(error)}`);
          }
        } else if (result.termination !== 'cancelled') {
          violations.push('ended without a transcript');
        }
      }
      if (facts) {
        const checked = checkModelCalls(
          requests.filter((request) => request.workflowId === workflowId),
          facts.modelCompletions,
          crashes,
        );
        violations.push(...checked.violations);
        resent.push(
          ...checked.resent.map((entry) => ({
            workflowId,
            modelCall: entry.modelCall,
            crash: crashKind(entry.crashAt),
          })),
        );
      }
      if (outcome.status === 'completed')
        violations.push(
          ...checkNoToolLeftRunning(
            toolLog.filter((entry) => entry.workflowId === workflowId),
            workerKills,
            now,
          ),
        );
      if (outcome.cancel) {
        const requestedAt = outcome.cancel.requestedAt;
        const late = checkToolsStoppedAfterCancel(
          toolLog.filter((entry) => entry.workflowId === workflowId),
          workerKills,
          requestedAt,
          options.cancelStopSeconds * 1_000,
          now,
        );
        // Say what history shows about the cancel, so a late stop can be traced to its cause.
        const after = (at: number | undefined) =>
          at === undefined ? 'never' : `+${((at - requestedAt) / 1000).toFixed(1)} s`;
        const nearby = [...kills.map((kill) => kill.at), ...serverRestarts.map((restart) => restart.killedAt)].filter(
          (at) => at >= requestedAt - 15_000 && at <= requestedAt + 15_000,
        );
        const timeline =
          `history: cancel recorded ${after(facts?.cancelRecordedAt)}, activity cancel requested ${after(facts?.activityCancelRequestedAt)}; ` +
          `workflow task timeouts ${
            facts?.workflowTaskTimeouts
              .filter((timeout) => timeout.at >= requestedAt - 15_000)
              .map((timeout) => `${timeout.type} ${after(timeout.at)}`)
              .join(', ') || 'none'
          }; ` +
          `kills nearby ${nearby.map((at) => (at >= requestedAt ? `+${((at - requestedAt) / 1000).toFixed(1)} s` : `${((at - requestedAt) / 1000).toFixed(1)} s`)).join(', ') || 'none'}`;
        violations.push(...late.map((violation) => `${violation} [${timeline}]`));
      }
    }
    for (const kill of kills) {
      for (const workflowId of kill.affected) {
        const next = completions.get(workflowId)?.find((at) => at > kill.at);
        if (next !== undefined) kill.recoveryMs.push(next - kill.at);
      }
    }

    checked = true;
    const intervals = toolIntervals(toolLog, workerKills, now);
    const terminations: Record<string, number> = {};
    for (const outcome of outcomes) {
      const kind = outcome.result?.termination ?? outcome.status;
      terminations[kind] = (terminations[kind] ?? 0) + 1;
    }
    const report: ChaosReport = {
      options,
      directory: environment.directory,
      wallMs: Date.now() - began,
      runs: outcomes,
      workerKills: kills,
      serverRestarts,
      cancels,
      terminations,
      modelRequests: {
        total: requests.length,
        completed: requests.filter((request) => request.completed).length,
        resentAfterCrash: resent.length,
      },
      resent,
      toolAttempts: {
        started: intervals.length,
        retried: intervals.filter((interval) => (interval.attempt ?? 1) > 1).length,
        interruptedByKill: intervals.filter((interval) => interval.endedBy === 'kill').length,
      },
      recovery: summarizeRecovery(kills),
      violations: outcomes.flatMap((outcome) =>
        outcome.violations.map(
          (violation) =>
            `${outcome.plan.workflowId} (${outcome.plan.protocol}${outcome.cancel ? `, cancelled via ${outcome.cancel.via}` : ''}): ${violation}`,
        ),
      ),
    };
    if (options.keep) {
      // For a post-mortem beside the database, server log, tool log and transcripts.
      writeFileSync(
        join(environment.directory, 'model-requests.jsonl'),
        requests.map((request) => JSON.stringify(request)).join('\n') + '\n',
      );
      writeFileSync(
        join(environment.directory, 'chaos-report.json'),
        JSON.stringify(
          {
            ...report,
            runs: report.runs.map(({ plan, ...rest }) => ({
              workflowId: plan.workflowId,
              protocol: plan.protocol,
              ...rest,
            })),
          },
          null,
          2,
        ),
      );
    }
    return report;
  } finally {
    stop.abort(new Error('chaos finished'));
    hooks.signal?.removeEventListener('abort', onOuterAbort);
    await environment.close(checked);
  }
}
