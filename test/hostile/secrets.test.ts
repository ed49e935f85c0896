/**
 * Hostile input, secrets (issue 28, rows 6, 12 and 15): a model server whose 401 echoes the key,
 * an MCP server that sends its `${VAR}` secret back encoded and in its tool's description, and a
 * model URL with credentials. Each time the run ends clearly, the worker lives on, and the secret
 * is nowhere a user could find it: the decoded history (every payload and failure), the result,
 * the worker's stdout and stderr, the transcript directory, what the model was sent, the CLI's
 * output.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import type { researchAgent } from '../../workflows/research-agent';
import { AgentEnvironment } from '../integration/support/agent-environment';
import { CliProcess } from '../integration/support/cli-process';
import { historyText } from '../integration/support/mcp-servers';
import { answer, runId, Scenarios, toolCall } from '../integration/support/scenarios';
import type { WorkerProcess } from '../integration/support/worker-process';

const scenarios = new Scenarios();
let environment: AgentEnvironment;

/** A key no code of the project knows: if any of its forms shows up anywhere, it leaked. */
const canary = (prefix: string) => `${prefix}-canary-${randomBytes(16).toString('hex')}`;
const MODEL_KEY = canary('sk');
const MCP_TOKEN = canary('mcp');
const URL_PASSWORD = canary('pw');

/**
 * The forms of `secret` found in `text`, by name. Computed here, apart from the product's
 * redactor: the literal, reversed, spaced out, hex, percent-encoded, base64 and base64url (whole,
 * and the part that stays the same inside a longer encoded text such as `Basic base64(user:secret)`).
 */
function leakedForms(text: string, secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const inBasicAuthorization = Buffer.from(`agent:${secret}`).toString('base64').slice(8, -4);
  const forms: Record<string, string> = {
    literal: secret,
    reversed: [...secret].reverse().join(''),
    spaced: [...secret].join(' '),
    hex: bytes.toString('hex'),
    percentEncoded: [...bytes].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join(''),
    base64: bytes.toString('base64').slice(0, -4),
    base64url: bytes.toString('base64url').slice(0, -4),
    inBasicAuthorization,
  };
  return Object.entries(forms)
    .filter(([, form]) => text.toLowerCase().includes(form.toLowerCase()))
    .map(([name]) => name);
}

/** Every file under `directory`, as text. */
function filesText(directory: string): string {
  return readdirSync(directory)
    .map((name) => join(directory, name))
    .map((path) => (statSync(path).isDirectory() ? filesText(path) : readFileSync(path, 'utf8')))
    .join('\n');
}

/** Where a user would look, each as text: the decoded history, the result, the worker's log, the transcripts. */
async function placesToLook(
  workflowId: string,
  result: ResearchRunResult,
  worker: WorkerProcess,
): Promise<Record<string, string>> {
  const history = await environment.client.workflow.getHandle(workflowId).fetchHistory();
  return {
    history: historyText(history),
    result: JSON.stringify(result),
    'worker log': worker.log,
    transcripts: filesText(join(environment.directory, 'transcripts')),
    // What the model was sent (the key goes in the authorization header by design: left out).
    'model requests': JSON.stringify(environment.requestsOf(workflowId).map((request) => request.body)),
  };
}

function assertNoLeak(places: Record<string, string>, secret: string): void {
  const leaks = Object.entries(places).flatMap(([place, text]) =>
    leakedForms(text, secret).map((form) => `${form} in ${place}`),
  );
  assert.deepEqual(leaks, [], `the secret leaked: ${leaks.join(', ')}`);
}

/** Runs `body` with a worker of this environment (with `extra` variables), stopped afterwards whatever happens, so the next test's runs do not reach it. */
async function withWorker(
  extra: Record<string, string>,
  body: (worker: WorkerProcess) => Promise<void>,
): Promise<void> {
  const worker = await environment.startWorker(extra);
  try {
    await body(worker);
  } finally {
    await worker.stop();
  }
}

function assertAlive(worker: WorkerProcess): void {
  assert.doesNotThrow(() => process.kill(worker.pid, 0), 'the worker process is still running');
}

beforeAll(async () => {
  environment = await AgentEnvironment.start({
    script: scenarios.script,
    workerEnvironment: { OPENAI_API_KEY: MODEL_KEY },
  });
});

afterAll(async () => {
  await environment?.close();
});

test('a model server that echoes the key, in its 401 and in a reply: the first run ends with error naming OPENAI_API_KEY, the next answers, and the key is nowhere', async () => {
  await withWorker({}, async (worker) => {
    const basic = Buffer.from(`agent:${MODEL_KEY}`).toString('base64');
    const workflowId = scenarios.add(runId('echoed-key'), [
      {
        status: 401,
        errorMessage: `Incorrect API key provided: ${MODEL_KEY}. (proxy: Authorization: ${basic}; key as base64: ${Buffer.from(MODEL_KEY).toString('base64')})`,
      },
    ]);
    const handle = await environment.startRun({ question: 'Who am I?' }, workflowId);
    const result = await handle.result();

    assert.equal(result.termination, 'error');
    assert.match(
      result.error ?? '',
      /rejected the request with 401: 401 Incorrect API key provided: \[redacted\]\. \(proxy: Authorization: YWdlbnQ6\[redacted\]; key as base64: \[redacted\]\)/,
    );
    assert.match(result.error ?? '', /Check OPENAI_API_KEY/);
    assertNoLeak(await placesToLook(workflowId, result, worker), MODEL_KEY);

    // The worker lives on and serves the next run, whose reply echoes the key (in its reasoning and
    // its answer): the answer arrives with the key taken out.
    assertAlive(worker);
    const next = scenarios.add(runId('echoed-key-in-reply'), [
      answer(`Your key is ${MODEL_KEY}.`, `The request came with ${MODEL_KEY}.`),
    ]);
    const nextResult = await (await environment.startRun({ question: 'What is my key?' }, next)).result();
    assert.equal(nextResult.termination, 'answer');
    assert.equal(nextResult.prediction, 'Your key is [redacted].');
    assertNoLeak(await placesToLook(next, nextResult, worker), MODEL_KEY);
  });
});

test('an MCP server that sends its ${VAR} secret back encoded and in its tool description: no form of it reaches the model, history, log or transcripts', async () => {
  const config = join(environment.directory, 'secret-echo-mcp.json');
  writeFileSync(
    config,
    JSON.stringify({
      mcpServers: {
        echo: {
          command: process.execPath,
          args: [join(__dirname, 'support/secret-echo-mcp-server.mjs')],
          env: { SECRET_ECHO_TOKEN: '${HOSTILE_MCP_TOKEN}' },
        },
      },
    }),
  );
  await withWorker(
    { REACT_AGENT_MCP_CONFIG: config, REACT_AGENT_TOOLS: 'mcp:echo', HOSTILE_MCP_TOKEN: MCP_TOKEN },
    async (worker) => {
      const workflowId = scenarios.add(runId('mcp-echo'), [
        toolCall('whoami', {}),
        answer('The server would not say.'),
      ]);
      const handle = await environment.startRun({ question: 'Who am I to the echo server?' }, workflowId);
      const result = await handle.result();

      assert.equal(result.termination, 'answer');
      const messages = await environment.transcript(result);
      // The tool and its result reached the model, with every form of the secret taken out.
      assert.match(messages[0]?.content ?? '', /Says who the agent is\. Token: \[redacted\]; as base64: \[redacted\]/);
      assert.match(messages[3]?.content ?? '', /literal: \[redacted\]\nbase64: \[redacted\]/);
      assertNoLeak(await placesToLook(workflowId, result, worker), MCP_TOKEN);
      assertAlive(worker);
    },
  );
});

test('credentials in OPENAI_BASE_URL: masked in the worker banner, the run errors and the CLI error', async () => {
  const withCredentials = environment.model.baseUrl.replace('http://', `http://agent:${URL_PASSWORD}@`);
  const taskQueue = `${environment.taskQueue}-credentials`;
  await withWorker(
    { OPENAI_BASE_URL: withCredentials, REACT_AGENT_TASK_QUEUE: taskQueue, REACT_AGENT_MODEL_MAX_ATTEMPTS: '2' },
    async (worker) => {
      assert.match(
        worker.log,
        /react-agent worker: .*model scripted-model at http:\/\/\[redacted\]@127\.0\.0\.1:\d+\/v1;/,
      );

      // The openai client cannot send a URL's credentials (fetch refuses the URL, quoting it): the run ends with error.
      const workflowId = runId('url-credentials');
      const handle = await environment.client.workflow.start<typeof researchAgent>('researchAgent', {
        taskQueue,
        workflowId,
        args: [{ question: 'Anyone there?' }],
      });
      const result = await handle.result();
      assert.equal(result.termination, 'error');
      assert.match(result.error ?? '', /could not be reached/);
      assertNoLeak(await placesToLook(workflowId, result, worker), URL_PASSWORD);
      assertAlive(worker);

      const cli = CliProcess.start(['run', 'Anyone there?'], {
        environment: { ...environment.environment, OPENAI_BASE_URL: withCredentials },
        timeoutMs: 60_000,
      });
      const exit = await cli.exited;
      assert.equal(exit.code, 1);
      assert.match(cli.stderr, /The model endpoint http:\/\/\[redacted\]@127\.0\.0\.1:\d+\/v1 cannot be reached/);
      assert.deepEqual(leakedForms(cli.stdout + cli.stderr, URL_PASSWORD), []);
    },
  );
});
