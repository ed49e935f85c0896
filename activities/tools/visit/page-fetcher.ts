import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { LookupFunction } from 'node:net';
import { pipeline, type Readable } from 'node:stream';
import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import {
  checkDestination,
  DestinationRefusedError,
  type CheckedDestination,
  type NetworkGuardOptions,
} from './network-guard';

/** A fetched page: its final address, declared content type and (possibly capped) body. */
export interface FetchedPage {
  /** The address after following redirects. */
  finalUrl: string;
  /** `content-type` without parameters, lower-cased; empty when the server sent none. */
  contentType: string;
  /** The `charset` parameter of `content-type`, if any. */
  charset?: string;
  /** The body (decompressed), at most `maxBytes` long. */
  body: Buffer;
  /** True when the body was longer than `maxBytes` and the rest was not read. */
  truncated: boolean;
}

/** How {@link fetchPage} fetches. */
export interface PageFetchOptions extends NetworkGuardOptions {
  /** Stop reading the (decompressed) body past this many bytes. */
  maxBytes: number;
  /** Redirects followed before giving up; each hop is checked by the guard. */
  maxRedirects: number;
  /** Sent as `user-agent`. */
  userAgent: string;
  /** Sent as `accept`. */
  accept: string;
  /**
   * Called with the content type once the headers of the final response are in; throw to
   * refuse the body before it is downloaded.
   */
  checkContentType(contentType: string, url: string): void;
  /** Aborts the whole fetch (timeout or cancellation). */
  signal: AbortSignal;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function parseContentType(header: string | undefined): { contentType: string; charset?: string } {
  if (!header) return { contentType: '' };
  const [type = '', ...parameters] = header.split(';');
  const charsetParameter = parameters
    .map((parameter) => parameter.trim())
    .find((parameter) => /^charset=/i.test(parameter));
  const charset = charsetParameter
    ?.slice('charset='.length)
    .replace(/^["']|["']$/g, '')
    .trim();
  return { contentType: type.trim().toLowerCase(), ...(charset ? { charset } : {}) };
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Rejects as soon as `signal` aborts, so waits that take no signal (DNS) still stop. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(abortError(signal));
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

function sendRequest(
  url: URL,
  options: PageFetchOptions,
  lookup: LookupFunction | undefined,
): Promise<IncomingMessage> {
  const send = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(url, {
      method: 'GET',
      headers: {
        'user-agent': options.userAgent,
        accept: options.accept,
        'accept-encoding': 'gzip, deflate, br',
        'accept-language': 'en-US,en;q=0.9',
      },
      signal: options.signal,
      // A fresh connection per request: a pooled socket could belong to another, unchecked host.
      agent: false,
      ...(lookup ? { lookup } : {}),
    });
    request.once('response', resolve);
    // Kept for the request's whole life: a later error (abort while reading) must not go unhandled.
    request.on('error', reject);
    request.end();
  });
}

/** The body, decompressed; `pipeline` carries an abort or error of the response into the result. */
function decodedBody(response: IncomingMessage): Readable {
  const encoding = String(response.headers['content-encoding'] ?? '')
    .trim()
    .toLowerCase();
  const decompressor =
    encoding === 'gzip' || encoding === 'x-gzip'
      ? createGunzip()
      : encoding === 'deflate'
        ? createInflate()
        : encoding === 'br'
          ? createBrotliDecompress()
          : undefined;
  if (!decompressor) return response;
  // Errors surface through the decompressor, which pipeline destroys with them.
  return pipeline(response, decompressor, () => undefined);
}

/** Reads at most `maxBytes` of the body, then stops the download. */
async function readCapped(response: IncomingMessage, maxBytes: number): Promise<{ body: Buffer; truncated: boolean }> {
  const stream = decodedBody(response);
  const chunks: Buffer[] = [];
  let length = 0;
  let truncated = false;
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const room = maxBytes - length;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        length += room;
        truncated = true;
        break;
      }
      chunks.push(chunk);
      length += chunk.length;
    }
  } finally {
    if (truncated || !response.complete) {
      response.destroy();
      if (stream !== response) stream.destroy();
    }
  }
  return { body: Buffer.concat(chunks, length), truncated };
}

/**
 * Fetches `startUrl` with GET over http(s), following up to `maxRedirects` redirects by hand
 * so the guard checks every hop and the connection is pinned to the checked addresses. Reads
 * at most `maxBytes` of the body. Non-2xx statuses, refused hops, too many redirects and
 * refused content types throw with a message fit for the model.
 */
export async function fetchPage(startUrl: URL, options: PageFetchOptions): Promise<FetchedPage> {
  let url = startUrl;
  for (let redirects = 0; ; redirects += 1) {
    let destination: CheckedDestination;
    try {
      destination = await untilAborted(checkDestination(url, options), options.signal);
    } catch (error) {
      if (redirects > 0 && error instanceof DestinationRefusedError) {
        throw new DestinationRefusedError(`it redirected to ${url.href}, and ${error.message}`);
      }
      throw error;
    }
    const response = await sendRequest(url, options, destination.lookup);
    const status = response.statusCode ?? 0;
    const location = response.headers.location;
    if (REDIRECT_STATUSES.has(status) && location) {
      response.destroy();
      if (redirects >= options.maxRedirects) {
        throw new Error(
          `too many redirects (more than ${options.maxRedirects}); the last one pointed from ${url.href} to ${location}`,
        );
      }
      let next: URL;
      try {
        next = new URL(location, url);
      } catch {
        throw new Error(`${url.href} redirected to an invalid address: ${location}`);
      }
      url = next;
      continue;
    }
    if (status < 200 || status >= 300) {
      response.destroy();
      throw new Error(`the server answered ${status} ${response.statusMessage ?? ''}`.trim());
    }
    const { contentType, charset } = parseContentType(response.headers['content-type']);
    try {
      options.checkContentType(contentType, url.href);
    } catch (error) {
      response.destroy();
      throw error;
    }
    const { body, truncated } = await readCapped(response, options.maxBytes);
    return { finalUrl: url.href, contentType, ...(charset ? { charset } : {}), body, truncated };
  }
}
