import { isConnectionProblem } from './connection-problems';
import type { FollowProblem } from './follow-run';

/**
 * How `run` looks after the run it started when the CLI itself has trouble (a lost connection,
 * a bug in the display): the run must never be left RUNNING without the worker and dev server
 * that `run` started and is about to stop.
 */
export interface StackState {
  /** `run` started the worker. */
  startedWorker: boolean;
  /** `run` started the dev server. */
  startedServer: boolean;
  /** The dev server `run` started has exited on its own (nothing left to reconnect to). */
  serverExited: boolean;
  /** The user asked twice to stop: stop waiting. */
  forced: boolean;
}

/**
 * Whether `run` keeps trying to read its run's history after `problem`. A lost connection is
 * retried for as long as the run depends on what `run` started (its worker or server); with
 * an external worker and server it gives up after 10 attempts in a row, as `follow` does. Anything
 * that is not a connection problem is not retried here (see {@link responseToFollowFailure}).
 */
export function shouldKeepFollowing(problem: FollowProblem, stack: StackState): boolean {
  if (stack.forced || stack.serverExited || !isConnectionProblem(problem.error)) return false;
  if (stack.startedWorker || stack.startedServer) return true;
  return problem.failedAttempts <= 10;
}

/** What `run` does when it can no longer follow its run, and the run has not ended. */
export type FollowFailureResponse =
  /** Keep the stack up and wait for the run's result without printing progress. */
  | 'wait-quietly'
  /** Cancel the run, wait until it has ended, then stop what was started. */
  | 'cancel-and-wait'
  /** The dev server `run` started is gone; the run is saved in its database: say how to resume it. */
  | 'report-saved'
  /** Nothing `run` started is needed by the run: leave it running and say how to follow it. */
  | 'leave-running';

/**
 * Decides what `run` does after following failed (not because the run ended). First it keeps
 * waiting quietly (a display failure is no reason to lose a long run); if that fails too and the
 * run depends on what `run` started, it cancels the run and waits for it to end before stopping
 * anything.
 */
export function responseToFollowFailure(
  failure: { error: unknown; waitedQuietly: boolean },
  stack: StackState,
): FollowFailureResponse {
  if (stack.serverExited) return 'report-saved';
  if (!failure.waitedQuietly && !isConnectionProblem(failure.error)) return 'wait-quietly';
  if (stack.startedWorker || stack.startedServer) return 'cancel-and-wait';
  return 'leave-running';
}
