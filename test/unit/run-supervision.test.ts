import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { isConnectionProblem } from '../../src/cli/connection-problems';
import { responseToFollowFailure, shouldKeepFollowing, type StackState } from '../../src/cli/run-supervision';

const unavailable = Object.assign(new Error('14 UNAVAILABLE: No connection established'), { code: 14 });
const notFound = Object.assign(new Error('5 NOT_FOUND: workflow not found'), { code: 5 });
const displayBug = new TypeError("Cannot read properties of undefined (reading 'preview')");
const stack = (overrides: Partial<StackState> = {}): StackState => ({
  startedWorker: false,
  startedServer: false,
  serverExited: false,
  forced: false,
  ...overrides,
});

describe('isConnectionProblem', () => {
  test('a server that cannot be reached is one; a refused request or a bug is not', () => {
    assert.equal(isConnectionProblem(unavailable), true);
    assert.equal(isConnectionProblem(new Error('wrapped', { cause: unavailable })), true);
    assert.equal(
      isConnectionProblem(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:7233'), { code: 'ECONNREFUSED' })),
      true,
    );
    assert.equal(isConnectionProblem(notFound), false);
    assert.equal(isConnectionProblem(displayBug), false);
  });
});

describe('shouldKeepFollowing', () => {
  test('a lost connection is retried for as long as the run needs what run started', () => {
    assert.equal(
      shouldKeepFollowing({ error: unavailable, failedAttempts: 500 }, stack({ startedWorker: true })),
      true,
    );
    assert.equal(
      shouldKeepFollowing({ error: unavailable, failedAttempts: 500 }, stack({ startedServer: true })),
      true,
    );
  });

  test('with an external worker and server it gives up after 10 attempts in a row', () => {
    assert.equal(shouldKeepFollowing({ error: unavailable, failedAttempts: 10 }, stack()), true);
    assert.equal(shouldKeepFollowing({ error: unavailable, failedAttempts: 11 }, stack()), false);
  });

  test('no retry when forced, when its own server is gone, or for anything but a connection problem', () => {
    assert.equal(
      shouldKeepFollowing({ error: unavailable, failedAttempts: 1 }, stack({ startedWorker: true, forced: true })),
      false,
    );
    assert.equal(
      shouldKeepFollowing(
        { error: unavailable, failedAttempts: 1 },
        stack({ startedServer: true, serverExited: true }),
      ),
      false,
    );
    assert.equal(shouldKeepFollowing({ error: displayBug, failedAttempts: 1 }, stack({ startedWorker: true })), false);
  });
});

describe('responseToFollowFailure', () => {
  test('a display failure first falls back to waiting for the result without progress', () => {
    assert.equal(
      responseToFollowFailure({ error: displayBug, waitedQuietly: false }, stack({ startedWorker: true })),
      'wait-quietly',
    );
    assert.equal(responseToFollowFailure({ error: displayBug, waitedQuietly: false }, stack()), 'wait-quietly');
  });

  test('if that fails too, a run that depends on what run started is cancelled and waited for before anything is stopped', () => {
    assert.equal(
      responseToFollowFailure({ error: displayBug, waitedQuietly: true }, stack({ startedWorker: true })),
      'cancel-and-wait',
    );
    assert.equal(
      responseToFollowFailure({ error: unavailable, waitedQuietly: false }, stack({ startedServer: true })),
      'cancel-and-wait',
    );
  });

  test('a run with its own worker and server is left running; one in a dev server that exited is reported as saved', () => {
    assert.equal(responseToFollowFailure({ error: unavailable, waitedQuietly: false }, stack()), 'leave-running');
    assert.equal(
      responseToFollowFailure(
        { error: unavailable, waitedQuietly: false },
        stack({ startedServer: true, startedWorker: true, serverExited: true }),
      ),
      'report-saved',
    );
  });
});
