import type { Client } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';

/** One event of a run's history. */
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** What a history is read with: a `Client`, or a handle's `WorkflowClient`. */
export type HistoryReader = Pick<Client, 'workflowService'> & { options: { namespace: string } };

/**
 * Streams a run's history events as they are written (long polls: one request outstanding, which
 * the server answers when events come), until the run closes. Shared by `react-agent follow` and
 * the live text iterator.
 */
export async function* runHistory(
  client: HistoryReader,
  workflowId: string,
  runId?: string,
): AsyncGenerator<HistoryEvent> {
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    const response = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      waitNewEvent: true,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const event of response.history?.events ?? []) yield event;
    if (!response.nextPageToken || response.nextPageToken.length === 0) return;
    nextPageToken = response.nextPageToken;
  }
}
