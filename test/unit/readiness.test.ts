import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { lastLines, logTail } from '../../src/processes/log-tail';
import {
  formatWait,
  nextReadinessStep,
  NotReadyError,
  notReadyMessage,
  remainingMs,
  waitUntilReady,
} from '../../src/processes/readiness';

/*
 * The one wait-until-ready loop of src/processes/ (the dev server, SeaweedFS, workers, each
 * service of the production stack): when it probes again, when it gives up, and what its error
 * says. The decisions are pure; the loop itself runs here on fake probes and a fake process.
 */

const directory = mkdtempSync(join(tmpdir(), 'react-agent-readiness-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('the deadline', () => {
  test('time left: the timeout less the time spent, never below 0', () => {
    assert.equal(remainingMs(1_000, 1_000, 90_000), 90_000);
    assert.equal(remainingMs(1_000, 31_000, 90_000), 60_000);
    assert.equal(remainingMs(1_000, 91_000, 90_000), 0);
    assert.equal(remainingMs(1_000, 200_000, 90_000), 0);
  });

  test('before the deadline: probe again after the interval, or at the deadline when it is nearer', () => {
    assert.deepEqual(nextReadinessStep({ startedAt: 0, now: 1_000, timeoutMs: 90_000, intervalMs: 200 }), {
      kind: 'probe-again',
      afterMs: 200,
    });
    assert.deepEqual(nextReadinessStep({ startedAt: 0, now: 89_950, timeoutMs: 90_000, intervalMs: 200 }), {
      kind: 'probe-again',
      afterMs: 50,
    });
  });

  test('at or past the deadline: give up, timed out', () => {
    for (const now of [90_000, 90_001, 500_000])
      assert.deepEqual(nextReadinessStep({ startedAt: 0, now, timeoutMs: 90_000, intervalMs: 200 }), {
        kind: 'give-up',
        cause: { kind: 'timed-out' },
      });
  });

  test('a timeout of 0 is one probe: give up after it', () => {
    assert.deepEqual(nextReadinessStep({ startedAt: 5, now: 5, timeoutMs: 0, intervalMs: 250 }), {
      kind: 'give-up',
      cause: { kind: 'timed-out' },
    });
  });

  test('a process that exited is given up on at once, however much time is left', () => {
    assert.deepEqual(
      nextReadinessStep({ startedAt: 0, now: 10, timeoutMs: 90_000, intervalMs: 200, exit: 'exited with code 1' }),
      { kind: 'give-up', cause: { kind: 'exited', exit: 'exited with code 1' } },
    );
  });
});

describe('what the error says', () => {
  test('timed out: what, within how long, the last problem, the hint', () => {
    assert.equal(
      notReadyMessage({
        what: 'Temporal at 127.0.0.1:7233',
        cause: { kind: 'timed-out' },
        timeoutMs: 180_000,
        lastProblem: 'namespace just registered',
        hint: 'see the logs in /tmp/stack/logs',
      }),
      'Temporal at 127.0.0.1:7233 did not become ready within 180 s (last problem: namespace just registered); see the logs in /tmp/stack/logs.',
    );
  });

  test('exited: how, the last problem and the last lines of its output', () => {
    assert.equal(
      notReadyMessage({
        what: "Temporal's history service",
        cause: { kind: 'exited', exit: 'exited' },
        timeoutMs: 90_000,
        lastProblem: '127.0.0.1:7234 does not answer',
        output: { logFile: '/tmp/stack/logs/temporal-history.log', lastLines: 'unable to connect to database' },
      }),
      "Temporal's history service exited while starting (last problem: 127.0.0.1:7234 does not answer). Last lines of /tmp/stack/logs/temporal-history.log:\nunable to connect to database",
    );
  });

  test('a wait that is not whole seconds is said in milliseconds', () => {
    assert.equal(formatWait(90_000), '90 s');
    assert.equal(formatWait(1_500), '1500 ms');
    assert.equal(formatWait(0), '0 s');
  });

  test("the process's last output: its last non-empty lines, each cut at 600 characters", () => {
    assert.equal(lastLines('a\n\nb\r\nc\n   \nd\n', 3), 'b\nc\nd');
    assert.equal(lastLines('\n \n', 5), '(the log is empty)');
    assert.equal(lastLines('x'.repeat(700), 1), `${'x'.repeat(600)}…`);
  });

  test('only what this start wrote is quoted: the log from the offset on', () => {
    const file = join(directory, 'offset.log');
    writeFileSync(file, 'an earlier start\n');
    const offset = 'an earlier start\n'.length;
    writeFileSync(file, 'an earlier start\nthis start\n');
    assert.equal(logTail(file, offset), 'this start');
    assert.match(logTail(join(directory, 'missing.log')), /the log is empty/);
  });
});

describe('the loop', () => {
  test('resolves once the probe finds nothing missing', async () => {
    const answers = ['no answer', 'still starting', undefined];
    let probes = 0;
    const took = await waitUntilReady({
      what: 'the thing',
      probe: async () => answers[probes++],
      timeoutMs: 5_000,
      intervalMs: 1,
    });
    assert.equal(probes, 3);
    assert.ok(took >= 0);
  });

  test('gives up at the deadline with the last problem; a rejected probe is a problem', async () => {
    let probes = 0;
    const error = await waitUntilReady({
      what: 'SeaweedFS at http://127.0.0.1:1',
      probe: async () => {
        probes += 1;
        if (probes % 2 === 0) throw new Error('ECONNREFUSED');
        return 'S3 not answering';
      },
      timeoutMs: 50,
      intervalMs: 5,
    }).catch((caught: unknown) => caught);
    assert.ok(error instanceof NotReadyError);
    assert.deepEqual(error.reason, { kind: 'timed-out' });
    assert.ok(['S3 not answering', 'ECONNREFUSED'].includes(error.lastProblem));
    assert.match(
      error.message,
      /^SeaweedFS at http:\/\/127\.0\.0\.1:1 did not become ready within 50 ms \(last problem: /,
    );
    assert.ok(probes >= 2, `probed ${probes} times`);
  });

  test('a timeout of 0 probes once', async () => {
    let probes = 0;
    await assert.rejects(
      waitUntilReady({ what: 'port 1', probe: async () => (probes++, 'in use'), timeoutMs: 0, intervalMs: 100 }),
      NotReadyError,
    );
    assert.equal(probes, 1);
  });

  test('the process exiting ends the wait at once, even during a long probe, quoting its output', async () => {
    const logFile = join(directory, 'server.log');
    writeFileSync(logFile, 'old run\n');
    const logOffset = 'old run\n'.length;
    writeFileSync(logFile, 'old run\nlisten tcp 127.0.0.1:7233: bind: address already in use\n');
    let exited = false;
    let exit: () => void = () => undefined;
    const process = {
      exitReason: () => (exited ? 'exited with code 1' : undefined),
      exited: new Promise<void>((resolveExit) => (exit = resolveExit)),
      logFile,
      logOffset,
    };
    setTimeout(() => {
      exited = true;
      exit();
    }, 20);
    const started = Date.now();
    const error = await waitUntilReady({
      what: 'The Temporal dev server',
      probe: () => new Promise<string>((resolveProbe) => setTimeout(() => resolveProbe('slow'), 10_000).unref()),
      timeoutMs: 60_000,
      process,
    }).catch((caught: unknown) => caught);
    assert.ok(Date.now() - started < 5_000, 'did not wait for the probe or the deadline');
    assert.ok(error instanceof NotReadyError);
    assert.deepEqual(error.reason, { kind: 'exited', exit: 'exited with code 1' });
    assert.equal(
      error.message,
      `The Temporal dev server exited with code 1 while starting (last problem: no answer yet). Last lines of ${logFile}:\nlisten tcp 127.0.0.1:7233: bind: address already in use`,
    );
  });

  test('a process without an exit promise is noticed between probes', async () => {
    let alive = true;
    let probes = 0;
    const error = await waitUntilReady({
      what: "Temporal's matching service",
      probe: async () => {
        probes += 1;
        if (probes === 2) alive = false;
        return 'not listening';
      },
      timeoutMs: 60_000,
      intervalMs: 1,
      process: { exitReason: () => (alive ? undefined : 'exited'), logFile: join(directory, 'none.log') },
    }).catch((caught: unknown) => caught);
    assert.ok(error instanceof NotReadyError);
    assert.equal(probes, 2);
    assert.match(
      error.message,
      /^Temporal's matching service exited while starting \(last problem: not listening\)\. Last lines of .*none\.log:\n\(the log is empty\)$/,
    );
  });
});
