import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';

/** One event of a run's history. */
export type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** What a history is read with: a `Client`, or a handle's `WorkflowClient`. */
export type HistoryReader = Pick<Client, 'workflowService'> & { options: { namespace: string } };

/** Settings of {@link runHistory}. */
export interface RunHistoryOptions {
  /**
   * How long to wait, after a long poll answered with a few new events, before asking again, so
   * the events of one workflow task (a run writes them in bursts) come in one answer instead of
   * one poll each. It delays what is read by at most this much. Default 0 (ask again at once).
   */
  pauseAfterEventsMs?: number;
  /** Checked before each request after the first: true ends the stream there (without the run's close). Default never. */
  stopBefore?: () => boolean;
  /**
   * Only the run's close event: each long poll is answered only when the run closes (or empty,
   * after the server's long-poll timeout, and asked again). Default false (every event).
   */
  closeEventOnly?: boolean;
}

/** A page this short was a long poll's answer (new events), not a page of a history being caught up with. */
const FEW_EVENTS = 100;

/**
 * Streams a run's history events as they are written (long polls: one request outstanding, which
 * the server answers when events come), until the run closes. Shared by `react-agent follow` and
 * the live text iterator.
 */
export async function* runHistory(
  client: HistoryReader,
  workflowId: string,
  runId?: string,
  options: RunHistoryOptions = {},
): AsyncGenerator<HistoryEvent> {
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    const response = await client.workflowService.getWorkflowExecutionHistory({
      namespace: client.options.namespace,
      execution: { workflowId, ...(runId ? { runId } : {}) },
      waitNewEvent: true,
      ...(options.closeEventOnly
        ? {
            historyEventFilterType: temporal.api.enums.v1.HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT,
            skipArchival: true,
          }
        : {}),
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    const events = response.history?.events ?? [];
    for (const event of events) yield event;
    if (!response.nextPageToken || response.nextPageToken.length === 0) return;
    nextPageToken = response.nextPageToken;
    const pause = options.pauseAfterEventsMs ?? 0;
    if (pause > 0 && events.length > 0 && events.length < FEW_EVENTS)
      await new Promise((resolve) => setTimeout(resolve, pause));
    if (options.stopBefore?.()) return;
  }
}
