import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import type OpenAI from 'openai';
import { createConversationActivities } from '../../activities/conversation-activities';
import { createCallModel } from '../../activities/model-activity';
import { characterEstimateCounter } from '../../activities/token-counter';
import type { ToolDefinition } from '../../activities/tools/tool-definition';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { CallModelOutput, StartConversationOutput } from '../../src/core/activity-contracts';
import { openedRunState, initialRunState } from '../../src/core/run-transitions';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';
import { goneToolObservation, toolScheduleOf } from '../../src/core/tool-spec';
import { loadToolSpecs, putToolSpecs } from '../../src/storage/conversation';
import { chatModelOver } from '../fakes/fake-chat-completions';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

/**
 * Issue 18: a run's tool list is stored by reference when its transcript opens
 * (`tool-specs-by-reference`): history keeps names, scheduling and approval flags; the model
 * activity sends the stored schemas, whatever the worker's registry holds by then.
 */
const sum: ToolDefinition = {
  name: 'get-sum',
  description: 'Returns the sum of two numbers. '.repeat(8).trim(),
  parameters: {
    type: 'object',
    properties: {
      a: { type: 'number', description: 'First number' },
      b: { type: 'number', description: 'Second number' },
    },
    required: ['a', 'b'],
  },
  requiresApproval: true,
  activity: { startToCloseSeconds: 150, maxAttempts: 5, initialRetrySeconds: 2 },
  run: async () => '3',
};
const echo: ToolDefinition = {
  name: 'echo',
  description: 'Echoes back the input.',
  parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
  run: async () => 'echo',
};

function conversationActivities(store: MemoryTranscriptStore, tools: ToolDefinition[]) {
  return createConversationActivities({
    store,
    tools: new ToolRegistry(tools),
    tokenCounter: characterEstimateCounter,
    modelActivity: { startToCloseSeconds: 600, heartbeatSeconds: 60, maxAttempts: 12 },
    defaultModel: 'm',
    toolTaskQueue: 'tool-queue',
  });
}

const start = { question: 'Which sum?', protocol: 'native' as const, today: '2026-12-02' };

/** Opens a transcript offering `tools`, their specs stored by reference. */
function openWithStoredSpecs(store: MemoryTranscriptStore, tools: ToolDefinition[], question = start.question) {
  return conversationActivities(store, tools).startConversation({ ...start, question, storeToolSpecs: true });
}

describe('startConversation with storeToolSpecs', () => {
  test("history gets each tool's name, scheduling and approval; the specs are one stored blob", async () => {
    const store = new MemoryTranscriptStore();
    const output = await openWithStoredSpecs(store, [sum, echo]);
    assert.deepEqual(output.tools, [
      {
        name: 'get-sum',
        activity: {
          startToCloseSeconds: 150,
          heartbeatSeconds: 30,
          maxAttempts: 5,
          initialRetrySeconds: 2,
          taskQueue: 'tool-queue',
        },
        requiresApproval: true,
      },
      {
        name: 'echo',
        activity: {
          startToCloseSeconds: 300,
          heartbeatSeconds: 30,
          maxAttempts: 3,
          initialRetrySeconds: 1,
          taskQueue: 'tool-queue',
        },
        requiresApproval: false,
      },
    ]);
    assert.match(output.toolSpecs ?? '', /^sha256:[0-9a-f]{64}$/);
    const stored = await loadToolSpecs(store, output.toolSpecs as string);
    assert.deepEqual(
      stored.map((spec) => [spec.name, spec.description, spec.parameters]),
      [
        ['get-sum', sum.description, sum.parameters],
        ['echo', echo.description, echo.parameters],
      ],
    );
    assert.deepEqual(stored.map(toolScheduleOf), output.tools);
    assert.ok(!JSON.stringify(output).includes('Returns the sum'), 'no description in what history keeps');
    assert.ok(!JSON.stringify(output).includes('First number'), 'no schema in what history keeps');
  });

  test('without it (runs started before the marker) the whole specs come back in history, as before', async () => {
    const store = new MemoryTranscriptStore();
    const output = await conversationActivities(store, [sum, echo]).startConversation(start);
    assert.equal(output.toolSpecs, undefined);
    assert.deepEqual(
      output.tools.map((tool) => tool.name),
      ['get-sum', 'echo'],
    );
    assert.equal((output.tools[0] as { description?: string }).description, sum.description);
    assert.ok(
      JSON.stringify(output).length >
        JSON.stringify(await openWithStoredSpecs(new MemoryTranscriptStore(), [sum, echo])).length,
    );
  });

  test('the same tool list stored by two runs is one blob', async () => {
    const store = new MemoryTranscriptStore();
    const first = await openWithStoredSpecs(store, [sum, echo]);
    const second = await openWithStoredSpecs(store, [sum, echo], 'Another?');
    assert.equal(first.toolSpecs, second.toolSpecs);
    assert.notEqual(first.conversation, second.conversation);
  });

  test('a blob that is not a tool list is refused by name', async () => {
    const store = new MemoryTranscriptStore();
    const reference = await store.putText('{"kind":"conversation","messages":[]}');
    await assert.rejects(loadToolSpecs(store, reference), new RegExp(`${reference} is not a list of tool specs`));
    assert.deepEqual(await loadToolSpecs(store, await putToolSpecs(store, [])), []);
  });
});

test('the run keeps the reference when its transcript opens (and carries it on continue-as-new)', async () => {
  const store = new MemoryTranscriptStore();
  const output: StartConversationOutput = await openWithStoredSpecs(store, [echo]);
  const state = openedRunState(initialRunState('native', DEFAULT_LIMITS, 0), output);
  assert.equal(state.setup?.toolSpecs, output.toolSpecs);
  assert.deepEqual(state.setup?.tools, output.tools);
  const before = openedRunState(
    initialRunState('native', DEFAULT_LIMITS, 0),
    await conversationActivities(store, [echo]).startConversation(start),
  );
  assert.equal('toolSpecs' in (before.setup ?? {}), false, 'a run opened the old way has no reference');
});

/** An `openai` stand-in that records the request and streams one short reply. */
function recordingOpenAI(): { openai: OpenAI; requests: Array<{ tools?: unknown[] }> } {
  const requests: Array<{ tools?: unknown[] }> = [];
  const create = async (params: { tools?: unknown[] }) => {
    requests.push(params);
    return (async function* () {
      yield {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: 0, delta: { role: 'assistant', content: 'done' }, finish_reason: null }],
      };
      yield {
        id: 'c',
        object: 'chat.completion.chunk',
        created: 0,
        model: 'm',
        choices: [{ index: 0, delta: {}, finish_reason: 'stop' }],
      };
    })();
  };
  return { openai: { chat: { completions: { create } } } as unknown as OpenAI, requests };
}

describe("callModel with the run's stored specs", () => {
  const modelDefaults = { model: 'm', temperature: 0.6, topP: 0.95, maxOutputTokens: 100 };
  /** The model activity over `openai` and `store`, on a worker whose registry offers `offered`. */
  const callModelOn = (openai: OpenAI, store: MemoryTranscriptStore, offered: ToolDefinition[]) =>
    createCallModel({
      chatModel: chatModelOver(openai),
      store,
      tokenCounter: characterEstimateCounter,
      modelDefaults,
      tools: new ToolRegistry(offered),
    });
  const environment = () =>
    new MockActivityEnvironment({ heartbeatTimeoutMs: 30_000 }, { logger: new DefaultLogger('ERROR') });

  test('sends the schemas the run started with, though this worker no longer offers the tool (its MCP server dropped it)', async () => {
    const store = new MemoryTranscriptStore();
    const opened = await openWithStoredSpecs(store, [sum, echo]);
    const { openai, requests } = recordingOpenAI();
    // This worker's registry has another echo and no get-sum.
    const changedEcho: ToolDefinition = {
      ...echo,
      description: 'A newer echo.',
      parameters: { type: 'object', properties: { text: { type: 'string' } } },
    };
    const callModel = callModelOn(openai, store, [changedEcho]);
    const input = {
      workflowId: 'wf',
      modelCall: 1,
      conversation: opened.conversation,
      append: [],
      model: { model: 'm' },
      protocol: 'native' as const,
      tools: ['get-sum', 'echo'],
      toolSpecs: opened.toolSpecs as string,
    };
    const output = (await environment().run(callModel, input)) as CallModelOutput;
    assert.equal(output.finishReason, 'stop');
    assert.deepEqual(requests[0]?.tools, [
      { type: 'function', function: { name: 'get-sum', description: sum.description, parameters: sum.parameters } },
      { type: 'function', function: { name: 'echo', description: echo.description, parameters: echo.parameters } },
    ]);
  });

  test("a call that carries only the reference (issue 34's history trim: no names, no workflow id) sends every stored spec, in order; none stored, no tools", async () => {
    const store = new MemoryTranscriptStore();
    const opened = await openWithStoredSpecs(store, [sum, echo]);
    const { openai, requests } = recordingOpenAI();
    const callModel = callModelOn(openai, store, []);
    const withOwnRun = () =>
      new MockActivityEnvironment(
        { heartbeatTimeoutMs: 30_000, workflowExecution: { workflowId: 'wf-own', runId: 'r' } },
        { logger: new DefaultLogger('ERROR') },
      );
    const call = { modelCall: 1, conversation: opened.conversation, append: [], model: { model: 'm' } };
    await withOwnRun().run(callModel, { ...call, protocol: 'native' as const, toolSpecs: opened.toolSpecs as string });
    assert.deepEqual(
      (requests[0]?.tools as Array<{ function: { name: string } }>).map((tool) => tool.function.name),
      ['get-sum', 'echo'],
    );
    const none = await openWithStoredSpecs(store, []);
    await withOwnRun().run(callModel, {
      ...call,
      conversation: none.conversation,
      protocol: 'native' as const,
      toolSpecs: none.toolSpecs as string,
    });
    assert.equal(requests[1]?.tools, undefined, 'an empty tool list is not sent (servers refuse `tools: []`)');
  });

  test('a run opened before (no reference) is described by the registry, as it was', async () => {
    const store = new MemoryTranscriptStore();
    const opened = await conversationActivities(store, [echo]).startConversation(start);
    const { openai, requests } = recordingOpenAI();
    const callModel = callModelOn(openai, store, [echo]);
    await environment().run(callModel, {
      workflowId: 'wf',
      modelCall: 1,
      conversation: opened.conversation,
      append: [],
      model: { model: 'm' },
      protocol: 'native' as const,
      tools: ['echo'],
    });
    assert.deepEqual(requests[0]?.tools, [
      { type: 'function', function: { name: 'echo', description: echo.description, parameters: echo.parameters } },
    ]);
  });
});

test('a call of a tool that has gone is answered with what happened and what is left', () => {
  const text = goneToolObservation('get-sum', ['get-sum', 'echo', 'search']);
  assert.match(text, /^Error: the tool "get-sum" is no longer offered: it was available when this research started/);
  assert.match(text, /its MCP server may no longer list it/);
  assert.match(text, /this research's tools: echo, search\)/);
  assert.doesNotMatch(goneToolObservation('only', ['only']), /this research's tools/);
});
