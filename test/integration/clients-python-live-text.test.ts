import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { temporal } from '@temporalio/proto';
import { AgentEnvironment } from './support/agent-environment';
import { runId, Scenarios } from './support/scenarios';

/**
 * The Python live text sample (samples/clients/python/live_text.py, issue 32) against the real
 * dev server, a real worker and the scripted model: it describes the run, finds the live text URL
 * in the model call's heartbeat details, reads the worker's stream with the standard library, and
 * prints the call's text while the call still streams.
 */
const EventType = temporal.api.enums.v1.EventType;
const root = resolve(__dirname, '../..');
const python = join(root, '.tools/python-client-venv/bin/python');
const sample = join(root, 'samples/clients/python/live_text.py');
const scenarios = new Scenarios();
let environment: AgentEnvironment;

beforeAll(async () => {
  if (!existsSync(python))
    throw new Error(`The Python client sample is not installed (${python} is missing). Run 'npm run setup'.`);
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker();
}, 180_000);

afterAll(async () => {
  await environment?.close();
});

test('Python: the live text of a 5 s model call, read from the worker, printed before the call completes', async () => {
  const thought = Array.from({ length: 50 }, (_, index) => `Python sentence ${index + 1}.`).join(' ');
  const content = `<think>${thought}</think>\n<answer>Read live.</answer>`;
  const id = scenarios.add(runId('python-live-text'), [{ content, chunks: 50, delayBetweenChunksMs: 100 }]);
  await environment.startRun({ question: 'Stream slowly.' }, id);
  const child = spawn(python, [sample, id], {
    cwd: root,
    env: { ...process.env, ...environment.environment },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: Array<{ at: number; line: Record<string, unknown> }> = [];
  let held = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => {
    held += data.toString();
    for (let newline = held.indexOf('\n'); newline !== -1; newline = held.indexOf('\n')) {
      lines.push({ at: Date.now(), line: JSON.parse(held.slice(0, newline)) as Record<string, unknown> });
      held = held.slice(newline + 1);
    }
  });
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const code = await new Promise<number | null>((resolveCode) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (exitCode) => {
      clearTimeout(timer);
      resolveCode(exitCode);
    });
  });
  assert.equal(code, 0, stderr);

  const history = await environment.client.workflow.getHandle(id).fetchHistory();
  const completed = (history.events ?? []).find(
    (event) =>
      event.eventType === EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED &&
      (history.events ?? []).some(
        (scheduled) =>
          String(scheduled.eventId) === String(event.activityTaskCompletedEventAttributes?.scheduledEventId) &&
          scheduled.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel',
      ),
  );
  const completedAt =
    Number(completed?.eventTime?.seconds) * 1000 + Math.floor((completed?.eventTime?.nanos ?? 0) / 1e6);
  const texts = lines.filter(({ line }) => typeof line.text === 'string');
  assert.match(String(lines[0]?.line.source), /^direct$/, JSON.stringify(lines.slice(0, 3)));
  assert.ok(texts.length > 10, JSON.stringify(lines));
  assert.ok(
    (texts[0] as { at: number }).at < completedAt - 1_000,
    `first text ${completedAt - (texts[0] as { at: number }).at} ms before the call completed`,
  );
  assert.equal(texts.map(({ line }) => line.text).join(''), content);
  assert.ok(texts.every(({ line }) => line.call === 1 && line.kind === 'content'));
}, 120_000);
