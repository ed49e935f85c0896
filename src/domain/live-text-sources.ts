/**
 * Where a watcher reads a newly seen model-call attempt's text from (issue 32): the decision of
 * `LiveTextWatcher.observe` (`src/client/live-text.ts`) for an attempt a describe shows and no
 * stream pushes yet. Pure.
 */

/** What the watcher knows of the attempt's worker when a describe shows it. */
export interface CallSourceInput {
  /** The details carry the call's own URL (`liveText.url`). */
  callUrl: boolean;
  /** The details carry its run's URL on that worker (`liveText.runUrl`), and run streams are read. */
  runUrl: boolean;
  /** That run stream now: not opened, being opened, open, or failed before (not tried again). */
  runStream: 'none' | 'connecting' | 'open' | 'failed';
  /** The details carry a tail of the streamed text (the fallback has something to read). */
  tail: boolean;
}

/**
 * - `open-run-stream`: open the worker's run stream; it shows this attempt (with its backlog) and
 *   every later attempt of the run there.
 * - `join-run-stream`: a run stream to that worker is being opened; it shows this attempt when it connects.
 * - `call-url`: read the attempt's own URL — no run URL (an older worker), a run stream that
 *   failed, or one already open that did not show it (the attempt is read once, never twice).
 * - `heartbeat`: no URL; read the details' tail.
 * - `wait`: nothing yet (the first heartbeat not recorded); describe again soon.
 */
export type CallSource = 'open-run-stream' | 'join-run-stream' | 'call-url' | 'heartbeat' | 'wait';

/** How to read an attempt a describe shows that no stream pushes yet. */
export function callSource({ callUrl, runUrl, runStream, tail }: CallSourceInput): CallSource {
  if (runUrl && runStream === 'none') return 'open-run-stream';
  if (runUrl && runStream === 'connecting') return 'join-run-stream';
  if (callUrl) return 'call-url';
  return tail ? 'heartbeat' : 'wait';
}
