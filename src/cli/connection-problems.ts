/** gRPC status codes that mean "the server could not be reached or answered in time", not "the request is wrong". */
const CONNECTION_STATUS_CODES = new Set([
  2, // UNKNOWN (what a reset connection often surfaces as)
  4, // DEADLINE_EXCEEDED
  8, // RESOURCE_EXHAUSTED
  10, // ABORTED
  14, // UNAVAILABLE
]);

const CONNECTION_MESSAGE =
  /ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|socket hang up|No connection established|Connection dropped/i;

/**
 * Whether `error` (or an error it wraps as its `cause`) says the Temporal server could not be
 * reached, as opposed to a refused request (not found, invalid, permission denied): a problem
 * that may go away by trying again.
 */
export function isConnectionProblem(error: unknown): boolean {
  for (
    let current: unknown = error, depth = 0;
    current && depth < 5;
    current = (current as { cause?: unknown }).cause, depth += 1
  ) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'number' && CONNECTION_STATUS_CODES.has(code)) return true;
    if (typeof code === 'string' && CONNECTION_MESSAGE.test(code)) return true;
    const message = (current as { message?: unknown }).message;
    if (typeof message === 'string' && CONNECTION_MESSAGE.test(message)) return true;
  }
  return false;
}
