import assert from 'node:assert/strict';
import { request as httpRequest, type RequestListener } from 'node:http';
import { connect } from 'node:net';
import { afterEach, describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { LiveTextWatcher, type LiveTextNotice } from '../../src/client/live-text';
import { closeServers, hostileServer, liveServer, textOf, until } from './support/live-text-servers';

// Issue 32, bounded cost: a run's stream on the worker (`GET /runs/<token>`) — every attempt of
// the run there, open now or later, pushed to a watcher that then needs no describe — and its
// limits: wrong tokens, other methods, bodies, too many watchers of a run or of the worker, a
// watcher that never reads, a run forgotten after its last call; and the reader against a worker
// that refuses or garbles it.

afterEach(closeServers);

const run = (activityId: string, attempt = 1, runId = 'run-a') => ({
  workflowId: 'research-1',
  runId,
  activityId,
  attempt,
});

const pendingCall = (pointer: { url: string; runUrl?: string }, activityId = '5', attempt = 1) =>
  temporal.api.workflow.v1.PendingActivityInfo.fromObject({
    activityId,
    activityType: { name: 'callModel' },
    attempt,
    heartbeatDetails: { payloads: [defaultPayloadConverter.toPayload({ chunks: 0, modelCall: 1, liveText: pointer })] },
  });

/** Reads a stream's lines as they come. */
function lineReader(response: Response) {
  const body = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let wire = '';
  return async (count: number): Promise<unknown[]> => {
    while (wire.split('\n').length - 1 < count) {
      const { done, value } = await body.read();
      if (done) throw new Error(`the stream ended after ${JSON.stringify(wire)}`);
      wire += decoder.decode(value, { stream: true });
    }
    return wire
      .split('\n')
      .slice(0, count)
      .map((line) => JSON.parse(line) as unknown);
  };
}

describe('a run stream on the worker', () => {
  test('shows the attempts open when it connects (with their backlog) and every later one of the run, tagged; not other runs', async () => {
    const server = await liveServer({ flushMs: 0 });
    const first = server.open(1, run('3'));
    const elsewhere = server.open(1, run('3', 1, 'run-b'));
    assert.match(first.pointer.runUrl ?? '', /\/runs\/[0-9a-f]{64}$/);
    assert.notEqual(first.pointer.runUrl, elsewhere.pointer.runUrl);
    first.add('content', 'Before.');
    const response = await fetch(first.pointer.runUrl as string);
    assert.equal(response.status, 200);
    const lines = lineReader(response);
    assert.deepEqual(await lines(2), [
      { activityId: '3', attempt: 1, call: 1, opened: true },
      { activityId: '3', attempt: 1, call: 1, kind: 'content', text: 'Before.' },
    ]);
    elsewhere.add('content', 'Not this run.');
    first.end('completed');
    const second = server.open(2, run('7'));
    assert.equal(second.pointer.runUrl, first.pointer.runUrl, 'one URL for the run on this worker');
    second.add('reasoning', 'Later.');
    second.end('failed');
    assert.deepEqual((await lines(6)).slice(2), [
      { activityId: '3', attempt: 1, end: 'completed' },
      { activityId: '7', attempt: 1, call: 2, opened: true },
      { activityId: '7', attempt: 1, call: 2, kind: 'reasoning', text: 'Later.' },
      { activityId: '7', attempt: 1, end: 'failed' },
    ]);
    elsewhere.end('completed');
  });

  test('the reader is pushed a later call of the run with no describe, and each call’s end', async () => {
    const server = await liveServer({ flushMs: 0 });
    const first = server.open(1, run('3'));
    first.add('content', 'One.');
    const notices: LiveTextNotice[] = [];
    const watcher = new LiveTextWatcher((notice) => notices.push(notice));
    watcher.observe([pendingCall(first.pointer, '3')]);
    await until(notices, (seen) => textOf(seen) === 'One.');
    assert.deepEqual(watcher.describeState(), { pushed: 1, waiting: 0, heartbeat: 0, runStreams: 1 });
    first.end('completed');
    await until(notices, () => watcher.describeState().pushed === 0);
    // Only the run stream from now on: no observe.
    const second = server.open(2, run('9'));
    second.add('content', 'Two.');
    await until(notices, (seen) => textOf(seen, '9') === 'Two.');
    assert.equal(watcher.pushes(['9']), true);
    assert.deepEqual(
      notices.filter((notice) => notice.type === 'text').map((notice) => notice.type === 'text' && notice.call),
      [1, 2],
    );
    // A retry of the call on this worker starts its text again, said as a new attempt.
    second.end('failed');
    const retry = server.open(2, run('9', 2));
    retry.add('content', 'Two again.');
    await until(notices, (seen) => textOf(seen, '9') === 'Two.Two again.');
    assert.ok(notices.some((notice) => notice.type === 'attempt' && notice.attempt === 2));
    retry.end('completed');
    await until(notices, () => !watcher.streaming);
    assert.equal(
      notices.some((notice) => notice.type === 'source' && notice.source === 'heartbeat'),
      false,
      JSON.stringify(notices),
    );
    watcher.close();
  });

  test('wrong tokens, other methods and bodies are refused quickly; too many watchers of a run or the worker get 503', async () => {
    const server = await liveServer({ maxWatchersPerRun: 2, maxWatchers: 3 });
    const call = server.open(1, run('3'));
    const runUrl = call.pointer.runUrl as string;
    for (const [url, init, status] of [
      [`${server.url}/runs/${'0'.repeat(64)}`, {}, 404],
      [`${server.url}/runs/${'0'.repeat(63)}`, {}, 404],
      [`${runUrl}/more`, {}, 404],
      [`${runUrl}?x=1`, {}, 404],
      [runUrl, { method: 'POST', body: 'x' }, 405],
      [runUrl, { method: 'PUT' }, 405],
    ] as const) {
      const started = performance.now();
      const answer = await fetch(url, { method: init.method ?? 'GET', ...('body' in init ? { body: init.body } : {}) });
      await answer.text();
      assert.equal(answer.status, status, `${init.method ?? 'GET'} ${url}`);
      assert.ok(performance.now() - started < 1_000);
    }
    const withBody = await new Promise<number>((resolve, reject) => {
      const request = httpRequest(runUrl, { method: 'GET', headers: { 'content-length': '5' } }, (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      });
      request.on('error', reject);
      request.end('hello');
    });
    assert.equal(withBody, 400);
    const streams = await Promise.all([fetch(runUrl), fetch(runUrl)]);
    assert.deepEqual(
      streams.map((response) => response.status),
      [200, 200],
    );
    const tooMany = await fetch(runUrl);
    assert.equal(tooMany.status, 503, 'per run');
    assert.match(await tooMany.text(), /too many watchers of this run/);
    const other = server.open(1, run('4', 1, 'run-b'));
    const third = await fetch(other.pointer.runUrl as string);
    assert.equal(third.status, 200);
    assert.equal((await fetch(call.pointer.url)).status, 503, 'per worker, call URLs counted together');
    call.end('completed');
    other.end('completed');
    for (const response of [...streams, third]) void response.body?.cancel();
  });

  test('a run with no call for the idle time is forgotten: its streams end, its URL is 404', async () => {
    const server = await liveServer({ runIdleMs: 300 });
    const call = server.open(1, run('3'));
    const response = await fetch(call.pointer.runUrl as string);
    call.end('completed');
    const started = performance.now();
    const text = await response.text();
    assert.ok(performance.now() - started >= 200, 'kept while the run might have another call here');
    assert.match(text, /"end":"completed"/);
    assert.equal((await fetch(call.pointer.runUrl as string)).status, 404);
    assert.equal(server.runCount, 0);
  });

  test('a watcher of the run that never reads does not slow its calls, is told what it missed, and its stream ends with the run’s idle time', async () => {
    // Every piece written as it comes, so the watcher falls behind while the call streams.
    const server = await liveServer({ bufferCharacters: 10_000, flushMs: 0, runIdleMs: 1_000 });
    const call = server.open(1, run('3'));
    const { port } = new URL(server.url);
    const socket = connect(Number(port), '127.0.0.1');
    socket.write(`GET ${new URL(call.pointer.runUrl as string).pathname} HTTP/1.1\r\nHost: x\r\n\r\n`);
    socket.pause();
    let wire = '';
    socket.on('data', (data) => (wire += data.toString()));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const started = performance.now();
    // More than the socket's buffers take (a few MB on loopback), so the watcher is left behind.
    for (let index = 0; index < 20_000; index += 1) call.add('content', 'x'.repeat(1_000));
    const ms = performance.now() - started;
    assert.ok(ms < 5_000, `20 MB added in ${ms} ms with a stuck run watcher`);
    call.end('completed');
    // A later call of the run is not held up by it either.
    const next = server.open(2, run('4'));
    const nextStarted = performance.now();
    for (let index = 0; index < 1_000; index += 1) next.add('content', 'y'.repeat(1_000));
    assert.ok(performance.now() - nextStarted < 1_000);
    next.end('completed');
    socket.resume();
    await closed;
    assert.ok(wire.length < 20_000_000, `${wire.length} bytes sent, not all 20 MB`);
    assert.match(wire, /"activityId":"3","attempt":1,"skipped":\d+/);
    assert.match(wire, /"activityId":"3","attempt":1,"end":"completed"/);
    assert.match(wire, /"activityId":"4","attempt":1,"end":"completed"/);
  }, 30_000);
});

describe('the reader against a worker that refuses or garbles the run stream', () => {
  const hostile = async (handler: RequestListener): Promise<string> => `${await hostileServer(handler)}`;

  test('a refused run stream leaves the call to its own URL; a garbled one to its heartbeat tail', async () => {
    const live = await liveServer();
    const call = live.open(1, run('3'));
    call.add('content', 'From the call URL.');
    const refusing = await hostile((_request, response) => {
      response.writeHead(404);
      response.end();
    });
    const notices: LiveTextNotice[] = [];
    const watcher = new LiveTextWatcher((notice) => notices.push(notice));
    const refused = { url: call.pointer.url, runUrl: `${refusing}/runs/${'c'.repeat(64)}` };
    watcher.observe([pendingCall(refused, '3')]);
    await until(notices, (seen) => textOf(seen) === 'From the call URL.');
    assert.ok(notices.some((notice) => notice.type === 'runStream' && !notice.open));
    assert.deepEqual(watcher.describeState(), { pushed: 1, waiting: 0, heartbeat: 0, runStreams: 0 });
    call.end('completed');
    watcher.close();

    const garbling = await hostile((_request, response) => {
      response.writeHead(200);
      response.write('{"activityId":"3","attempt":1,"call":1,"opened":true}\n');
      response.write('{"activityId":"3","attempt":1,"call":1,"kind":"content","text":"ok"}\n');
      setTimeout(() => response.end('{"call":1,"kind":"content","text":"untagged"}\n'), 50);
    });
    const garbled: LiveTextNotice[] = [];
    const reader = new LiveTextWatcher((notice) => garbled.push(notice));
    const pointer = { url: `${garbling}/calls/${'d'.repeat(32)}`, runUrl: `${garbling}/runs/${'d'.repeat(64)}` };
    reader.observe([pendingCall(pointer, '3')]);
    await until(garbled, (seen) => seen.some((notice) => notice.type === 'source' && notice.source === 'heartbeat'));
    const fallback = garbled.find((notice) => notice.type === 'source' && notice.source === 'heartbeat');
    assert.match(fallback?.type === 'source' ? fallback.detail : '', /bad activity id/);
    assert.equal(textOf(garbled), 'ok');
    assert.deepEqual(reader.describeState(), { pushed: 0, waiting: 0, heartbeat: 1, runStreams: 0 });
    reader.close();
  }, 30_000);
});
