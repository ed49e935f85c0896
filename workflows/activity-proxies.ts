import { proxyActivities, proxyLocalActivities, type ActivityOptions } from '@temporalio/workflow';
import type { AgentActivities } from '../activities';
import type {
  CallModelInput,
  CallModelOutput,
  ToolActivityInput,
  ToolActivityOutput,
} from '../src/core/activity-contracts';

/**
 * The activities a research run schedules, typed, each proxy built once. Model and tool calls
 * take their options per call (from the settings the run recorded when it opened its
 * transcript, and each tool's own); their proxies' options only satisfy `proxyActivities`, and
 * are always overridden, since every per-call option set has its own start-to-close timeout.
 */

/** Opening and closing the transcript: quick store operations, so a lost attempt is retried soon. */
const bookkeeping = proxyActivities<Pick<AgentActivities, 'startConversation' | 'finishTranscript'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/**
 * The same as local activities (issue 34, marker `light-bookkeeping`): run by the worker that runs
 * the workflow task, within it, their results recorded as one marker each — no activity task to
 * schedule, match and complete, no workflow task of their own. A worker lost meanwhile loses the
 * workflow task, and the next one runs them again (they store content-addressed blobs: the same
 * again). `startConversation` waits up to 5 s for the model server's window the first time a
 * worker asks it for a model.
 */
const localBookkeeping = proxyLocalActivities<Pick<AgentActivities, 'startConversation' | 'finishTranscript'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 10 },
});

/** Compression may ask the model for a summary; it heartbeats, so a lost attempt shows within 20 s. */
const compression = proxyActivities<Pick<AgentActivities, 'compressContext'>>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '20 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '30 seconds', maximumAttempts: 5 },
});

/** Asking the model server for its context window: quick, and a run goes on without it (the window stays unknown). */
const contextWindow = proxyActivities<Pick<AgentActivities, 'learnContextWindow'>>({
  startToCloseTimeout: '30 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '5 seconds', maximumAttempts: 2 },
});

const OPTIONS_GIVEN_PER_CALL: ActivityOptions = { startToCloseTimeout: '1 minute' };

const model = proxyActivities<Pick<AgentActivities, 'callModel'>>(OPTIONS_GIVEN_PER_CALL);

/** A tool activity: registered by the worker under the tool's name (activities/index.ts). */
export type ToolActivity = (input: ToolActivityInput) => Promise<ToolActivityOutput>;

/** Tool activities by tool name; the proxy gives one for any name, scheduled as an activity of that type. */
const tools = proxyActivities<{ [tool: string]: ToolActivity }>(OPTIONS_GIVEN_PER_CALL);

/** The bookkeeping of a run with light bookkeeping (workflows/light-bookkeeping.ts). */
export const localRunActivities = {
  startConversation: localBookkeeping.startConversation,
  finishTranscript: localBookkeeping.finishTranscript,
};

export const runActivities = {
  startConversation: bookkeeping.startConversation,
  finishTranscript: bookkeeping.finishTranscript,
  compressContext: compression.compressContext,
  learnContextWindow: contextWindow.learnContextWindow,
  callModel: (options: ActivityOptions, input: CallModelInput): Promise<CallModelOutput> =>
    model.callModel.executeWithOptions(options, [input]),
  runTool: (tool: string, options: ActivityOptions, input: ToolActivityInput): Promise<ToolActivityOutput> =>
    (tools[tool] as NonNullable<(typeof tools)[string]>).executeWithOptions(options, [input]),
};
