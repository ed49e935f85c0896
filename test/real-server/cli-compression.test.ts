import assert from 'node:assert/strict';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ResearchRunResult } from '../../src/core/run-result';
import { CliProcess } from '../integration/support/cli-process';
import { RealServerEnvironment } from './support/real-server-environment';
import { realServerToolsEnvironment } from './support/real-server-tools';

// `react-agent run` and `react-agent follow` through a context compression against llama-server
// (the step that made both crash: the compressContext activity was read as a tool). The lookup
// returns a long text, so after it the context is past `compressAtFraction` (0.8) of the
// budget given with --max-tokens, but still within it: the run compresses before its second
// model call, then the tiny model answers. The CLI uses this file's dev server and worker.

const LOOKUP_CHARACTERS = 4_000;
/**
 * The context budget: after the lookup the context is about 3,150 server tokens (the tiny
 * model's tokenizer counts about twice what o200k does, and the workflow calibrates its
 * estimate with the server's count), above 0.8 × 3,600 = 2,880 and below 3,600.
 */
const MAX_TOKENS = 3_600;
const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const COMPRESSION_LINES =
  /compressing the context \(target [\d,]+ tokens[^)]*\) \.\.\.\n\s*context compressed: \d+ observations? stubbed, \d+ turns? summarised; now [\d,]+ tokens/;

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start({ llamaServer: { grammar: 'deep-research.gbnf' } });
  await environment.startWorker(realServerToolsEnvironment({ lookupCharacters: LOOKUP_CHARACTERS }));
});

afterAll(async () => {
  await environment?.close();
});

test('run shows the compression step and the answer, exits 0; follow shows the same run the same way', async () => {
  const id = `real-cli-compression-${Date.now().toString(36)}`;
  const ran = await CliProcess.complete(
    ['run', QUESTION, '--id', id, '--tools', 'lookup', '--max-tokens', String(MAX_TOKENS), '--max-calls', '6'],
    {
      environment: environment.environment,
    },
  );
  assert.equal(ran.code, 0, `run exited ${ran.code}:\n${ran.stderr}`);
  assert.doesNotMatch(ran.stderr, /Starting a worker|starting the local dev server/, 'run used the running stack');
  assert.match(ran.stderr, /\[call 1\][\s\S]*tool call: lookup \{"query":"BYD"\}[\s\S]*lookup → Facts about BYD/);
  assert.match(ran.stderr, COMPRESSION_LINES);
  assert.match(ran.stderr, /\[call 2\][\s\S]*answer: The answer is above\./);
  assert.match(ran.stdout, /Ended: answer after 2 model calls, 1 tool calls[\s\S]*Answer:\nThe answer is above\./);

  // The run itself: completed, with the compression on record before its second call.
  const handle = environment.client.workflow.getHandle(id);
  assert.equal((await handle.describe()).status.name, 'COMPLETED');
  const result = (await handle.result()) as ResearchRunResult;
  assert.equal(result.termination, 'answer');
  assert.equal(result.details.compressions.length, 1);
  assert.equal(result.details.compressions[0]?.atModelCall, 2);

  const followed = await CliProcess.complete(['follow', id], { environment: environment.environment });
  assert.equal(followed.code, 0, `follow exited ${followed.code}:\n${followed.stderr}`);
  assert.match(followed.stderr, COMPRESSION_LINES);
  assert.match(followed.stdout, /Ended: answer after 2 model calls[\s\S]*Answer:\nThe answer is above\./);
}, 180_000);
