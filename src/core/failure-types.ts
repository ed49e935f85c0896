/**
 * Dotted `ApplicationFailure.type` names. Activities classify failures where they happen; the
 * workflow decides on these names only, never on error messages.
 */
export const FailureTypes = {
  /** The model endpoint rejected the request in a way retrying cannot fix (400, 401, 403, 404, 422). */
  modelRequestRejected: 'ReactAgent.Model.RequestRejected',
  /** The request did not fit the model's context window; the workflow goes to the final answer. */
  modelContextLengthExceeded: 'ReactAgent.Model.ContextLengthExceeded',
  /** Rate limited (429); retried after the server's `retry-after`. */
  modelRateLimited: 'ReactAgent.Model.RateLimited',
  /** 408, 409, 5xx; retried with backoff. */
  modelServerError: 'ReactAgent.Model.ServerError',
  /** Connection refused, reset, DNS, timeouts; retried with backoff. */
  modelUnreachable: 'ReactAgent.Model.Unreachable',
  /** The stream ended without a finish reason or the response was malformed; retried. */
  modelBadResponse: 'ReactAgent.Model.BadResponse',
  /**
   * The reply was larger than the worker takes (REACT_AGENT_MODEL_MAX_REPLY_BYTES for its text,
   * REACT_AGENT_MODEL_MAX_LINE_BYTES for one line of the stream); not retried, since a server that
   * sent it once would be paid to send it again.
   */
  modelReplyTooLarge: 'ReactAgent.Model.ReplyTooLarge',
  /** No chunk arrived within the first-token limit (REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS), e.g. a long prompt on a slow server; retried. */
  modelFirstTokenTimeout: 'ReactAgent.Model.FirstTokenTimeout',
  /** A search backend refused the request in a way retrying cannot fix (401/403: key or server settings; 404: wrong address). */
  searchRequestRejected: 'ReactAgent.Search.RequestRejected',
  /** A tool was asked for that this worker does not have. */
  toolNotFound: 'ReactAgent.Tool.NotFound',
  /** The run's input is invalid (empty question, unknown tool, nonsensical limits). */
  invalidRunInput: 'ReactAgent.Run.InvalidInput',
  /** The workflow's own code failed while the run was finishing (workflows/poison-pills.ts); not retried, as it would fail the same way. */
  internalError: 'ReactAgent.Run.InternalError',
  /** A transcript reference did not resolve. */
  transcriptMissing: 'ReactAgent.Transcript.Missing',
  /** A transcript blob's content does not hash to its reference (changed or damaged in the store); not retried. */
  transcriptCorrupt: 'ReactAgent.Transcript.Corrupt',
  /** The transcript store is down, slow or refused this worker's credentials; retried, so the run resumes when it is back. */
  transcriptUnavailable: 'ReactAgent.Transcript.Unavailable',
} as const;

export type FailureType = (typeof FailureTypes)[keyof typeof FailureTypes];
