import { ApplicationFailure, isCancellation, upsertSearchAttributes } from '@temporalio/workflow';
import { FailureTypes } from '../../src/core/failure-types';
import type { Ending } from '../../src/core/run-ending';
import { openedRunState } from '../../src/core/run-transitions';
import { REACT_ITERATIONS } from '../../src/core/search-attributes';
import { runActivities } from '../activity-proxies';
import { failureType, rootMessage } from '../failures';
import type { ResearchRun } from '../research-run';

/**
 * Opens the transcript: system prompt and question stored, tools and model settings learned.
 * Once per workflow (a continued run already has it). Returns `cancelled` when the run was
 * cancelled meanwhile, nothing when the loop can start; any other failure fails the run.
 */
export async function openTranscript(run: ResearchRun): Promise<Ending | undefined> {
  if (run.state.setup) return undefined;
  try {
    upsertSearchAttributes([{ key: REACT_ITERATIONS, value: 0 }]);
    const started = await runActivities.startConversation({
      question: run.input.question,
      protocol: run.protocol.name,
      tools: run.input.tools,
      today: new Date(run.state.startedAt).toISOString().slice(0, 10),
      ...(run.input.answerSchema ? { answerSchema: run.input.answerSchema } : {}),
    });
    run.state = openedRunState(run.state, started);
    return undefined;
  } catch (error) {
    if (isCancellation(error)) return { kind: 'cancelled' };
    throw ApplicationFailure.create({ type: failureType(error) ?? FailureTypes.invalidRunInput, message: rootMessage(error), nonRetryable: true });
  }
}
