import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, test } from '@jest/globals';
import { WorkflowFailedError, type WorkflowHandle } from '@temporalio/client';
import type { ResearchRunInput } from '../../src/core/run-input';
import type { ResearchRunResult } from '../../src/core/run-result';
import { AgentEnvironment } from '../integration/support/agent-environment';
import { answer, runId, Scenarios } from '../integration/support/scenarios';

/**
 * Issue 28 #1 and #8, and "a poison pill ends its own run, never a worker": a client's answer
 * schema sent straight to Temporal (no client-side check) at TWO real worker processes. A
 * backtracking pattern, an invalid pattern, a schema nested 4,900 deep and a malformed schema that
 * trips the workflow's own code each end their run quickly with a clear result, and both workers
 * stay alive and keep serving runs.
 */

const scenarios = new Scenarios();
let environment: AgentEnvironment;
/** Each attack must end well within this; on the code before issue 28 the first two never ended. */
const QUICKLY_MS = 60_000;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await Promise.all([environment.startWorker(), environment.startWorker()]);
}, 180_000);

afterAll(async () => {
  await environment?.close();
}, 60_000);

/** The run's result, or a failure saying it did not end in time (the run is terminated then, so it harms no later test). */
async function resultWithin(handle: WorkflowHandle, ms = QUICKLY_MS): Promise<ResearchRunResult> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`the run did not end within ${ms / 1000} s`)), ms);
  });
  try {
    return (await Promise.race([handle.result(), timeout])) as ResearchRunResult;
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('the run did not end'))
      await handle.terminate('hostile test: did not end in time').catch(() => undefined);
    throw error;
  } finally {
    clearTimeout(timer);
  }
}

/** The failure a run ended with (it must have failed, within the time). */
async function failureWithin(handle: WorkflowHandle): Promise<{ type?: string; message: string }> {
  const outcome = await resultWithin(handle).then(
    (result) => ({ result }),
    (error: unknown) => ({ error }),
  );
  assert.ok(
    'error' in outcome,
    `the run should have been refused, but ended ${JSON.stringify('result' in outcome ? outcome.result.termination : '')}`,
  );
  assert.ok(outcome.error instanceof WorkflowFailedError, `the run should have failed, got ${String(outcome.error)}`);
  const cause = outcome.error.cause as { type?: string; message: string };
  return { type: cause.type, message: cause.message };
}

/** Every worker process is still running, and none logged a crash. */
function assertWorkersAlive(): void {
  for (const worker of environment.workers) {
    assert.doesNotThrow(() => process.kill(worker.pid, 0), `worker ${worker.pid} is gone:\n${worker.log.slice(-2000)}`);
    assert.doesNotMatch(
      worker.log,
      /async hook stack has become corrupted|Maximum call stack size exceeded|FATAL ERROR/,
      `worker ${worker.pid} logged a crash`,
    );
  }
}

/** A normal run with an answer schema, started the same way, is answered. */
async function assertNormalRunAnswered(label: string): Promise<WorkflowHandle> {
  const workflowId = scenarios.add(runId(label), [answer('{"x": "aaaa"}')]);
  const handle = await environment.startRun(
    {
      question: 'A normal question',
      answerSchema: { type: 'object', properties: { x: { type: 'string', pattern: '^(a+)+$' } } },
    },
    workflowId,
  );
  const result = await resultWithin(handle);
  assert.equal(result.termination, 'answer', result.error);
  assert.deepEqual(result.parsedAnswer, { x: 'aaaa' });
  return handle;
}

/** Starts a run straight through Temporal's API with the input as JSON text: what any client in any language can send. */
async function startRaw(workflowId: string, inputJson: string): Promise<WorkflowHandle> {
  await environment.client.workflowService.startWorkflowExecution({
    namespace: 'default',
    workflowId,
    workflowType: { name: 'researchAgent' },
    taskQueue: { name: environment.taskQueue },
    input: { payloads: [{ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(inputJson) }] },
    identity: 'hostile-client',
    requestId: randomUUID(),
  });
  return environment.client.workflow.getHandle(workflowId);
}

const schemaWithPattern = (pattern: string) => ({
  type: 'object',
  properties: { x: { type: 'string', pattern } },
  required: ['x'],
});

test('#1 a backtracking pattern (^(a+)+$) against "aaaa…a!": matched in linear time, the run ends error saying why; both workers live on', async () => {
  const workflowId = scenarios.add(runId('redos'), [answer(JSON.stringify({ x: `${'a'.repeat(64)}!` }))]);
  const started = Date.now();
  const input: ResearchRunInput = {
    question: 'Anything',
    answerSchema: schemaWithPattern('^(a+)+$'),
    loop: { answerAttempts: 2 },
  };
  const result = await resultWithin(await environment.startRun(input, workflowId));
  assert.equal(result.termination, 'error');
  assert.match(
    result.error ?? '',
    /did not match the answer schema after 2 attempts: \$\.x must match \/\^\(a\+\)\+\$\//,
  );
  assert.ok(Date.now() - started < QUICKLY_MS);
  assert.equal(environment.requestsOf(workflowId).length, 2);
  assertWorkersAlive();
  await assertNormalRunAnswered('after-redos');
  assertWorkersAlive();
}, 180_000);

test('#8 an invalid pattern is refused at input with InvalidInput naming the field; the model is never called', async () => {
  const workflowId = scenarios.add(runId('invalid-pattern'), [answer('{"x": "abc"}')]);
  const handle = await environment.startRun(
    { question: 'Anything', answerSchema: schemaWithPattern('((') },
    workflowId,
  );
  const failure = await failureWithin(handle);
  assert.equal(failure.type, 'ReactAgent.Run.InvalidInput');
  assert.match(
    failure.message,
    /answerSchema\.properties\.x\.pattern is not a pattern this agent can check \(missing closing \)/,
  );
  assert.equal(environment.requestsOf(workflowId).length, 0);
  // Lookaround and backreferences: valid JavaScript, but not linear-time; refused the same way.
  const lookahead = await failureWithin(
    await environment.startRun(
      { question: 'Anything', answerSchema: schemaWithPattern('^(?=a)a$') },
      scenarios.add(runId('lookahead'), [answer('{"x": "a"}')]),
    ),
  );
  assert.match(lookahead.message, /answerSchema\.properties\.x\.pattern is not a pattern this agent can check/);
  assertWorkersAlive();
  await assertNormalRunAnswered('after-invalid-pattern');
}, 180_000);

test('#8 a schema nested 4,900 deep is refused at input with InvalidInput, not retried', async () => {
  const workflowId = scenarios.add(runId('deep-schema'), [answer('{"a": {}}')]);
  const depth = 4_900;
  const deepSchema = `${'{"type":"object","properties":{"a":'.repeat(depth)}{}${'}}'.repeat(depth)}`;
  const started = Date.now();
  const failure = await failureWithin(
    await startRaw(workflowId, `{"question":"Anything","answerSchema":${deepSchema}}`),
  );
  assert.equal(failure.type, 'ReactAgent.Run.InvalidInput');
  assert.match(failure.message, /answerSchema is nested more than 32 levels deep/);
  assert.ok(Date.now() - started < QUICKLY_MS);
  assert.equal(environment.requestsOf(workflowId).length, 0);
  assertWorkersAlive();
  await assertNormalRunAnswered('after-deep-schema');
}, 180_000);

test("a poison pill the input checks let through (a malformed schema that trips the workflow's own code) ends its own run error with the reason", async () => {
  // `anyOf: [null]` is not a schema; reading it throws a TypeError inside the workflow.
  const workflowId = scenarios.add(runId('poison-pill'), [answer('{"x": 1}')]);
  const result = await resultWithin(
    await environment.startRun(
      { question: 'Anything', answerSchema: { type: 'object', properties: { x: { anyOf: [null] } } } },
      workflowId,
    ),
  );
  assert.equal(result.termination, 'error');
  assert.match(
    result.error ?? '',
    /^The run's workflow code failed on this run's data \(TypeError: .+\); it would fail the same way on every worker, so the run ends here\.$/,
  );
  const transcript = await environment.transcript(result);
  assert.equal(transcript.at(-1)?.role, 'assistant', 'the transcript was closed with the last reply');
  assertWorkersAlive();
  await assertNormalRunAnswered('after-poison-pill');
}, 180_000);

test('both workers still serve runs after every attack', async () => {
  assertWorkersAlive();
  // Whichever worker served a normal run is stopped; the next run must then be served by the other.
  const served = await identitiesServing(await assertNormalRunAnswered('served-1'));
  const [first, second] = environment.workers;
  const firstServed = served.has(`${first?.pid}`);
  await (firstServed ? first : second)?.stop();
  const next = await identitiesServing(await assertNormalRunAnswered('served-2'));
  assert.ok(
    next.has(`${(firstServed ? second : first)?.pid}`),
    `the other worker served the last run (served by ${[...next].join(', ')})`,
  );
}, 240_000);

/** The process ids of the workers that completed the run's workflow tasks (a worker's identity is `pid@host`). */
async function identitiesServing(handle: WorkflowHandle): Promise<Set<string>> {
  const history = await handle.fetchHistory();
  const identities = (history.events ?? [])
    .map((event) => event.workflowTaskCompletedEventAttributes?.identity)
    .filter((identity): identity is string => !!identity);
  return new Set(identities.map((identity) => identity.split('@')[0] as string));
}
