import assert from 'node:assert/strict';
import { request as httpRequest, type RequestListener } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { LiveTextWatcher, type LiveTextNotice } from '../../src/client/live-text';
import { closeServers, hostileServer, liveServer, textOf, until } from './support/live-text-servers';

// Issue 32: the worker's live text channel, attacked over loopback HTTP — wrong tokens, other
// methods, bodies, garbage, too many watchers, a watcher that never reads — and the reader
// (`LiveTextWatcher`, what follow and the client use) fed by a server that sends garbage. Each
// is refused quickly and clearly; the server keeps serving and the call is never slowed.

afterEach(closeServers);

function get(url: string, init: { method?: string; body?: string } = {}) {
  const started = performance.now();
  return fetch(url, { method: init.method ?? 'GET', ...(init.body ? { body: init.body } : {}) }).then(
    async (response) => ({ status: response.status, body: await response.text(), ms: performance.now() - started }),
  );
}

const pendingCall = (url: string | undefined, attempt = 1, extra: Record<string, unknown> = {}) =>
  temporal.api.workflow.v1.PendingActivityInfo.fromObject({
    activityId: '5',
    activityType: { name: 'callModel' },
    attempt,
    heartbeatDetails: {
      payloads: [
        defaultPayloadConverter.toPayload({
          chunks: 0,
          characters: 0,
          modelCall: 3,
          ...(url ? { liveText: { url } } : {}),
          ...extra,
        }),
      ],
    },
  });

/** Resolves when `check` holds over the notices so far. */
describe('the live text server', () => {
  test('a watcher gets the backlog, then each piece as it is added, then the end', async () => {
    const server = await liveServer();
    const call = server.open(3);
    call.add('reasoning', 'Thinking');
    const notices: LiveTextNotice[] = [];
    const watcher = new LiveTextWatcher((notice) => notices.push(notice));
    watcher.observe([pendingCall(call.pointer.url)]);
    await until(notices, (seen) => textOf(seen) === 'Thinking');
    assert.deepEqual(notices[0], { type: 'source', source: 'direct', detail: `worker ${new URL(server.url).host}` });
    call.add('content', '\nAnswer');
    await until(notices, (seen) => textOf(seen) === 'Thinking\nAnswer');
    assert.deepEqual(
      notices.filter((notice) => notice.type === 'text').map((notice) => notice.type === 'text' && notice.kind),
      ['reasoning', 'content'],
    );
    call.end('completed');
    await until(notices, (seen) => seen.some((notice) => notice.type === 'closed'));
    assert.equal(watcher.streaming, false);
    assert.equal(
      notices.some((notice) => notice.type === 'source' && notice.source === 'heartbeat'),
      false,
      'no fallback',
    );
    assert.equal((await get(call.pointer.url)).status, 404, 'an ended call is gone');
  });

  test('pieces streamed within the write interval reach a watcher as one line; the first after a quiet interval at once', async () => {
    const server = await liveServer({ flushMs: 1_000 });
    const call = server.open(4);
    const response = await fetch(call.pointer.url);
    const body = (response.body as ReadableStream<Uint8Array>).getReader();
    const decoder = new TextDecoder();
    let wire = '';
    const lineCount = async (count: number) => {
      while (wire.split('\n').length - 1 < count) {
        const { done, value } = await body.read();
        if (done) throw new Error(`the stream ended after ${JSON.stringify(wire)}`);
        wire += decoder.decode(value, { stream: true });
      }
      return performance.now();
    };
    const started = performance.now();
    call.add('content', 'first');
    const firstAt = await lineCount(1);
    assert.ok(firstAt - started < 500, `the first piece took ${firstAt - started} ms, not at once`);
    for (let index = 0; index < 10; index += 1) call.add('content', `p${index} `);
    call.add('tool', '\nsearch{}');
    const restAt = await lineCount(3);
    assert.ok(restAt - firstAt >= 500, `the held pieces came ${restAt - firstAt} ms after the first, not held`);
    call.end('completed');
    await lineCount(4);
    assert.deepEqual(
      wire
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line) as unknown),
      [
        { call: 4, kind: 'content', text: 'first' },
        { call: 4, kind: 'content', text: 'p0 p1 p2 p3 p4 p5 p6 p7 p8 p9 ' },
        { call: 4, kind: 'tool', text: '\nsearch{}' },
        { end: 'completed' },
      ],
    );
  });

  test('a call that ends while pieces are held sends them before its end line', async () => {
    const server = await liveServer({ flushMs: 1_000 });
    const call = server.open(5);
    const response = await fetch(call.pointer.url);
    call.add('content', 'a');
    call.add('content', 'b');
    call.add('content', 'c');
    const started = performance.now();
    call.end('completed');
    const text = await response.text();
    assert.ok(performance.now() - started < 500, 'the end does not wait for the interval');
    assert.equal(
      text,
      '{"call":5,"kind":"content","text":"a"}\n{"call":5,"kind":"content","text":"bc"}\n{"end":"completed"}\n',
    );
  });

  test('a watcher that joins after the buffer dropped text is told how much it missed', async () => {
    const server = await liveServer({ bufferCharacters: 100, flushMs: 0 });
    const call = server.open(1);
    for (let index = 0; index < 30; index += 1) call.add('content', `piece ${String(index).padStart(2, '0')}.`);
    call.end('completed');
    // Ended: gone. A fresh call that overflowed while open:
    const open = server.open(2);
    for (let index = 0; index < 30; index += 1) open.add('content', `piece ${String(index).padStart(2, '0')}.`);
    const notices: LiveTextNotice[] = [];
    new LiveTextWatcher((notice) => notices.push(notice)).observe([pendingCall(open.pointer.url)]);
    await until(notices, (seen) => textOf(seen).endsWith('piece 29.'));
    const skipped = notices.find((notice) => notice.type === 'skipped');
    assert.ok(skipped && skipped.type === 'skipped' && skipped.characters > 0, JSON.stringify(notices));
    assert.equal(skipped.characters + textOf(notices).length, 30 * 'piece 00.'.length);
    open.end('completed');
  });

  test('wrong tokens, other paths, methods and bodies are refused quickly; the server keeps serving', async () => {
    const server = await liveServer();
    const call = server.open(1);
    call.add('content', 'still here');
    const wrong = `${server.url}/calls/${'0'.repeat(32)}`;
    for (const [url, init, status] of [
      [wrong, {}, 404],
      [`${server.url}/calls/../etc/passwd`, {}, 404],
      [`${server.url}/`, {}, 404],
      [`${call.pointer.url}?x=1`, {}, 404],
      [call.pointer.url, { method: 'POST', body: 'x' }, 405],
      [call.pointer.url, { method: 'DELETE' }, 405],
    ] as const) {
      const answer = await get(url, init);
      assert.equal(answer.status, status, `${init.method ?? 'GET'} ${url}: ${answer.body}`);
      assert.ok(answer.ms < 1_000, `${url} answered in ${answer.ms} ms`);
    }
    // GET with a body.
    const withBody = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(
        call.pointer.url,
        { method: 'GET', headers: { 'content-length': '5' } },
        (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        },
      );
      request.on('error', reject);
      request.end('hello');
    });
    assert.equal(withBody, 400);
    // Garbage and oversized headers: the connection is closed, nothing else happens.
    for (const garbage of [
      '\x00\x01\x02 not http\r\n\r\n',
      `GET /calls/x HTTP/1.1\r\nX: ${'a'.repeat(20_000)}\r\n\r\n`,
    ]) {
      const closed = await new Promise<string>((resolve) => {
        const { port } = new URL(server.url);
        const socket = connect(Number(port), '127.0.0.1', () => socket.write(garbage));
        let answer = '';
        socket.on('data', (data) => (answer += data.toString()));
        socket.on('close', () => resolve(answer));
        socket.on('error', () => resolve(answer));
      });
      assert.doesNotMatch(closed, /still here/);
    }
    const notices: LiveTextNotice[] = [];
    new LiveTextWatcher((notice) => notices.push(notice)).observe([pendingCall(call.pointer.url)]);
    await until(notices, (seen) => textOf(seen) === 'still here');
    call.end('completed');
  });

  test('too many watchers of a call, or of the worker, are refused with 503', async () => {
    const server = await liveServer({ maxWatchersPerCall: 2, maxWatchers: 3 });
    const call = server.open(1);
    const other = server.open(2);
    const streams = await Promise.all([fetch(call.pointer.url), fetch(call.pointer.url)]);
    assert.deepEqual(
      streams.map((response) => response.status),
      [200, 200],
    );
    assert.equal((await get(call.pointer.url)).status, 503, 'per call');
    const third = await fetch(other.pointer.url);
    assert.equal(third.status, 200);
    assert.equal((await get(other.pointer.url)).status, 503, 'per worker');
    call.end('completed');
    other.end('completed');
    for (const response of [...streams, third]) assert.match(await response.text(), /"end":"completed"/);
  });

  test('a watcher that never reads does not slow the call, and is cut off after the call ends', async () => {
    const server = await liveServer({ bufferCharacters: 10_000 });
    const call = server.open(1);
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(`GET ${new URL(call.pointer.url).pathname} HTTP/1.1\r\nHost: x\r\n\r\n`);
    socket.pause();
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    for (let index = 0; index < 20_000; index += 1) call.add('content', 'x'.repeat(100));
    const ms = performance.now() - started;
    assert.ok(ms < 2_000, `2 MB added in ${ms} ms with a stuck watcher`);
    call.end('completed');
    socket.resume();
    await closed;
  }, 30_000);
});

describe('the reader against a hostile server', () => {
  const hostile = async (handler: RequestListener): Promise<string> =>
    `${await hostileServer(handler)}/calls/${'a'.repeat(32)}`;

  test('an endless line, garbage, and an unreachable worker each make it fall back to the heartbeat tail', async () => {
    const endless = await hostile((_request, response) => {
      response.writeHead(200);
      const write = () => {
        while (!response.destroyed && response.write('x'.repeat(64 * 1024)));
        if (!response.destroyed) response.once('drain', write);
      };
      write();
    });
    const garbage = await hostile((_request, response) => response.end('<html>hello</html>\n'));
    const silent = await hostile(() => undefined);
    const unreachable = `http://127.0.0.1:1/calls/${'b'.repeat(32)}`;
    for (const [url, why] of [
      [endless, /longer than/],
      [garbage, /not JSON/],
      [silent, /unreachable/],
      [unreachable, /unreachable/],
    ] as const) {
      const notices: LiveTextNotice[] = [];
      const watcher = new LiveTextWatcher((notice) => notices.push(notice), { connectTimeoutMs: 500 });
      watcher.observe([pendingCall(url)]);
      await until(notices, (seen) => seen.some((notice) => notice.type === 'source' && notice.source === 'heartbeat'));
      const fallback = notices.find((notice) => notice.type === 'source' && notice.source === 'heartbeat');
      assert.match(fallback?.type === 'source' ? fallback.detail : '', why, url);
      // The tail is read from then on.
      watcher.observe([pendingCall(url, 1, { streamed: 'tail text', streamedCharacters: 9 })]);
      assert.equal(textOf(notices), 'tail text', url);
      watcher.close();
    }
  }, 30_000);
});
