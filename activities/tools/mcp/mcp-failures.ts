import { ApplicationFailure } from '@temporalio/common';

/**
 * Dotted `ApplicationFailure.type`s of MCP tool calls. The workflow decides on none of them (a
 * tool's failure becomes an observation once its attempts are spent); they say in the Web UI and
 * in history why a call failed and whether it was retried.
 */
export const McpFailureTypes = {
  /** The request never reached the server (not connected, restarting, connection refused, session gone): retried. */
  unavailable: 'ReactAgent.Mcp.Unavailable',
  /** The request may have reached the server and then the connection broke: retried only for tools marked idempotent. */
  connectionLost: 'ReactAgent.Mcp.ConnectionLost',
  /** The server did not answer within the server's `timeoutSeconds` (it was told to cancel): retried only for idempotent tools. */
  timeout: 'ReactAgent.Mcp.Timeout',
  /** A retry of a call whose previous attempt may have reached the server, for a tool not marked idempotent: not repeated. */
  notRepeated: 'ReactAgent.Mcp.NotRepeated',
} as const;

/** Whether the request left this worker, as far as the connection could tell. */
export type Delivery = 'not-sent' | 'sent';

/** An error with what the connection knows of the request's fate. */
export class McpCallError extends Error {
  override readonly name = 'McpCallError';
  constructor(
    message: string,
    readonly delivery: Delivery,
    readonly kind: 'unavailable' | 'connection-lost' | 'timeout',
  ) {
    super(message);
  }
}

/** Network errors after which the request cannot have reached the server. */
const NOT_CONNECTED_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ERR_INVALID_URL',
]);

function causeCode(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current && typeof current === 'object'; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Whether a failed `send` of a request means the server never got it: a stdio server that is not
 * running (the write failed), a connection refused or a name that does not resolve, or an HTTP
 * answer that says the request was not run (404: the session is unknown, e.g. the server
 * restarted; 503: not serving).
 */
export function sendFailedBeforeServer(error: unknown, transport: 'stdio' | 'http'): boolean {
  if (transport === 'stdio') return true;
  const code = causeCode(error);
  if (code !== undefined && NOT_CONNECTED_CODES.has(code)) return true;
  const status = (error as { code?: unknown }).code;
  if (typeof status === 'number' && (status === 404 || status === 503)) return true;
  const message = error instanceof Error ? error.message : String(error);
  return /\bNot connected\b|HTTP 404\b|HTTP 503\b/.test(message);
}

/**
 * The failure a call's error becomes: retryable when the request never reached the server, or
 * when the tool is marked idempotent; otherwise not, so a call that may have had effects is not
 * made twice (the model sees the failure as its observation).
 */
export function callFailure(
  error: McpCallError,
  context: { server: string; tool: string; idempotent: boolean },
): ApplicationFailure {
  const type =
    error.kind === 'unavailable'
      ? McpFailureTypes.unavailable
      : error.kind === 'timeout'
        ? McpFailureTypes.timeout
        : McpFailureTypes.connectionLost;
  const retryable = error.delivery === 'not-sent' || context.idempotent;
  const note =
    error.delivery === 'not-sent'
      ? ' The request did not reach the server; it is retried.'
      : retryable
        ? ` The tool is marked idempotent; it is retried.`
        : ` The request may have reached the server, so it is not retried (mark the tool in "idempotentTools" if calling it twice is safe).`;
  return ApplicationFailure.create({ type, message: `${error.message}${note}`, nonRetryable: !retryable });
}
