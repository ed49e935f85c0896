import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { RunTokens } from '../../activities/live-text/run-token';

// Issue 32: the capability to read a run's stream on a worker — the same for every call of the
// run on that process, different for every run, process and secret, not forgeable from the ids.

describe('a run stream token', () => {
  test('is 64 hex digits, the same for the same run on one process', () => {
    const tokens = new RunTokens();
    const token = tokens.of('research-1', 'run-a');
    assert.match(token, /^[0-9a-f]{64}$/);
    assert.equal(tokens.of('research-1', 'run-a'), token);
  });

  test('differs by run, by workflow, across processes, and between ids that concatenate alike', () => {
    const tokens = new RunTokens();
    const token = tokens.of('research-1', 'run-a');
    assert.notEqual(tokens.of('research-1', 'run-b'), token);
    assert.notEqual(tokens.of('research-2', 'run-a'), token);
    assert.notEqual(new RunTokens().of('research-1', 'run-a'), token);
    assert.notEqual(tokens.of('a\nb', 'c'), tokens.of('a', 'b\nc'));
  });

  test('is the HMAC-SHA256 of the ids under the secret: known secret, known token', () => {
    const secret = new Uint8Array(32).fill(7);
    assert.equal(new RunTokens(secret).of('w', 'r'), new RunTokens(Uint8Array.from(secret)).of('w', 'r'));
    assert.notEqual(new RunTokens(secret).of('w', 'r'), new RunTokens(new Uint8Array(32).fill(8)).of('w', 'r'));
  });
});
