import { ApplicationFailure, isCancellation, patched, upsertSearchAttributes } from '@temporalio/workflow';
import { learnedContextWindow } from '../../src/core/context-window';
import { FailureTypes } from '../../src/core/failure-types';
import type { Ending } from '../../src/core/run-ending';
import { openedRunState } from '../../src/core/run-transitions';
import { REACT_ITERATIONS } from '../../src/core/search-attributes';
import type { StartConversationInput } from '../../src/core/activity-contracts';
import { localRunActivities, runActivities } from '../activity-proxies';
import { lightBookkeeping } from '../light-bookkeeping';
import { failureType, rootMessage } from '../failures';
import { LoopPatches } from '../patches';
import { recordRunOpened } from '../run-search-attributes';
import type { ResearchRun } from '../research-run';
import { mayDelegate } from '../../src/core/sub-runs/sub-run-options';

/**
 * Opens the transcript: system prompt and question stored, tools (stored by reference since
 * `tool-specs-by-reference`) and model settings learned, and the model server's context window
 * asked for — in the same local activity since `light-bookkeeping` (issue 34), in an activity of
 * its own next before. Once per workflow (a continued run already has it). Returns `cancelled`
 * when the run was cancelled meanwhile, nothing when the loop can start; any other failure of the
 * transcript fails the run.
 */
export async function openTranscript(run: ResearchRun): Promise<Ending | undefined> {
  if (run.state.setup) return undefined;
  const light = lightBookkeeping();
  try {
    // A light run's first upsert waits for the transcript: one upsert then says all (recordRunOpened).
    if (!light) upsertSearchAttributes([{ key: REACT_ITERATIONS, value: 0 }]);
    const storeToolSpecs = light || patched(LoopPatches.toolSpecsByReference);
    const start = light ? localRunActivities.startConversation : runActivities.startConversation;
    const started = await start({
      question: run.input.question,
      protocol: run.protocol.name,
      tools: run.input.tools,
      today: new Date(run.state.startedAt).toISOString().slice(0, 10),
      ...(run.input.answerSchema ? { answerSchema: run.input.answerSchema } : {}),
      // The tool list by reference (issue 18): history keeps names, scheduling and approval flags.
      ...(storeToolSpecs ? { storeToolSpecs } : {}),
      // Sub-runs (issue 30): the `delegate` tool, offered while the tree may grow below this run.
      ...(mayDelegate(run.tree) ? { delegate: { maxParallel: run.tree.maxParallel } } : {}),
      // The context window learned in the same activity (issue 34), from the worker's cache.
      ...(light ? { contextWindow: contextWindowAsked(run) } : {}),
    });
    run.state = openedRunState(run.state, started);
    if (started.contextWindow) run.state = learnedContextWindow(run.state, started.contextWindow);
  } catch (error) {
    if (isCancellation(error)) return { kind: 'cancelled' };
    throw ApplicationFailure.create({
      type: failureType(error) ?? FailureTypes.invalidRunInput,
      message: rootMessage(error),
      nonRetryable: true,
    });
  }
  recordRunOpened(run);
  if (light) return undefined;
  return patched(LoopPatches.contextWindow) ? learnContextWindow(run) : undefined;
}

/** The run's own model and reply limit, if it sets them (else the worker's defaults apply), for the window's question. */
function contextWindowAsked(run: ResearchRun): StartConversationInput['contextWindow'] {
  const { model, maxOutputTokens } = run.input.model ?? {};
  return { ...(model !== undefined ? { model } : {}), ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}) };
}

/**
 * Asks the model server for its context window (src/core/context-window.ts); the run's context
 * budget follows it. A server that does not say, or an activity that fails, leaves it unknown:
 * the run keeps `limits.maxContextTokens` alone.
 */
async function learnContextWindow(run: ResearchRun): Promise<Ending | undefined> {
  try {
    const { model, maxOutputTokens } = run.modelOptions();
    const learned = await runActivities.learnContextWindow({
      model,
      ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
    });
    run.state = learnedContextWindow(run.state, learned);
  } catch (error) {
    if (isCancellation(error)) return { kind: 'cancelled' };
  }
  return undefined;
}
