import type { Client } from '@temporalio/client';
import { formatUsd } from '../core/cost-figures';
import { setTimeout as delay } from 'node:timers/promises';
import type { ResearchRunResult } from '../core/run-result';
import { isConnectionProblem } from './connection-problems';
import { progressLines } from './progress-lines';
import { runHistory } from '../client/run-history';
import { RunEventReader, type HistoryEvent, type RunEvent } from './run-events';
import { isSubRunEvent } from './sub-run-events';
import { StreamedTextPrinter, watchStreamingCalls } from './streamed-text';
import { SubRunFollowers, type FollowedTree } from './sub-run-follow';
import { subRunSummaryLines } from './sub-run-summary';

/** The run closed without a result (failed, terminated, timed out, cancelled by force). */
export class RunEndedWithoutResultError extends Error {
  override readonly name = 'RunEndedWithoutResultError';
  constructor(
    readonly workflowId: string,
    /** How it closed, e.g. 'terminated'. */
    readonly status: string,
  ) {
    super(`Run ${workflowId} ended without a result (${status}).`);
  }
}

/** A failed attempt to read a run's history, as {@link FollowRunOptions.keepTrying} sees it. */
export interface FollowProblem {
  error: unknown;
  /** Attempts that failed in a row, this one included (1 for the first). */
  failedAttempts: number;
}

export interface FollowRunOptions {
  /**
   * Whether to try reading the history again after `problem`; the reader resumes after the last
   * event it saw. Default: retry connection problems ({@link isConnectionProblem}) up to 10
   * times in a row, give up on anything else.
   */
  keepTrying?: (problem: FollowProblem) => boolean;
  /** Wait between attempts, in ms. Default 2,000. */
  retryDelayMs?: number;
  /**
   * How often to look at a streaming model call's text in its heartbeat details, in ms, while one
   * is open and its text is not pushed by the worker; 0 never looks (no streamed text at all).
   * Default 1,000.
   */
  streamPollMs?: number;
  /**
   * Whether to follow the run's sub-runs (issue 30) too, as they start, their lines prefixed with
   * their label (`  [sub-2-1] …`), their streamed text too (`  [sub-2-1]   ┆ …`, as `streamPollMs`
   * says), and each one's end said. Default true.
   */
  subRuns?: boolean;
}

const keepTryingConnectionProblems = ({ error, failedAttempts }: FollowProblem) =>
  isConnectionProblem(error) && failedAttempts <= 10;

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split('\n')[0] as string;

/** The id of the workflow's latest run, so a resumed read continues the same run. */
async function latestRunId(client: Client, workflowId: string): Promise<string> {
  const description = await client.workflowService.describeWorkflowExecution({
    namespace: client.options.namespace,
    execution: { workflowId },
  });
  return description.workflowExecutionInfo?.execution?.runId ?? '';
}

/** Reads one history event; a reader bug shows as a line instead of stopping the command. */
function readSafely(reader: RunEventReader, historyEvent: HistoryEvent, print: (line: string) => void): RunEvent[] {
  try {
    return reader.read(historyEvent);
  } catch (error) {
    print(`  (history event ${String(historyEvent.eventId)} not shown: ${messageOf(error)})`);
    return [];
  }
}

/**
 * Prints a run's steps from its history as they happen (model calls with thoughts and tool
 * calls, compressions, tool results, failures) and resolves to its result. Works for a finished
 * run too. An event it does not know is shown generically, never thrown on; a lost connection
 * is retried (see {@link FollowRunOptions.keepTrying}), resuming after the last event shown.
 * While a model call streams, its text is printed as it comes (lines starting `┆`): pushed by the
 * worker that runs the call when it serves live text and can be reached (issue 32), else from
 * the call's heartbeat details, which the run is described for about every second; a line says
 * which.
 * @throws RunEndedWithoutResultError when the run closed without a result; the last read error when it gives up.
 */
export async function followRun(
  client: Client,
  workflowId: string,
  print: (line: string) => void,
  options: FollowRunOptions = {},
): Promise<ResearchRunResult> {
  return followOne(client, workflowId, print, options, { rootId: workflowId, print });
}

/** {@link followRun} of one run of the tree `follow` was asked for (the root itself, or one of its sub-runs). */
async function followOne(
  client: Client,
  workflowId: string,
  print: (line: string) => void,
  options: FollowRunOptions,
  tree: FollowedTree,
): Promise<ResearchRunResult> {
  const keepTrying = options.keepTrying ?? keepTryingConnectionProblems;
  const retryDelayMs = options.retryDelayMs ?? 2_000;
  const streamPollMs = options.streamPollMs ?? 1_000;
  let runId: string | undefined;
  let failedAttempts = 0;
  // Text the worker pushes between two looks at the run is printed as it comes.
  const newPrinter = () => new StreamedTextPrinter({ print });
  let printer = newPrinter();
  const subRuns =
    options.subRuns === false
      ? undefined
      : new SubRunFollowers(
          tree,
          (subRunId, subRunPrint) => followOne(client, subRunId, subRunPrint, options, tree),
          resultHeadline,
        );
  const stopWatching = new AbortController();
  const watching =
    streamPollMs > 0
      ? watchStreamingCalls(
          client,
          workflowId,
          () => runId,
          () => printer,
          print,
          stopWatching.signal,
          streamPollMs,
        )
      : Promise.resolve();
  try {
    return await followRuns();
  } finally {
    stopWatching.abort();
    printer.close();
    // Not awaited: a describe in flight ends with the connection the command closes next.
    void watching;
  }

  async function followRuns(): Promise<ResearchRunResult> {
    // Each continue-as-new starts a new run under the same workflow id; follow the chain.
    for (;;) {
      const reader = new RunEventReader();
      printer.close();
      printer = newPrinter();
      let lastEventId = 0;
      let next: string | undefined;
      for (;;) {
        try {
          runId ||= await latestRunId(client, workflowId);
          for await (const historyEvent of runHistory(client, workflowId, runId || undefined)) {
            const eventId = Number(historyEvent.eventId ?? 0);
            if (eventId !== 0 && eventId <= lastEventId) continue;
            lastEventId = eventId;
            if (failedAttempts > 0) {
              print('  (connected again)');
              failedAttempts = 0;
            }
            for (const line of printer.read(historyEvent)) print(line);
            for (const event of readSafely(reader, historyEvent, print)) {
              for (const line of progressLines(event)) print(line);
              if (subRuns && isSubRunEvent(event)) await subRuns.read(event);
              if (event.kind === 'run_completed' || event.kind === 'run_closed') await subRuns?.settled();
              if (event.kind === 'run_completed') return event.result;
              if (event.kind === 'run_closed') throw new RunEndedWithoutResultError(workflowId, event.status);
              if (event.kind === 'continued_as_new') next = event.newRunId;
            }
          }
          break;
        } catch (error) {
          if (error instanceof RunEndedWithoutResultError) throw error;
          failedAttempts += 1;
          if (!keepTrying({ error, failedAttempts })) throw error;
          if (failedAttempts === 1)
            print(
              `  (lost the connection to Temporal: ${messageOf(error)}; trying again every ${retryDelayMs / 1000} s)`,
            );
          await delay(retryDelayMs);
        }
      }
      if (!next) break;
      runId = next;
    }
    return (await client.workflow.getHandle(workflowId).result()) as ResearchRunResult;
  }
}

/** The share of a run's prompt tokens the server read from its cache (`38%`), when it reported any (issue 31). */
export function cacheHitRate(usage: ResearchRunResult['usage'] | undefined): string | undefined {
  const cached = usage?.cachedPromptTokens;
  if (typeof cached !== 'number' || cached <= 0 || !(usage!.promptTokens > 0)) return undefined;
  return `${Math.round((100 * cached) / usage!.promptTokens)}%`;
}

/**
 * What prompt caching saved a run (`, saving $0.27`; `, costing $0.01 more` when its cache writes
 * cost more than its reads saved), when its model had a price and the server reported cache tokens.
 */
export function cacheSaving(usage: ResearchRunResult['usage'] | undefined): string {
  const saved = usage?.cacheSavedUsd;
  if (typeof saved !== 'number' || !Number.isFinite(saved)) return '';
  return saved < 0 ? `, costing ${formatUsd(-saved)} more` : `, saving ${formatUsd(saved)}`;
}

/** How a run ended, in one line: `answer after 3 model calls, 2 tool calls, 8.1 s, 4,210 tokens, $0.031, 93% of the prompt tokens read from the cache, saving $0.27`. */
export function resultHeadline(result: ResearchRunResult): string {
  const seconds = typeof result.durationMs === 'number' ? (result.durationMs / 1000).toFixed(1) : '?';
  const tokens = typeof result.usage?.totalTokens === 'number' ? result.usage.totalTokens.toLocaleString('en-US') : '?';
  const cost = typeof result.usage?.costUsd === 'number' ? `, ${formatUsd(result.usage.costUsd)}` : '';
  const cache = cacheHitRate(result.usage);
  const saving = cacheSaving(result.usage);
  const cached =
    cache === undefined
      ? saving && `, prompt caching${saving.slice(1)}`
      : `, ${cache} of the prompt tokens read from the cache${saving}`;
  return `${result.termination} after ${result.iterations ?? '?'} model calls, ${result.toolCalls ?? '?'} tool calls, ${seconds} s, ${tokens} tokens${cost}${cached}`;
}

/** The closing lines `run` and `follow` print: how the run ended, its sub-runs (if it delegated), its answer. */
export function describeResult(result: ResearchRunResult): string {
  const error = result.error ? `\nError: ${result.error}` : '';
  const subRuns = subRunSummaryLines(result.subRuns)
    .map((line) => `\n${line}`)
    .join('');
  return `Ended: ${resultHeadline(result)}.${error}${subRuns}\n\nAnswer:\n${result.prediction}`;
}
