import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { ApplicationFailure, WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { EvaluationWorkflowInput } from '../../src/core/evaluation/evaluation-contract';
import { WorkflowTypes, type EvaluationWorkflow } from '../../src/core/workflow-types';
import { PROJECT_ROOT } from '../../src/config/project-root';
import { AgentEnvironment } from '../integration/support/agent-environment';
import { answerReply, batchId, questions, startBatch } from '../integration/support/batch-helpers';
import type { WorkerProcess } from '../integration/support/worker-process';

/*
 * Issue 28, row 10: files a client names in a workflow's input. An attacker with a Temporal
 * client starts `evaluation` and `researchBatch` workflows directly (no CLI in between) naming
 * files and folders outside the worker's data roots. Each is refused by a non-retryable failure
 * of a clear type naming the path and the roots; the refusal holds nothing of the file and is the
 * same whether the file exists or not; nothing is written outside; the worker lives on and still
 * evaluates what is inside the roots.
 */
let environment: AgentEnvironment;
let worker: WorkerProcess;
/** A folder outside the data roots (the environment's folder and the project), with a canary file in it. */
let outside: string;
/** How every canary file starts; nothing else the test sends says it. */
const CANARY_PREFIX = 'CANARY';
/** The first characters of every canary file: what messages used to quote. */
const canary = `${CANARY_PREFIX}${randomBytes(6).toString('hex')}`;
/** A folder that does not exist yet, outside the roots: a batch output there must never be made. */
let elsewhere: string;

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    // A judge prompt that reached the model would be answered; research runs answer at once.
    script: (request) =>
      String(request.messages[0]?.content ?? '').includes(canary) ? { content: 'Correct' } : answerReply('Paris'),
  });
  worker = await environment.startWorker();
  outside = mkdtempSync(join(tmpdir(), 'react-agent-outside-'));
  writeFileSync(join(outside, 'secret.jsonl'), `${canary} the rest of a private file\n`);
  writeFileSync(join(outside, 'judge.txt'), `${canary} Is {prediction} right? Answer Correct or Incorrect.\n`);
  elsewhere = join(tmpdir(), `react-agent-elsewhere-${randomBytes(6).toString('hex')}`);
  // A batch's output inside the roots that the evaluations may read.
  mkdirSync(join(environment.directory, 'batch'), { recursive: true });
  writeFileSync(
    join(environment.directory, 'batch', 'iter1.jsonl'),
    `${JSON.stringify({ question: 'Capital of France?', answer: 'Paris', prediction: 'Paris', termination: 'answer' })}\n`,
  );
  // Links inside the roots that lead out of them.
  symlinkSync(join(outside, 'secret.jsonl'), join(environment.directory, 'escape.jsonl'));
  symlinkSync(outside, join(environment.directory, 'escape-folder'));
  symlinkSync(join(outside, 'no-such-file.jsonl'), join(environment.directory, 'dangling.jsonl'));
  symlinkSync(elsewhere, join(environment.directory, 'output-link'));
  // A batch folder inside whose iter file leads out.
  mkdirSync(join(environment.directory, 'linked-batch'));
  symlinkSync(join(outside, 'secret.jsonl'), join(environment.directory, 'linked-batch', 'iter1.jsonl'));
}, 180_000);

afterAll(async () => {
  await environment?.close();
  if (outside) rmSync(outside, { recursive: true, force: true });
  if (elsewhere) rmSync(elsewhere, { recursive: true, force: true });
});

let sequence = 0;

/** Starts an evaluation as a client would, straight through Temporal. */
async function startEvaluation(input: EvaluationWorkflowInput): Promise<WorkflowHandle<EvaluationWorkflow>> {
  sequence += 1;
  return environment.client.workflow.start<EvaluationWorkflow>(WorkflowTypes.evaluation, {
    taskQueue: environment.taskQueue,
    workflowId: `hostile-evaluation-${process.pid}-${sequence}`,
    args: [input],
  });
}

interface Refusal {
  type: string | undefined;
  message: string;
  /** The workflow's whole history as text, payloads decoded. */
  history: string;
  /** What the worker logged while the workflow ran. */
  log: string;
}

/** The application failure that ended a workflow (through the activity failure), its history, and the worker's log since `logFrom`. */
async function refusal(handle: WorkflowHandle, logFrom: number): Promise<Refusal> {
  const error = await handle.result().then(
    () => undefined,
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof WorkflowFailedError, `the workflow did not fail: ${String(error)}`);
  let cause: unknown = error.cause;
  while (cause && !(cause instanceof ApplicationFailure)) cause = (cause as Error).cause;
  assert.ok(cause instanceof ApplicationFailure, `no application failure in ${String(error.cause)}`);
  const history = await handle.fetchHistory();
  const text = JSON.stringify(history, (_key, value: unknown) =>
    value instanceof Uint8Array ? Buffer.from(value).toString('utf8') : value,
  );
  return { type: cause.type ?? undefined, message: cause.message, history: text, log: worker.log.slice(logFrom) };
}

/** What a refusal of `path` must say, and must not. */
function assertClearRefusal(refused: Refusal, type: string, path: string): void {
  const texts: Array<[string, string]> = [
    ['the message', refused.message],
    ['the history', refused.history],
    ["the worker's log", refused.log],
  ];
  for (const [where, text] of texts) {
    // V8's parse errors quoted the first 10 characters: CANARY and 4 more.
    assert.ok(!text.includes(CANARY_PREFIX), `a canary file leaked into ${where}: ${refused.message}`);
    assert.ok(!text.includes('root:x:0'), `/etc/passwd leaked into ${where}: ${refused.message}`);
    assert.ok(!/root:[*!$]/.test(text), `/etc/shadow leaked into ${where}: ${refused.message}`);
  }
  assert.equal(refused.type, type, refused.message);
  assert.ok(refused.message.includes(JSON.stringify(path)), `the message names the path: ${refused.message}`);
  assert.ok(
    refused.message.includes(environment.directory) && refused.message.includes(PROJECT_ROOT),
    `the message names the roots: ${refused.message}`,
  );
  assert.match(refused.message, /REACT_AGENT_DATA_ROOTS/);
  // One attempt: a refusal is not retried.
  assert.equal(
    (refused.history.match(/"activityTaskFailedEventAttributes"/g) ?? []).length,
    1,
    'the refused activity ran once',
  );
}

/** Evaluates `path` (exact match, output inside the roots) and returns the refusal. */
async function refusedEvaluation(input: Partial<EvaluationWorkflowInput>): Promise<Refusal> {
  const logFrom = worker.log.length;
  return refusal(
    await startEvaluation({
      paths: [join(environment.directory, 'batch')],
      output: join(environment.directory, `evaluation-${sequence + 1}`),
      judge: 'exact_match',
      ...input,
    }),
    logFrom,
  );
}

const PATH_OUTSIDE = 'ReactAgent.Evaluation.PathOutsideDataRoots';

test('/etc/passwd as an evaluation input is refused without a character of it, the same as a file that does not exist', async () => {
  const passwd = await refusedEvaluation({ paths: ['/etc/passwd'] });
  const missing = await refusedEvaluation({ paths: ['/etc/no-such-file-react-agent'] });
  assertClearRefusal(passwd, PATH_OUTSIDE, '/etc/passwd');
  assertClearRefusal(missing, PATH_OUTSIDE, '/etc/no-such-file-react-agent');
  assert.equal(
    passwd.message.replace('/etc/passwd', 'PATH'),
    missing.message.replace('/etc/no-such-file-react-agent', 'PATH'),
  );
}, 120_000);

test('/etc/shadow, or a prompt file outside the roots, as the judge is refused before it is read or sent to the judge', async () => {
  const shadow = await refusedEvaluation({ judge: '/etc/shadow' });
  const missing = await refusedEvaluation({ judge: '/etc/no-such-judge' });
  // Whether /etc/shadow exists (and is readable) must not show.
  assert.equal(shadow.message.replace('/etc/shadow', 'PATH'), missing.message.replace('/etc/no-such-judge', 'PATH'));
  assertClearRefusal(shadow, PATH_OUTSIDE, '/etc/shadow');
  assertClearRefusal(missing, PATH_OUTSIDE, '/etc/no-such-judge');
  const prompt = join(outside, 'judge.txt');
  assertClearRefusal(await refusedEvaluation({ judge: prompt }), PATH_OUTSIDE, prompt);
  assert.ok(
    !environment.model.requests.some((request) => JSON.stringify(request.messages).includes(canary)),
    'the outside prompt file reached the judge',
  );
}, 120_000);

test('a link inside the roots that leads out (to a file, through a folder, or nowhere) is refused the same way, without telling where it leads', async () => {
  const messages: string[] = [];
  for (const path of [
    join(environment.directory, 'escape.jsonl'),
    join(environment.directory, 'escape-folder', 'secret.jsonl'),
    join(environment.directory, 'dangling.jsonl'),
  ]) {
    const refused = await refusedEvaluation({ paths: [path] });
    assertClearRefusal(refused, PATH_OUTSIDE, path);
    assert.ok(!refused.message.includes(outside), `the message tells where the link leads: ${refused.message}`);
    messages.push(refused.message.replace(path, 'PATH'));
  }
  assert.equal(new Set(messages).size, 1, messages.join('\n'));
  // A folder inside the roots whose iter file is such a link: the file is refused, by the name it was found under.
  const linkedBatch = await refusedEvaluation({ paths: [join(environment.directory, 'linked-batch')] });
  assertClearRefusal(linkedBatch, PATH_OUTSIDE, join(environment.directory, 'linked-batch', 'iter1.jsonl'));
}, 120_000);

test('`..` out of the data directory is refused', async () => {
  for (const path of [
    `${environment.directory}/../../etc/passwd`,
    `${environment.directory}/batch/../../${outside.split('/').pop() as string}/secret.jsonl`,
  ]) {
    assertClearRefusal(await refusedEvaluation({ paths: [path] }), PATH_OUTSIDE, path);
  }
}, 120_000);

test("an evaluation's output outside the roots is refused before anything is written", async () => {
  const output = join(elsewhere, 'evaluation');
  assertClearRefusal(await refusedEvaluation({ output }), PATH_OUTSIDE, output);
  assert.equal(existsSync(elsewhere), false, `${elsewhere} was made`);
}, 120_000);

test("a batch's output in /tmp/elsewhere, directly or through a link, is refused: no run starts and nothing is written there", async () => {
  const requestsBefore = environment.model.requests.length;
  for (const output of [elsewhere, join(environment.directory, 'output-link')]) {
    const logFrom = worker.log.length;
    const handle = await startBatch(environment, batchId('hostile-output'), questions(2), {
      rollouts: 1,
      concurrency: 2,
      output,
    });
    assertClearRefusal(await refusal(handle, logFrom), 'ReactAgent.Batch.OutputOutsideDataRoots', output);
    assert.equal(existsSync(elsewhere), false, `${elsewhere} was made`);
  }
  assert.equal(environment.model.requests.length, requestsBefore, 'a run of a refused batch called the model');
}, 120_000);

test('the worker is alive after every attack and still evaluates a batch inside the roots', async () => {
  process.kill(worker.pid, 0); // throws when the process is gone
  const output = join(environment.directory, 'evaluation-inside');
  const outcome = await (
    await startEvaluation({ paths: [join(environment.directory, 'batch')], output, judge: 'exact_match' })
  ).result();
  assert.equal(outcome.headline.meanPassAt1, 1);
  assert.ok(readdirSync(output).includes('report.json'));
}, 120_000);
