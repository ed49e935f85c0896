import { ActivityCancellationType, type ActivityOptions } from '@temporalio/workflow';
import type { ModelActivitySettings } from '../src/core/activity-contracts';
import { preview } from '../src/core/text';
import type { ToolActivitySettings } from '../src/core/tool-spec';

/** How model calls are scheduled, from the worker's settings recorded when the run started. */
export function modelActivityOptions(settings: ModelActivitySettings): ActivityOptions {
  return {
    startToCloseTimeout: `${settings.startToCloseSeconds} seconds`,
    heartbeatTimeout: `${settings.heartbeatSeconds} seconds`,
    // The reply of a cancelled call is thrown away: no need to wait for the worker to confirm.
    cancellationType: ActivityCancellationType.TRY_CANCEL,
    retry: {
      initialInterval: '1 second',
      backoffCoefficient: 2,
      maximumInterval: '60 seconds',
      maximumAttempts: settings.maxAttempts,
    },
    ...(settings.taskQueue ? { taskQueue: settings.taskQueue } : {}),
  };
}

/** How one tool call is scheduled, from its tool's settings; the summary shows its arguments in the Web UI. */
export function toolActivityOptions(settings: ToolActivitySettings, args: Record<string, unknown>): ActivityOptions {
  return {
    startToCloseTimeout: `${settings.startToCloseSeconds} seconds`,
    heartbeatTimeout: `${settings.heartbeatSeconds} seconds`,
    // Wait until the worker confirms the tool stopped, so a cancelled run never leaves a tool running.
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      initialInterval: `${settings.initialRetrySeconds} seconds`,
      backoffCoefficient: 2,
      maximumAttempts: settings.maxAttempts,
    },
    ...(settings.taskQueue ? { taskQueue: settings.taskQueue } : {}),
    // The Web UI shows the activity type (the tool name) beside this, so the summary is the arguments.
    summary: preview(JSON.stringify(args), 120),
  };
}

/**
 * How the final answer call is scheduled: as a model call, with its own start-to-close timeout
 * (`loop.finalAnswerTimeoutSeconds`) and at most 2 attempts, the rest of the retry policy kept.
 */
export function finalAnswerActivityOptions(model: ActivityOptions, timeoutSeconds: number): ActivityOptions {
  return { ...model, startToCloseTimeout: `${timeoutSeconds} seconds`, retry: { ...model.retry, maximumAttempts: 2 } };
}
