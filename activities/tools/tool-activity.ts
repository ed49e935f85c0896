import { Context } from '@temporalio/activity';
import { setTimeout as delay } from 'node:timers/promises';
import { isStoreUnavailable } from '../transcript-failures';
import type { ToolActivityInput, ToolActivityOutput } from '../../src/core/activity-contracts';
import { preview } from '../../src/core/text';
import type { TokenCounter } from '../token-counter';
import type { TranscriptStore } from '../../src/storage/transcript-store';
import { SecretRedactor } from '../../src/domain/secret-redaction';
import { ToolInputError, type ToolDefinition } from './tool-definition';
import { validateArguments } from './validate-arguments';
import { heartbeatIntervalFor, keepHeartbeating } from '../heartbeats';
import { runWorkflowId } from '../run-workflow-id';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';

/** The heartbeat timeout assumed when an attempt has none, for the timer heartbeats' interval. */
const DEFAULT_TOOL_HEARTBEAT_TIMEOUT_MS = 30_000;

/** How long a cancelled tool's handler gets to stop before the activity reports the cancellation anyway. */
export const CANCELLATION_GRACE_MS = 5_000;

/** Pauses between tries to store a tool's output while the transcript store is down (the last one repeats). */
export const STORE_RETRY_PAUSES_MS: readonly number[] = [500, 1_000, 2_000, 5_000];

/**
 * Stores a tool's output, trying again while the transcript store is down, until the attempt's
 * start-to-close timeout would pass or the activity is cancelled. The tool has answered: an outage
 * of the store must not spend the tool's own attempts (a few seconds' worth), or a store down for
 * longer turns the answer into an error the model reads. While it waits, `waiting` gets the
 * store's error (the heartbeats carry it, so the Web UI and `describe` show what the call waits for).
 */
async function putWhileAttemptLasts(
  put: () => Promise<string>,
  context: Context,
  waiting: (problem: string | undefined) => void,
): Promise<string> {
  const deadline = context.info.currentAttemptScheduledTimestampMs + context.info.startToCloseTimeoutMs;
  for (let tries = 0; ; tries += 1) {
    try {
      const reference = await put();
      waiting(undefined);
      return reference;
    } catch (error) {
      const pause = STORE_RETRY_PAUSES_MS[Math.min(tries, STORE_RETRY_PAUSES_MS.length - 1)] as number;
      if (!isStoreUnavailable(error) || context.cancellationSignal.aborted || Date.now() + pause >= deadline)
        throw error;
      waiting((error as Error).message);
      await delay(pause, undefined, { signal: context.cancellationSignal }).catch(() => Promise.reject(error));
    }
  }
}

export interface ToolActivityDependencies {
  store: TranscriptStore;
  tokenCounter: TokenCounter;
  /** The worker's secrets, redacted from every output before it is stored or shown; default: URL credentials only. */
  redactor?: SecretRedactor;
}

/** Cuts an output to what the model sees, with a note that says where the rest is. */
export function truncateForModel(output: string, maxCharacters: number, fullReference: string): string {
  if (output.length <= maxCharacters) return output;
  const note = `\n\n[Output truncated: showing ${maxCharacters.toLocaleString('en-US')} of ${output.length.toLocaleString('en-US')} characters. The whole output is kept in the transcript store as ${fullReference}.]`;
  return output.slice(0, maxCharacters) + note;
}

/**
 * Wraps a tool's handler as an activity: checks the arguments, heartbeats while it runs, stops
 * when cancelled, stores the whole output (secrets redacted; waiting out a transcript store that is
 * down, within the attempt) and returns a reference to what the model sees.
 */
export function createToolActivity(tool: ToolDefinition, dependencies: ToolActivityDependencies) {
  const { store, tokenCounter } = dependencies;
  const redactor = dependencies.redactor ?? SecretRedactor.none;

  const activity = async (input: ToolActivityInput): Promise<ToolActivityOutput> => {
    const context = Context.current();
    let storeProblem: string | undefined;
    // Once the heartbeats run (the tool ran), storing waits out a store that is down; before, it tries once.
    const finish = async (output: string, isError: boolean, heartbeating = true): Promise<ToolActivityOutput> => {
      const text = redactor.redact(output);
      const put = (part: string) =>
        heartbeating
          ? putWhileAttemptLasts(
              () => store.putText(part),
              context,
              (problem) => (storeProblem = problem),
            )
          : store.putText(part);
      const fullReference = await put(text);
      const forModel = truncateForModel(
        text,
        input.maxObservationCharacters ?? DEFAULT_LIMITS.maxObservationCharacters,
        fullReference,
      );
      const observationReference = forModel === text ? fullReference : await put(forModel);
      return {
        observation: { ref: observationReference, preview: preview(forModel), characters: forModel.length },
        ...(forModel === text
          ? {}
          : { fullOutput: { ref: fullReference, preview: preview(text), characters: text.length } }),
        isError,
        tokens: tokenCounter.count(forModel),
      };
    };

    const problems = validateArguments(tool.parameters, input.arguments ?? {});
    if (problems.length) {
      return finish(`Error: invalid arguments for tool "${tool.name}": ${problems.join('; ')}.`, true, false);
    }

    // What the tool recorded of its attempt rides on every timer heartbeat, so a retry can read it;
    // so does the store's error while the output waits for the store.
    let attemptState: Record<string, unknown> = {};
    const stopHeartbeats = keepHeartbeating(
      () =>
        context.heartbeat({
          callId: input.callId,
          running: true,
          ...attemptState,
          ...(storeProblem ? { waitingForStore: storeProblem } : {}),
        }),
      heartbeatIntervalFor(context.info.heartbeatTimeoutMs ?? DEFAULT_TOOL_HEARTBEAT_TIMEOUT_MS),
    );
    // No heartbeat at the start: the first timer tick comes within a third of the heartbeat
    // timeout, and a call that ends before it costs Temporal no heartbeat write (issue 34).
    const running = tool.run(input.arguments ?? {}, {
      signal: context.cancellationSignal,
      heartbeat: (details) => context.heartbeat(details),
      recordAttemptState: (state) => {
        attemptState = { ...state };
        context.heartbeat({ callId: input.callId, running: true, ...attemptState });
      },
      workflowId: runWorkflowId(input.workflowId),
      callId: input.callId,
      attempt: context.info.attempt,
      ...(context.info.attempt > 1 && context.info.heartbeatDetails !== undefined
        ? { previousAttemptDetails: context.info.heartbeatDetails }
        : {}),
    });
    try {
      const output = await Promise.race([running, context.cancelled]);
      // A handler may answer the abort by returning; the activity was still cancelled.
      if (context.cancellationSignal.aborted) throw context.cancellationSignal.reason;
      return await finish(typeof output === 'string' ? output : JSON.stringify(output), false);
    } catch (error) {
      if (context.cancellationSignal.aborted) {
        // Give the handler time to honour the abort, so "cancelled" means the tool has stopped.
        await Promise.race([
          running.then(
            () => undefined,
            () => undefined,
          ),
          delay(CANCELLATION_GRACE_MS),
        ]);
        throw context.cancellationSignal.reason ?? error;
      }
      if (error instanceof ToolInputError) return finish(`Error: ${error.message}`, true);
      throw error;
    } finally {
      stopHeartbeats();
    }
  };
  Object.defineProperty(activity, 'name', { value: tool.name });
  return activity;
}
