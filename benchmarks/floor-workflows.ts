import { proxyActivities } from '@temporalio/workflow';
import type { FloorActivities } from './temporal-floor';

const { floorModelCall, floorToolCall } = proxyActivities<FloorActivities>({
  startToCloseTimeout: '2 minutes',
  retry: { maximumAttempts: 1 },
});

/**
 * The Temporal floor of a step (benchmark:overhead): the bare loop's model call and tool call,
 * each as a plain activity, as many times as the run has steps, with nothing else — no transcript
 * store, no token counts, no agent logic. Two workflow tasks and two activities per step, as
 * researchAgent's steps have. Returns the model calls made.
 */
export async function temporalFloor(workflowId: string, calls: number): Promise<number> {
  for (let call = 1; call <= calls; call += 1) {
    const reply = await floorModelCall(workflowId, call);
    if (reply.answered) return call;
    await floorToolCall(reply.query, `call-${call}`);
  }
  throw new Error(`temporalFloor: no answer after ${calls} calls`);
}
