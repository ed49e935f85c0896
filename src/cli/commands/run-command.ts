import { parseArgs } from 'node:util';
import { writeFile } from 'node:fs/promises';
import type { WorkflowHandle } from '@temporalio/client';
import {
  ConfigurationError,
  loadModelConfig,
  loadModelPrices,
  loadTemporalConnection,
  loadWorkerConfig,
} from '../../config';
import type { ResearchRunResult } from '../../core/run-result';
import { openCliContext, type CliContext } from '../cli-context';
import { describeResult, followRun, RunEndedWithoutResultError } from '../follow-run';
import { ChildWorker, ensureLocalServer, hasLiveWorker, StartedStack } from '../../processes/local-stack';
import { costBudgetPriceProblem } from '../cost-option';
import { UsageError } from '../usage-error';
import { materialiseResult } from '../materialise-result';
import { checkModelEndpoint } from '../model-preflight';
import { responseToFollowFailure, shouldKeepFollowing, type StackState } from '../run-supervision';
import { runInputFrom, startRun } from '../start-run';
import { oneRunOptionSpecs, oneRunOptionsHelp } from '../run-options';
import { stopResponse, StopRequests, type RunPhase } from '../stop-signals';
import { webUiLink } from '../temporal-client';

export const runHelp = `Usage: react-agent run "QUESTION" [options]

Answers a research question end to end and prints progress as it goes, then the answer.
With the default Temporal address (localhost:7233) and nothing listening there, it starts the
local dev server; with no worker polling, it starts one; it stops what it started when done.
Ctrl-C cancels the run, waits until it has ended cleanly (every tool call answered), then stops
what it started and exits 130; a second Ctrl-C stops without waiting. With --subruns, each
sub-run's steps are printed too, prefixed with its label ([sub-2-1] …), and its end.
${oneRunOptionsHelp}
  --output FILE        also write the full result (with messages) as JSON to FILE`;

/** Exit code after a stop request (128 + SIGINT), as shells expect. */
const INTERRUPTED_EXIT_CODE = 130;
/** How long `run` waits for a run it cancelled because it could not follow it. */
const CANCELLED_RUN_WAIT_MS = 120_000;

/** Thrown inside `run` when a stop request arrives before the run was started. */
class StartAborted extends Error {}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0] as string;

/** Resolves with the run's result, or undefined if it did not end within `timeoutMs` (or could not be read). */
async function resultWithin(handle: WorkflowHandle, timeoutMs: number): Promise<ResearchRunResult | undefined> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      handle.result() as Promise<ResearchRunResult>,
      new Promise<undefined>((resolveLater) => {
        timer = setTimeout(() => resolveLater(undefined), timeoutMs);
      }),
    ]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}

export async function runCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseArgs({
    args: argumentsList,
    allowPositionals: true,
    options: { ...oneRunOptionSpecs, output: { type: 'string' } },
  });
  const input = runInputFrom(positionals.join(' ').trim() || undefined, values, runHelp);
  const log = (line: string) => console.error(line);

  const modelConfig = loadModelConfig();
  const unreachable = await checkModelEndpoint(modelConfig);
  if (unreachable)
    throw new ConfigurationError(
      modelConfig.api === 'anthropic-messages' ? 'ANTHROPIC_BASE_URL' : 'OPENAI_BASE_URL',
      unreachable,
    );

  const temporal = loadTemporalConnection();
  const workerConfig = loadWorkerConfig();
  const stack = new StartedStack(log);
  let handle: WorkflowHandle | undefined;
  let phase: RunPhase = 'starting';
  let forced = false;
  let abortStart: (error: StartAborted) => void = () => undefined;
  const startAborted = new Promise<never>((_, reject) => {
    abortStart = reject;
  });
  startAborted.catch(() => undefined);
  let forceStop: () => void = () => undefined;
  const forceRequested = new Promise<'forced'>((resolveForce) => {
    forceStop = () => resolveForce('forced');
  });
  /** How to follow the run after this command has gone (no Web UI link when the UI is the dev server this command stops). */
  const followHint = (workflowId: string) => {
    const link = stack.server === undefined ? webUiLink(temporal, workflowId) : undefined;
    return `'react-agent follow ${workflowId}'${link ? ` or ${link}` : ''}`;
  };

  const stopRequests = new StopRequests((requests) => {
    switch (stopResponse(requests, phase)) {
      case 'abort-start':
        log('Stopping before the run has started ...');
        abortStart(new StartAborted());
        break;
      case 'cancel-run': {
        const running = handle as WorkflowHandle;
        log(
          `Cancelling run ${running.workflowId}: it answers its open tool calls and ends "cancelled" (Ctrl-C again to stop without waiting) ...`,
        );
        running
          .cancel()
          .catch((error: unknown) => log(`Could not cancel run ${running.workflowId}: ${messageOf(error)}`));
        break;
      }
      case 'force-stop':
        forced = true;
        forceStop();
        break;
      case 'exit-now':
        log('Exiting now; what this command started is killed.');
        process.exit(INTERRUPTED_EXIT_CODE);
    }
  }).install();

  const stackState = (): StackState => ({
    startedWorker: stack.worker !== undefined,
    startedServer: stack.server !== undefined,
    serverExited: stack.serverExited,
    forced,
  });
  /** Awaits a start-up step unless a stop request comes first. */
  const unlessAborted = <T>(step: Promise<T>): Promise<T> => Promise.race([step, startAborted]);

  let context: CliContext | undefined;
  try {
    stack.server = await unlessAborted(ensureLocalServer(temporal, workerConfig, log));
    context = await unlessAborted(openCliContext());
    if (!(await unlessAborted(hasLiveWorker(context.client, temporal.namespace, workerConfig.taskQueue)))) {
      // The worker this command starts has this environment's prices: a cost budget it cannot hold is refused now, before any call.
      const unpriced = costBudgetPriceProblem(
        input.limits?.maxCostUsd,
        input.model?.model ?? modelConfig.model,
        loadModelPrices(),
      );
      if (unpriced) throw new UsageError(unpriced, runHelp);
      stack.worker = await unlessAborted(ChildWorker.start(context.client, temporal, workerConfig, log));
    }
    // Not raced against a stop request: a start that went through must not be left behind.
    const started = await startRun(context, input, values.id);
    handle = started;
    phase = 'running';
    const link = webUiLink(temporal, started.workflowId);
    log(`Run ${started.workflowId} started${link ? `: ${link}` : ''}`);
    if (stopRequests.count > 0) {
      log(`Cancelling run ${started.workflowId}, as asked while it was being started ...`);
      await started.cancel();
    }
    return await superviseRun(context, started);
  } catch (error) {
    if (error instanceof StartAborted) return INTERRUPTED_EXIT_CODE;
    throw error;
  } finally {
    phase = 'stopping';
    try {
      await context?.close().catch(() => undefined);
      await stack.stop(forced);
    } finally {
      stopRequests.dispose();
    }
  }

  /** Follows the run to its end; on a failure of the CLI itself, never leaves it stranded. */
  async function superviseRun(cli: CliContext, run: WorkflowHandle): Promise<number> {
    const interrupted = () => stopRequests.count > 0;
    const finish = async (result: ResearchRunResult): Promise<number> => {
      phase = 'stopping';
      if (values.output) {
        const materialised = await materialiseResult(cli.store, result);
        await writeFile(values.output, `${JSON.stringify(materialised, null, 2)}\n`);
        log(`Wrote ${values.output}.`);
      }
      console.log(describeResult(result));
      if (interrupted() && result.termination === 'cancelled') return INTERRUPTED_EXIT_CODE;
      return result.termination === 'error' ? 1 : 0;
    };
    const forcedOutcome = () => {
      const id = run.workflowId;
      log(
        stack.server !== undefined
          ? `Not waiting for run ${id} any longer. Its cancellation is recorded in ${stack.server.databaseFile}: it ends "cancelled" when a dev server and a worker run again ('npm run server', 'npm run worker'); then 'react-agent follow ${id}'.`
          : stack.worker !== undefined
            ? `Not waiting for run ${id} any longer. Its cancellation is recorded: it ends "cancelled" when a worker runs again ('npm run worker'); follow it with ${followHint(id)}.`
            : `Not waiting for run ${id} any longer; its worker finishes the cancellation. Follow it with ${followHint(id)}.`,
      );
      return INTERRUPTED_EXIT_CODE;
    };

    let failure: unknown;
    try {
      // Once forced, the follower may still be reading in the background: it prints no more.
      const progressLog = (line: string) => {
        if (!forced) log(line);
      };
      const outcome = await Promise.race([
        followRun(cli.client, run.workflowId, progressLog, {
          keepTrying: (problem) => shouldKeepFollowing(problem, stackState()),
        }),
        forceRequested,
      ]);
      if (outcome === 'forced') return forcedOutcome();
      return await finish(outcome);
    } catch (error) {
      if (error instanceof RunEndedWithoutResultError) {
        phase = 'stopping';
        if (interrupted() && error.status === 'cancelled') {
          log(`Run ${run.workflowId} was cancelled.`);
          return INTERRUPTED_EXIT_CODE;
        }
        throw error;
      }
      failure = error;
    }

    let waitedQuietly = false;
    for (;;) {
      const response = responseToFollowFailure({ error: failure, waitedQuietly }, stackState());
      switch (response) {
        case 'wait-quietly': {
          waitedQuietly = true;
          log(
            `(Progress display stopped: ${messageOf(failure)}. Still waiting for run ${run.workflowId} to end; Ctrl-C cancels it.)`,
          );
          try {
            const outcome = await Promise.race([run.result() as Promise<ResearchRunResult>, forceRequested]);
            if (outcome === 'forced') return forcedOutcome();
            return await finish(outcome);
          } catch (error) {
            failure = error;
            continue;
          }
        }
        case 'report-saved': {
          const server = stack.server;
          log(
            `The dev server this command started has exited (log: ${server?.logFile ?? 'see the data directory'}). Run ${run.workflowId} is saved in ${server?.databaseFile ?? 'its database'} ` +
              `and goes on when a server and a worker run again: 'npm run server' and 'npm run worker', then 'react-agent follow ${run.workflowId}'.`,
          );
          return 1;
        }
        case 'cancel-and-wait': {
          log(
            `This command cannot follow run ${run.workflowId} (${messageOf(failure)}) and would leave it without the worker it started; cancelling the run and waiting for it to end ...`,
          );
          const cancelled = await run.cancel().then(
            () => true,
            (error: unknown) => {
              log(`Could not cancel run ${run.workflowId}: ${messageOf(error)}`);
              return false;
            },
          );
          const result = cancelled
            ? await Promise.race([resultWithin(run, CANCELLED_RUN_WAIT_MS), forceRequested.then(() => undefined)])
            : undefined;
          if (result) {
            log(
              `Run ${run.workflowId} ended "${result.termination}"; its transcript: 'react-agent result ${run.workflowId}'.`,
            );
          } else if (stack.server !== undefined) {
            log(
              `Run ${run.workflowId} has not ended; it is saved in ${stack.server.databaseFile} and goes on when a dev server and a worker run again ('npm run server', 'npm run worker'); then 'react-agent follow ${run.workflowId}'.`,
            );
          } else {
            log(
              `Run ${run.workflowId} has not ended; the Temporal server keeps it and it goes on when a worker runs ('npm run worker'): follow it with ${followHint(run.workflowId)}.`,
            );
          }
          return 1;
        }
        case 'leave-running':
          log(
            `This command cannot follow run ${run.workflowId} (${messageOf(failure)}). The run goes on with its worker; follow it with ${followHint(run.workflowId)}.`,
          );
          return 1;
      }
    }
  }
}
