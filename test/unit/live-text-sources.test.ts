import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { callSource } from '../../src/domain/live-text-sources';

// Issue 32: where a watcher reads a model call it found by describing the run — the worker's run
// stream (which then pushes the run's later calls there), the call's own URL, or the heartbeat tail.

const seen = { callUrl: true, runUrl: true, runStream: 'none' as const, tail: false };

describe('where a newly seen call is read from', () => {
  test('a worker with a run stream not opened yet: open it (it shows this call and the later ones)', () => {
    assert.equal(callSource(seen), 'open-run-stream');
  });

  test('a run stream being opened to that worker: it shows the call when it connects', () => {
    assert.equal(callSource({ ...seen, runStream: 'connecting' }), 'join-run-stream');
  });

  test('the call’s own URL when the run stream is open but did not show it, failed, or is not offered', () => {
    assert.equal(callSource({ ...seen, runStream: 'open' }), 'call-url');
    assert.equal(callSource({ ...seen, runStream: 'failed' }), 'call-url');
    assert.equal(callSource({ ...seen, runUrl: false }), 'call-url');
  });

  test('the heartbeat tail without a URL, or nothing yet', () => {
    assert.equal(callSource({ callUrl: false, runUrl: false, runStream: 'none', tail: true }), 'heartbeat');
    assert.equal(callSource({ callUrl: false, runUrl: false, runStream: 'none', tail: false }), 'wait');
  });
});
