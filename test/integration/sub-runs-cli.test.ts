import assert from 'node:assert/strict';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { STREAM_LINE_PREFIX } from '../../src/cli/streamed-text';
import { AgentEnvironment } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import { waitForToolLog } from './support/tool-log';

/**
 * Sub-runs (issue 30) through the CLI as a user runs it: `run --subruns 3` follows the lead and
 * its three sub-runs (each one's lines under its label), `follow` of the finished tree reads in
 * order, `status` lists the tree with each sub-run's budget, `result --output` names them.
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
}, 120_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

const cli = (argumentsList: string[]) =>
  CliProcess.complete(argumentsList, { environment: environment.environment, timeoutMs: 150_000 });

const THREE_PARTS = {
  tasks: [
    { question: 'BYD sales in 2024?' },
    { question: 'Tesla deliveries in 2024?' },
    { question: 'Who sold more?' },
  ],
};

/** A lead that delegates THREE_PARTS then answers; each sub-run looks its part up once, then answers. */
function leadScenario(id: string, subRunTool: ReturnType<typeof toolCall>): string {
  return scenarios.add(id, (turn, request) => {
    const workflowId = request.workflowId ?? '';
    if (workflowId.includes('/sub-')) return turn === 1 ? subRunTool : answer(`Part ${workflowId.slice(-1)} done.`);
    return turn === 1 ? toolCall('delegate', THREE_PARTS, 'Split it in three.') : answer('From the three reports.');
  });
}

/** The lines of `text` in order, each at least once: the index of each in `text`. */
function positions(text: string, lines: string[]): number[] {
  return lines.map((line) => {
    const at = text.indexOf(line);
    assert.notEqual(at, -1, `missing line ${JSON.stringify(line)} in:\n${text}`);
    return at;
  });
}

describe('sub-runs from the command line', () => {
  test('run --subruns 3 shows each sub-run’s steps under its label; follow, status and result show the tree', async () => {
    const id = leadScenario(runId('cli-subruns'), toolCall('lookup', { query: 'part' }, 'Look my part up.'));
    const ran = await cli(['run', 'BYD or Tesla in 2024?', '--subruns', '3', '--max-calls', '30', '--id', id]);
    assert.equal(ran.code, 0, ran.stderr);
    for (const task of [1, 2, 3]) {
      const label = `  [sub-1-${task}] `;
      const [started, called, tool, ended] = positions(ran.stderr, [
        `${label}started: ${THREE_PARTS.tasks[task - 1]?.question}`,
        `${label}[call 1] calling the model`,
        `${label}  tool call: lookup {"query":"part"}`,
        `${label}ended: answer after 2 model calls, 1 tool calls`,
      ]);
      assert.ok((started as number) < (called as number) && (called as number) < (tool as number));
      assert.ok((tool as number) < (ended as number));
      // The lead's next call is shown after every sub-run's end.
      assert.ok((ended as number) < ran.stderr.indexOf('\n[call 2] calling the model'), ran.stderr);
    }
    assert.match(ran.stdout, /Ended: answer after 2 model calls, 1 tool calls/);
    assert.match(ran.stdout, /Sub-runs: 3 \(6 model calls; their tokens and cost are in the totals\):/);
    for (const task of [1, 2, 3])
      assert.match(ran.stdout, new RegExp(`  ${id}/sub-1-${task}: answer, 2 model calls, [\\d,]+ tokens`));
    assert.match(ran.stdout, /Answer:\nFrom the three reports\./);

    // follow of the finished tree prints the same steps, in order: each sub-run whole before the lead's next call.
    const followed = await cli(['follow', id]);
    assert.equal(followed.code, 0, followed.stderr);
    const lines = followed.stderr.split('\n');
    const secondCall = lines.indexOf('[call 2] calling the model');
    for (const task of [1, 2, 3]) {
      const own = lines
        .map((line, index) => (line.startsWith(`  [sub-1-${task}] `) ? index : -1))
        .filter((index) => index >= 0);
      assert.ok(own.length >= 6, followed.stderr);
      assert.ok(
        own.every((index) => index < secondCall),
        followed.stderr,
      );
    }

    const status = await cli(['status', id]);
    assert.equal(status.code, 0, status.stderr);
    const described = JSON.parse(status.stdout);
    assert.equal(described.status, 'COMPLETED');
    assert.deepEqual(
      described.subRuns.map((subRun: { label: string }) => subRun.label),
      ['sub-1-1', 'sub-1-2', 'sub-1-3'],
    );
    for (const subRun of described.subRuns) {
      assert.equal(subRun.workflowId, `${id}/${subRun.label}`);
      assert.equal(subRun.status, 'COMPLETED');
      assert.equal(subRun.termination, 'answer');
      assert.equal(subRun.modelCalls, 2);
      assert.ok(subRun.maxModelCalls >= 2 && subRun.maxModelCalls < 30, JSON.stringify(subRun));
      assert.ok(subRun.totalTokens > 0, JSON.stringify(subRun));
    }

    const written = `${environment.directory}/cli-subruns.json`;
    const result = await cli(['result', id, '--output', written]);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /Sub-runs: 3 /);
    assert.match(result.stdout, new RegExp(`  ${id}/sub-1-3: answer`));
  }, 180_000);

  test('--subrun-depth 2: a sub-run’s own sub-run is followed under its path, and status lists it under its parent', async () => {
    const id = scenarios.add(runId('cli-subruns-deep'), (turn, request) => {
      const depth = (request.workflowId ?? '').split('/sub-').length - 1;
      if (depth === 2) return answer('The grandchild’s part.');
      if (depth === 1 && (request.workflowId ?? '').endsWith('-1') && turn === 1)
        return toolCall('delegate', { tasks: [{ question: 'A deeper part?' }] });
      if (depth === 1) return turn === 1 ? toolCall('lookup', { query: 'part' }) : answer('A part.');
      return turn === 1
        ? toolCall('delegate', { tasks: [{ question: 'First part?' }, { question: 'Second part?' }] })
        : answer('Both parts.');
    });
    const ran = await cli(['run', 'Two parts, one deep', '--subruns', '2', '--subrun-depth', '2', '--id', id]);
    assert.equal(ran.code, 0, ran.stderr);
    const [started, ended, parentNext] = positions(ran.stderr, [
      '  [sub-1-1/sub-1-1] started: A deeper part?',
      '  [sub-1-1/sub-1-1] ended: answer after 1 model calls',
      '  [sub-1-1] [call 2] calling the model',
    ]);
    assert.ok((started as number) < (ended as number) && (ended as number) < (parentNext as number), ran.stderr);
    assert.match(ran.stderr, /\[sub-1-2\] ended: answer after 2 model calls/);

    const status = await cli(['status', id]);
    assert.equal(status.code, 0, status.stderr);
    assert.deepEqual(
      JSON.parse(status.stdout).subRuns.map((subRun: { label: string; termination: string }) => [
        subRun.label,
        subRun.termination,
      ]),
      [
        ['sub-1-1', 'answer'],
        ['sub-1-1/sub-1-1', 'answer'],
        ['sub-1-2', 'answer'],
      ],
    );
  }, 180_000);

  test('status shows running sub-runs with their calls against their budgets; cancelling the lead ends them', async () => {
    const id = leadScenario(runId('cli-subruns-running'), toolCall('wait', { seconds: 60 }));
    const started = await cli(['start', 'Three slow parts', '--subruns', '3', '--max-calls', '40', '--id', id]);
    assert.equal(started.code, 0, started.stderr);
    for (const task of [1, 2, 3])
      await waitForToolLog(environment.toolLog, `${id}/sub-1-${task}`, (entries) =>
        entries.some((entry) => entry.event === 'start'),
      );
    const follower = CliProcess.start(['follow', id], { environment: environment.environment, timeoutMs: 150_000 });
    try {
      await follower.waitForStderr(/\[sub-1-3\] {3}tool call: wait/, 60_000);
      const status = await cli(['status', id]);
      assert.equal(status.code, 0, status.stderr);
      const described = JSON.parse(status.stdout);
      assert.equal(described.status, 'RUNNING');
      assert.equal(described.subRuns.length, 3, status.stdout);
      for (const subRun of described.subRuns) {
        assert.equal(subRun.status, 'RUNNING');
        assert.equal(subRun.modelCalls, 1);
        assert.ok(subRun.maxModelCalls > 1, JSON.stringify(subRun));
        assert.ok(subRun.totalTokens > 0, JSON.stringify(subRun));
      }
      const cancelled = await cli(['cancel', id]);
      assert.equal(cancelled.code, 0, cancelled.stderr);
      const { code } = await follower.exited;
      assert.equal(code, 0, follower.stderr);
      for (const task of [1, 2, 3]) assert.match(follower.stderr, new RegExp(`\\[sub-1-${task}\\] ended: cancelled`));
    } finally {
      follower.kill('SIGKILL');
    }
  }, 180_000);

  test('a sub-run’s text is shown under its label while it streams, before its end', async () => {
    const slowPart = Array.from(
      { length: 12 },
      (_, index) => `Clause ${String(index + 1).padStart(2, '0')} of the slow part.`,
    ).join(' ');
    const id = scenarios.add(runId('cli-subruns-stream'), (turn, request) => {
      if ((request.workflowId ?? '').includes('/sub-'))
        // About 4 s of streaming: the text reaches follow through the worker (or the heartbeat details).
        return { ...answer(slowPart), chunks: 40, delayBetweenChunksMs: 100 };
      return turn === 1 ? toolCall('delegate', { tasks: [{ question: 'The slow part?' }] }) : answer('Done.');
    });
    const ran = await cli(['run', 'One slow part', '--subruns', '1', '--id', id]);
    assert.equal(ran.code, 0, ran.stderr);
    const label = '  [sub-1-1] ';
    const streamed = ran.stderr
      .split('\n')
      .filter((line) => line.startsWith(`${label}${STREAM_LINE_PREFIX}`))
      .map((line) => line.slice(label.length + STREAM_LINE_PREFIX.length))
      .join(' ');
    assert.match(streamed, /Clause \d\d of the slow part/, ran.stderr);
    const [text, ended] = positions(ran.stderr, [
      `${label}${STREAM_LINE_PREFIX}`,
      `${label}ended: answer after 1 model calls`,
    ]);
    assert.ok((text as number) < (ended as number), ran.stderr);
  }, 180_000);
});
