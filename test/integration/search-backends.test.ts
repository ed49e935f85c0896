// Runs alone: asserts a cancelled search stops within 2 s
import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { createSearchTool } from '../../activities/tools/search/search-tool';
import { createSearxngSearchBackend } from '../../activities/tools/search/searxng-search-backend';
import { createSerperSearchBackend } from '../../activities/tools/search/serper-search-backend';
import { FailureTypes } from '../../src/core/failure-types';
import { toolContext } from '../fakes/documents';
import {
  SearchApiServer,
  searxngResponse,
  serperResponse,
  type RecordedSearchRequest,
  type SearchApiReply,
} from '../fakes/search-api-server';

/** A port nothing listens on: one the system handed out and that was closed again. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

const API_KEY = 'serper-SECRET-key-0123456789';
const signal = () => new AbortController().signal;

/** The reply for the next requests; each test sets it. */
let reply: (request: RecordedSearchRequest) => SearchApiReply = () => ({ status: 500 });
let server: SearchApiServer;

beforeAll(async () => {
  server = await SearchApiServer.start((request) => reply(request));
});
afterAll(async () => {
  await server?.close();
});

/** Asserts a non-retryable ApplicationFailure whose message matches and never shows the key. */
async function assertRejected(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(error instanceof ApplicationFailure, `expected an ApplicationFailure, got ${String(error)}`);
    assert.equal(error.nonRetryable, true);
    assert.equal(error.type, FailureTypes.searchRequestRejected);
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes(API_KEY), 'the key never appears in a message');
    return true;
  });
}

/** Asserts a plain Error (Temporal retries it), not an ApplicationFailure. */
async function assertRetryable(promise: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(
      error instanceof Error && !(error instanceof ApplicationFailure),
      `expected a plain Error, got ${String(error)}`,
    );
    assert.match(error.message, pattern);
    return true;
  });
}

describe('SearXNG backend', () => {
  const backend = () => createSearxngSearchBackend({ baseUrl: `${server.baseUrl}/`, language: 'en', timeoutMs: 1_000 });

  test('GET /search?q=…&format=json; results mapped and capped at the limit', async () => {
    reply = (request) => ({
      json: searxngResponse(request.query.get('q') ?? '', [
        { title: 'BYD 2024 sales', url: 'https://example.com/byd', content: 'BYD sold 4,272,145\n vehicles.' },
        { title: '', url: 'https://example.com/untitled', content: 'No title here.' },
        { title: 'Third', url: 'https://example.com/3', content: 'Three.' },
      ]),
    });
    const results = await backend().search('BYD 2024 "sales"', 2, signal());
    assert.deepEqual(results, [
      { title: 'BYD 2024 sales', url: 'https://example.com/byd', snippet: 'BYD sold 4,272,145 vehicles.', score: 1 },
      {
        title: 'https://example.com/untitled',
        url: 'https://example.com/untitled',
        snippet: 'No title here.',
        score: 0.5,
      },
    ]);
    const request = server.requests.at(-1) as RecordedSearchRequest;
    assert.equal(request.method, 'GET');
    assert.equal(request.path, '/search');
    assert.equal(request.query.get('q'), 'BYD 2024 "sales"');
    assert.equal(request.query.get('format'), 'json');
    assert.equal(request.query.get('language'), 'en');
  });

  test('through the search tool: several queries, one markdown section each', async () => {
    reply = (request) => ({
      json: searxngResponse('', [
        {
          title: `About ${request.query.get('q')}`,
          url: `https://example.com/${encodeURIComponent(request.query.get('q') ?? '')}`,
          content: 'Snippet.',
        },
      ]),
    });
    const output = await createSearchTool(backend()).run({ query: ['BYD', 'Tesla'] }, toolContext());
    assert.match(
      output,
      /## Search: "BYD" \(SearXNG, 1 result\)\n\n1\. \*\*About BYD\*\* — https:\/\/example\.com\/BYD\n {3}Snippet\./,
    );
    assert.match(output, /## Search: "Tesla" \(SearXNG, 1 result\)/);
  });

  test('403 (JSON format disabled) and 401 are not retried and say what to fix', async () => {
    reply = () => ({ status: 403, text: 'Forbidden' });
    await assertRejected(
      backend().search('x', 5, signal()),
      /SearXNG refused the search with 403: Forbidden\. Check SEARXNG_URL.*"json" to search\.formats/,
    );
    reply = () => ({ status: 401, text: '' });
    await assertRejected(backend().search('x', 5, signal()), /401.*SEARXNG_URL/);
    reply = () => ({ status: 404, text: 'Not Found' });
    await assertRejected(backend().search('x', 5, signal()), /404: Not Found\. Check SEARXNG_URL/);
  });

  test('500, 429, a timeout, a body that is not JSON and silent engines are retried', async () => {
    reply = () => ({ status: 500, text: 'Internal Server Error' });
    await assertRetryable(
      backend().search('x', 5, signal()),
      /SearXNG answered 500 Internal Server Error: Internal Server Error; retrying/,
    );
    reply = () => ({ status: 429, text: 'Too Many Requests' });
    await assertRetryable(backend().search('x', 5, signal()), /429/);
    reply = () => ({ json: searxngResponse('x', []), delayMs: 3_000 });
    await assertRetryable(backend().search('x', 5, signal()), /could not be reached .*no answer within 1 s/);
    reply = () => ({ text: '<html>not json</html>' });
    await assertRetryable(backend().search('x', 5, signal()), /not JSON/);
    reply = () => ({ json: searxngResponse('x', [], [['google', 'timeout']]) });
    await assertRetryable(backend().search('x', 5, signal()), /engines did not answer.*google/);
    reply = () => ({ json: searxngResponse('x', []) });
    assert.deepEqual(await backend().search('x', 5, signal()), []);
  });

  test('a cancelled call stops at once; an unreachable server is retried', async () => {
    reply = () => ({ json: searxngResponse('x', []), delayMs: 5_000 });
    const controller = new AbortController();
    const started = Date.now();
    const pending = createSearxngSearchBackend({ baseUrl: server.baseUrl, timeoutMs: 10_000 }).search(
      'x',
      5,
      controller.signal,
    );
    setTimeout(() => controller.abort(), 50);
    await assert.rejects(pending, { name: 'AbortError' });
    assert.ok(Date.now() - started < 2_000);
    const closedPort = await freePort();
    await assertRetryable(
      createSearxngSearchBackend({ baseUrl: `http://127.0.0.1:${closedPort}` }).search('x', 5, signal()),
      /SearXNG could not be reached at http:\/\/127\.0\.0\.1:\d+\/search\?q=x&format=json \(ECONNREFUSED\)/,
    );
  });
});

describe('Serper backend', () => {
  const backend = () =>
    createSerperSearchBackend({ apiKey: API_KEY, baseUrl: server.baseUrl, country: 'us', timeoutMs: 1_000 });

  test('POST /search with X-API-KEY; organic results mapped', async () => {
    reply = (request) => ({
      json: serperResponse(JSON.parse(request.body).q, [
        {
          title: 'Tesla Q4 2024 deliveries',
          link: 'https://example.com/tesla',
          snippet: 'Tesla delivered 1,789,226 vehicles in 2024.',
        },
        { title: 'BYD sales', link: 'https://example.com/byd', snippet: 'BYD sold 4,272,145.' },
      ]),
    });
    const results = await backend().search('Tesla 2024 deliveries', 5, signal());
    assert.deepEqual(results, [
      {
        title: 'Tesla Q4 2024 deliveries',
        url: 'https://example.com/tesla',
        snippet: 'Tesla delivered 1,789,226 vehicles in 2024.',
      },
      { title: 'BYD sales', url: 'https://example.com/byd', snippet: 'BYD sold 4,272,145.' },
    ]);
    const request = server.requests.at(-1) as RecordedSearchRequest;
    assert.equal(request.method, 'POST');
    assert.equal(request.path, '/search');
    assert.equal(request.headers['x-api-key'], API_KEY);
    assert.equal(request.headers['content-type'], 'application/json');
    assert.deepEqual(JSON.parse(request.body), { q: 'Tesla 2024 deliveries', num: 5, gl: 'us' });
  });

  test('401 and 403 name SERPER_API_KEY, are not retried and never show the key', async () => {
    reply = () => ({ status: 401, json: { message: 'Unauthorized.', statusCode: 401 } });
    await assertRejected(
      backend().search('x', 5, signal()),
      /Serper refused the search with 401: \{"message":"Unauthorized\.","statusCode":401\}\. Check SERPER_API_KEY/,
    );
    reply = () => ({ status: 403, json: { message: 'Not enough credits' } });
    await assertRejected(backend().search('x', 5, signal()), /403.*Not enough credits.*SERPER_API_KEY/);
  });

  test('500 and 429 are plain errors, so Temporal retries them; a missing organic list is no results', async () => {
    reply = () => ({ status: 500, json: { message: 'Internal error' } });
    await assertRetryable(backend().search('x', 5, signal()), /Serper answered 500/);
    reply = () => ({ status: 429, json: { message: 'Rate limit' } });
    await assertRetryable(backend().search('x', 5, signal()), /Serper answered 429/);
    reply = () => ({ json: { searchParameters: { q: 'x' } } });
    assert.deepEqual(await backend().search('x', 5, signal()), []);
  });
});
