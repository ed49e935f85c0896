import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { AgentEnvironment, protocolProblems } from '../integration/support/agent-environment';
import { answer, runId, Scenarios, toolCall } from '../integration/support/scenarios';
import { docxBomb, pdfBomb } from '../fakes/documents';

/**
 * Issue 28, row 2: document bombs. A run's model asks parse_file (and visit) for a .docx of a
 * few hundred KB that inflates to 24 MB of paragraphs, and for a PDF whose one content stream
 * inflates to 128 MB. Today's worker parses them on its main thread (minutes, gigabytes; a
 * larger one kills it); now each is refused with an observation the model can read, the worker
 * stays alive and serves another run meanwhile, and no large blob is stored.
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;
let workspace: string;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  workspace = join(environment.directory, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'bomb.docx'), docxBomb(24));
  writeFileSync(join(workspace, 'bomb.pdf'), pdfBomb(128));
  writeFileSync(join(workspace, 'notes.md'), '# Notes\n\nBYD sold 4,272,145 vehicles in 2024.\n');
  await environment.startWorker({
    REACT_AGENT_TOOLS: 'parse_file,visit',
    REACT_AGENT_WORKSPACE_DIRS: workspace,
    REACT_AGENT_VISIT_FILE_DIRS: workspace,
    // A smaller budget than the default 256 MB, so the PDF's inflation is stopped in seconds.
    REACT_AGENT_DOCUMENT_MAX_BINARY_BYTES: String(32 * 1024 * 1024),
  });
}, 120_000);

afterAll(async () => {
  await environment?.close();
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Every file under `directory` with its size. */
function filesUnder(directory: string): { path: string; bytes: number }[] {
  return readdirSync(directory, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const path = join(entry.parentPath, entry.name);
      return { path, bytes: statSync(path).size };
    });
}

test('a docx bomb and a PDF bomb get "too large" observations; the worker lives and serves another run meanwhile; no large blob is stored', async () => {
  const bombs = scenarios.add(runId('document-bombs'), [
    toolCall('parse_file', { files: ['bomb.docx'] }),
    toolCall('parse_file', { files: ['bomb.pdf'] }),
    toolCall('visit', { url: `file://${join(workspace, 'bomb.pdf')}` }),
    answer('The documents were too large to read.'),
  ]);
  const other = scenarios.add(runId('document-neighbour'), [
    toolCall('parse_file', { files: ['notes.md'] }),
    answer('BYD sold 4,272,145 vehicles in 2024.'),
  ]);

  const bombRun = await environment.startRun({ question: 'Summarise bomb.docx and bomb.pdf.' }, bombs);
  const startedAt = Date.now();
  const neighbourRun = await environment.startRun({ question: 'How many vehicles did BYD sell in 2024?' }, other);
  const neighbour = await neighbourRun.result();
  const neighbourSeconds = (Date.now() - startedAt) / 1000;
  const result = await bombRun.result();

  const worker = environment.workers[0];
  assert.ok(worker && isAlive(worker.pid), `the worker is still alive; its log:\n${worker?.log.slice(-3000)}`);
  assert.doesNotMatch(worker.log, /heap out of memory|ERR_WORKER_OUT_OF_MEMORY|FATAL ERROR/);

  assert.equal(neighbour.termination, 'answer');
  assert.ok(
    neighbourSeconds < 60,
    `the other run answered in ${neighbourSeconds.toFixed(1)} s, while the bombs were being read`,
  );
  assert.match((await environment.transcript(neighbour))[3]?.content ?? '', /4,272,145/);

  assert.equal(result.termination, 'answer');
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(messages[3]?.content ?? '', /bomb\.docx is too large to read: it inflates past 16 MB/);
  assert.match(
    messages[5]?.content ?? '',
    /bomb\.pdf is too large to read: its content inflates past 32 MB of binary data/,
  );
  assert.match(messages[7]?.content ?? '', /could not visit file:\/\/\S+bomb\.pdf: bomb\.pdf is too large to read/);

  // Each refusal is one attempt: an observation, never retried.
  const history = await bombRun.fetchHistory();
  const failedAttempts = (history.events ?? []).filter(
    (event) => event.activityTaskFailedEventAttributes || event.activityTaskTimedOutEventAttributes,
  );
  assert.equal(failedAttempts.length, 0, 'no tool attempt failed or timed out');

  const largest = filesUnder(join(environment.directory, 'transcripts')).sort((a, b) => b.bytes - a.bytes)[0];
  assert.ok(
    !largest || largest.bytes < 1024 * 1024,
    `no stored blob is large; the largest is ${largest?.path} (${largest?.bytes} bytes)`,
  );
}, 300_000);
