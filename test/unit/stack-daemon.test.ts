import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { isAlive, processStartTicks } from '../../src/processes/production-stack/daemon';

/*
 * `react-agent stack` finds its processes again by pid *and* start time, so a pid the kernel gave
 * to another process since is never taken for (and never signalled as) a process of the stack.
 */
test('a process is alive only with the start time it had', () => {
  const ticks = processStartTicks(process.pid);
  assert.ok(ticks !== undefined && ticks > 0);
  assert.equal(isAlive({ pid: process.pid, startTicks: ticks, command: 'jest' }), true);
  assert.equal(
    isAlive({ pid: process.pid, startTicks: ticks + 1, command: 'a process that had this pid before' }),
    false,
  );
  assert.equal(isAlive(undefined), false);
});

test('a pid with no process is not alive', () => {
  // pid_max is at most 2^22 on Linux.
  assert.equal(processStartTicks(2 ** 22 + 7), undefined);
  assert.equal(isAlive({ pid: 2 ** 22 + 7, startTicks: 1, command: 'gone' }), false);
});
