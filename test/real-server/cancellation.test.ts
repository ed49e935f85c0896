import assert from 'node:assert/strict';
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import type { ChatMessage } from '../../src/core/messages';
import { readToolLog, waitForToolLog } from '../integration/support/tool-log';
import { RealServerEnvironment } from './support/real-server-environment';
import { realServerToolsEnvironment } from './support/real-server-tools';
import { transcriptProblems } from './support/transcript-checks';

// Cancelling a run through the Temporal client (what `react-agent cancel` and the Web UI do)
// while it runs against llama-server: during a tool call, and during a model call that is
// still streaming. The run ends `cancelled` with a normal result, every tool call answered, and
// nothing keeps working for it: neither the tool nor the server's generation.

const QUESTION = 'Which company sold more cars in 2024, BYD or Tesla?';
const LOOKUP_DELAY_MS = 60_000;
/**
 * A cancel reaches a streaming model call with its next heartbeat to the server; the worker sends
 * one at least this often (REACT_AGENT_HEARTBEAT_THROTTLE_SECONDS' default), whatever the model
 * heartbeat timeout (this file keeps its default, 60 s, whose SDK throttle would be 48 s).
 */
const HEARTBEAT_THROTTLE_SECONDS = 5;

let environment: RealServerEnvironment;

beforeAll(async () => {
  environment = await RealServerEnvironment.start({ llamaServer: { contextSize: 32_768 } });
  await environment.startWorker({ ...realServerToolsEnvironment({ lookupDelayMs: LOOKUP_DELAY_MS }) });
});

afterAll(async () => {
  await environment?.close();
});

/** llama-server's slot: whether it is generating, and how many tokens it has decoded for the current request. */
async function slot(): Promise<{ processing: boolean; decoded: number }> {
  const slots = (await (await fetch(`${environment.llama.origin}/slots`)).json()) as Array<{
    is_processing: boolean;
    next_token?: Array<{ n_decoded?: number }>;
  }>;
  return { processing: slots[0]?.is_processing ?? false, decoded: slots[0]?.next_token?.[0]?.n_decoded ?? 0 };
}

async function waitFor<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await delay(50);
  }
}

async function terminationAttribute(handle: {
  describe(): Promise<{ typedSearchAttributes: { getAll(): Array<{ key: { name: string }; value: unknown }> } }>;
}): Promise<unknown> {
  return (await handle.describe()).typedSearchAttributes.getAll().find((pair) => pair.key.name === 'ReactTermination')
    ?.value;
}

describe.each([
  { protocol: 'deep-research' as const, grammar: 'deep-research.gbnf' },
  { protocol: 'native' as const, grammar: undefined },
])('$protocol', ({ protocol, grammar }) => {
  test('cancelling during a tool call stops the tool and ends cancelled with the call answered', async () => {
    await environment.llama.restart({ grammar });
    const handle = await environment.startRun({
      question: QUESTION,
      protocol,
      tools: ['lookup'],
      limits: { maxModelCalls: 6 },
    });
    await waitForToolLog(environment.toolLog, handle.workflowId, (entries) =>
      entries.some((entry) => entry.event === 'start'),
    );

    const cancelledAt = Date.now();
    await handle.cancel();
    const result = await handle.result();
    const endedAt = Date.now();

    assert.equal(result.termination, 'cancelled');
    assert.equal(result.error, undefined);
    assert.equal(result.iterations, 1);
    assert.equal(result.toolCalls, 1);
    assert.ok(endedAt - cancelledAt < 10_000, `ended ${endedAt - cancelledAt} ms after the cancel`);
    const stop = readToolLog(environment.toolLog, handle.workflowId).find((entry) => entry.event === 'stop');
    assert.equal(stop?.reason, 'cancelled', 'the tool itself was cancelled');
    assert.ok((stop?.at ?? Infinity) <= endedAt, 'the tool stopped before the run reported its end');

    const messages = await environment.transcript(result);
    assert.deepEqual(transcriptProblems(messages, protocol), []);
    const last = messages.at(-1) as ChatMessage;
    if (protocol === 'native') {
      assert.deepEqual(
        messages.map((message) => message.role),
        ['system', 'user', 'assistant', 'tool'],
      );
      assert.equal(last.toolCallId, messages[2]?.toolCalls?.[0]?.id);
      assert.equal(last.content, 'Not completed: the run was cancelled while this tool call was open.');
    } else {
      assert.deepEqual(
        messages.map((message) => message.role),
        ['system', 'user', 'assistant', 'user'],
      );
      assert.equal(
        last.content,
        '<tool_response>\nNot completed: the run was cancelled while this tool call was open.\n</tool_response>',
      );
    }
    assert.equal((await handle.describe()).status.name, 'COMPLETED');
    assert.equal(await terminationAttribute(handle), 'cancelled');
  });
});

test('cancelling during a streaming model call ends cancelled at once, and llama-server stops generating', async () => {
  // No grammar and no tools: the tiny model writes <tool_call> lines until max_tokens, tens of seconds.
  await environment.llama.restart({ grammar: undefined });
  const handle = await environment.startRun({
    question: QUESTION,
    tools: ['lookup'],
    model: { maxOutputTokens: 30_000 },
    limits: { maxModelCalls: 6 },
  });
  await waitFor('generation', async () => {
    const now = await slot();
    return now.processing && now.decoded > 200 ? now : undefined;
  });

  const cancelledAt = Date.now();
  await handle.cancel();
  const result = await handle.result();
  const endedAt = Date.now();
  assert.equal(result.termination, 'cancelled');
  assert.equal(result.iterations, 1);
  assert.equal(result.toolCalls, 0);
  assert.ok(endedAt - cancelledAt < 5_000, `ended ${endedAt - cancelledAt} ms after the cancel`);
  const messages = await environment.transcript(result);
  assert.deepEqual(
    messages.map((message) => message.role),
    ['system', 'user'],
    'the cut reply is not in the transcript',
  );

  // The model activity aborts its request once the cancel reaches it (its next heartbeat), and the server stops.
  const stopped = await waitFor(
    'the server stopping',
    async () => ((await slot()).processing ? undefined : Date.now()),
    30_000,
  );
  assert.ok(
    stopped - cancelledAt < HEARTBEAT_THROTTLE_SECONDS * 1000 + 2_000,
    `llama-server generated for ${stopped - cancelledAt} ms after the cancel`,
  );
  assert.equal(await terminationAttribute(handle), 'cancelled');
});
