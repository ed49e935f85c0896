import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { SAME_REQUEST_WITHIN_MS, stopResponse, StopRequests } from '../../src/cli/stop-signals';

describe('stopResponse', () => {
  test('while the run goes on: the first Ctrl-C cancels it, the second stops waiting, the third exits', () => {
    assert.equal(stopResponse(1, 'running'), 'cancel-run');
    assert.equal(stopResponse(2, 'running'), 'force-stop');
    assert.equal(stopResponse(3, 'running'), 'exit-now');
  });

  test('before the run has started, the first Ctrl-C stops the start-up and the second exits', () => {
    assert.equal(stopResponse(1, 'starting'), 'abort-start');
    assert.equal(stopResponse(2, 'starting'), 'exit-now');
  });

  test('once the run has ended there is nothing to wait for', () => {
    assert.equal(stopResponse(1, 'stopping'), 'exit-now');
  });
});

describe('StopRequests', () => {
  test('signals that arrive together (a terminal and a wrapper forwarding the same Ctrl-C) are one request', () => {
    let now = 1_000;
    const seen: number[] = [];
    const requests = new StopRequests(
      (count) => seen.push(count),
      () => now,
    );
    requests.receive('SIGINT');
    now += SAME_REQUEST_WITHIN_MS - 1;
    requests.receive('SIGINT');
    assert.deepEqual(seen, [1]);
    now += SAME_REQUEST_WITHIN_MS + 500;
    requests.receive('SIGINT');
    assert.deepEqual(seen, [1, 2]);
    assert.equal(requests.count, 2);
  });

  test('while installed, SIGINT does not kill the process; after dispose the listener is gone', () => {
    const before = process.listenerCount('SIGINT');
    const requests = new StopRequests(() => undefined).install();
    assert.equal(process.listenerCount('SIGINT'), before + 1);
    requests.dispose();
    assert.equal(process.listenerCount('SIGINT'), before);
  });
});
