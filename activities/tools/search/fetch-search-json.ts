import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../../../src/core/failure-types';

/** How to call a web search API and what to say when it refuses. */
export interface SearchRequest {
  /** Shown in messages, e.g. "SearXNG". */
  backendName: string;
  url: string;
  init: RequestInit;
  /** Cancels the request (the tool context's signal). */
  signal: AbortSignal;
  /** The request is abandoned (and retried by Temporal) after this long. */
  timeoutMs: number;
  /** What to check when the server answers 401 or 403, naming the environment variable. */
  rejectedAdvice: string;
  /** What to check when the server answers 404. */
  notFoundAdvice: string;
}

/** The server's error text, shortened for a message. */
async function responseExcerpt(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  const compact = text.replace(/\s+/g, ' ').trim();
  return compact ? `: ${compact.slice(0, 200)}${compact.length > 200 ? '…' : ''}` : '';
}

/**
 * Calls a search API and returns its JSON body. Failures that retrying can fix (network errors,
 * timeouts, 408, 429, 5xx, a malformed body) are thrown as plain errors, which Temporal retries;
 * 401/403 (a rejected key or a server that forbids the request), 404 and other 4xx are thrown
 * as non-retryable `ApplicationFailure`s whose message says which setting to check.
 */
export async function fetchSearchJson(request: SearchRequest): Promise<unknown> {
  const { backendName, url } = request;
  const displayUrl = url.replace(/([?&](?:api_?key|key|token)=)[^&]*/gi, '$1…');
  let response: Response;
  try {
    response = await fetch(url, {
      ...request.init,
      signal: AbortSignal.any([request.signal, AbortSignal.timeout(request.timeoutMs)]),
    });
  } catch (error) {
    if (request.signal.aborted) throw error;
    const reason = isTimeoutError(error)
      ? `no answer within ${request.timeoutMs / 1000} s`
      : describeNetworkError(error);
    throw new Error(`${backendName} could not be reached at ${displayUrl} (${reason}).`);
  }
  if (response.status === 401 || response.status === 403) {
    throw ApplicationFailure.create({
      type: FailureTypes.searchRequestRejected,
      message: `${backendName} refused the search with ${response.status}${await responseExcerpt(response)}. ${request.rejectedAdvice}`,
      nonRetryable: true,
    });
  }
  if (response.status === 408 || response.status === 429 || response.status >= 500) {
    throw new Error(
      `${backendName} answered ${response.status} ${response.statusText}${await responseExcerpt(response)}; retrying.`,
    );
  }
  if (!response.ok) {
    const advice = response.status === 404 ? ` ${request.notFoundAdvice}` : '';
    throw ApplicationFailure.create({
      type: FailureTypes.searchRequestRejected,
      message: `${backendName} rejected the search with ${response.status}${await responseExcerpt(response)}.${advice}`,
      nonRetryable: true,
    });
  }
  const text = await response.text();
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new Error(
      `${backendName} answered with something that is not JSON (${text.slice(0, 80).replace(/\s+/g, ' ')}…).`,
    );
  }
}

function describeNetworkError(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } } | undefined)?.cause;
  return cause?.code ?? cause?.message ?? (error instanceof Error ? error.message : String(error));
}

/**
 * Whether fetch gave up on its `AbortSignal.timeout`. Read by name: the DOMException may come
 * from another realm (Node's own, when the caller runs in a sandbox such as jest's), where
 * `instanceof Error` is false.
 */
function isTimeoutError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { name?: unknown }).name === 'TimeoutError';
}
