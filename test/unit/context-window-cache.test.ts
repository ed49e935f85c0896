import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { cachedContextWindows } from '../../activities/context-window-cache';
import { createConversationActivities } from '../../activities/conversation-activities';
import { createLearnContextWindow } from '../../activities/context-window-activity';
import { characterEstimateCounter } from '../../activities/token-counter';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import { CONTEXT_WINDOW_CACHE_MS, contextWindowProbeDue, type ContextWindow } from '../../src/core/context-window';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

/** A model server that says `window` for every model, counting what it was asked. */
function countingServer(answer: () => Promise<ContextWindow | undefined>) {
  const asked: string[] = [];
  return {
    asked,
    chatModel: {
      contextWindow(model: string) {
        asked.push(model);
        return answer();
      },
    },
  };
}

const window8k: ContextWindow = { tokens: 8_192, source: 'llama-server /props (default_generation_settings.n_ctx)' };

describe('contextWindowProbeDue (issue 34)', () => {
  test('asked when never asked, when the answer is as old as the limit, or when the clock went back', () => {
    assert.equal(contextWindowProbeDue(undefined, 1_000), true);
    assert.equal(contextWindowProbeDue(1_000, 1_000 + CONTEXT_WINDOW_CACHE_MS - 1), false);
    assert.equal(contextWindowProbeDue(1_000, 1_000 + CONTEXT_WINDOW_CACHE_MS), true);
    assert.equal(contextWindowProbeDue(5_000, 4_000), true);
    assert.equal(CONTEXT_WINDOW_CACHE_MS, 5 * 60_000);
  });
});

describe('the context window asked once per worker and model (issue 34)', () => {
  test('runs of one model get the first answer until it is 5 minutes old, then the server is asked again', async () => {
    let now = 0;
    const server = countingServer(async () => window8k);
    const windows = cachedContextWindows(server.chatModel, { now: () => now });
    assert.deepEqual(await windows.contextWindow('qwen'), window8k);
    now += CONTEXT_WINDOW_CACHE_MS - 1;
    assert.deepEqual(await windows.contextWindow('qwen'), window8k);
    assert.deepEqual(server.asked, ['qwen']);
    now += 1;
    await windows.contextWindow('qwen');
    assert.deepEqual(server.asked, ['qwen', 'qwen']);
  });

  test('a burst of runs asks once, each model once; "the server does not say" is kept too', async () => {
    const server = countingServer(async () => undefined);
    const windows = cachedContextWindows(server.chatModel);
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) => windows.contextWindow(index % 2 ? 'a' : 'b')),
    );
    assert.ok(answers.every((answer) => answer === undefined));
    assert.deepEqual(server.asked.sort(), ['a', 'b']);
  });

  test('a failed ask is not kept: the next run asks again', async () => {
    let fail = true;
    const server = countingServer(async () => {
      if (fail) throw new Error('connection refused');
      return window8k;
    });
    const windows = cachedContextWindows(server.chatModel);
    await assert.rejects(windows.contextWindow('qwen'), /connection refused/);
    fail = false;
    assert.deepEqual(await windows.contextWindow('qwen'), window8k);
    assert.equal(server.asked.length, 2);
  });

  test("model names are the client's: past the bound the oldest is forgotten, the cache never grows past it", async () => {
    const server = countingServer(async () => window8k);
    const windows = cachedContextWindows(server.chatModel, { maxModels: 3 });
    for (const model of ['a', 'b', 'c', 'd']) await windows.contextWindow(model);
    await windows.contextWindow('d');
    await windows.contextWindow('b');
    assert.deepEqual(server.asked, ['a', 'b', 'c', 'd']);
    await windows.contextWindow('a');
    assert.deepEqual(server.asked, ['a', 'b', 'c', 'd', 'a']);
  });
});

describe('startConversation learns the context window when the run asks (issue 34, light-bookkeeping)', () => {
  function conversationActivities(learn?: Parameters<typeof createConversationActivities>[0]['learnContextWindow']) {
    return createConversationActivities({
      store: new MemoryTranscriptStore(),
      tools: new ToolRegistry([]),
      tokenCounter: characterEstimateCounter,
      modelActivity: { startToCloseSeconds: 600, heartbeatSeconds: 60, maxAttempts: 12 },
      defaultModel: 'worker-model',
      ...(learn ? { learnContextWindow: learn } : {}),
    });
  }
  const start = { question: 'Q?', protocol: 'native' as const, today: '2026-12-05', storeToolSpecs: true };

  test("the window and the reply's limit come back with the transcript; the worker's model unless the run names one", async () => {
    const server = countingServer(async () => window8k);
    const learn = createLearnContextWindow({
      chatModel: cachedContextWindows(server.chatModel),
      modelDefaults: { maxOutputTokens: 1_024 },
    });
    const opened = await conversationActivities(learn).startConversation({ ...start, contextWindow: {} });
    assert.deepEqual(opened.contextWindow, {
      contextWindow: 8_192,
      source: window8k.source,
      maxOutputTokens: 1_024,
      promptBudget: opened.contextWindow?.promptBudget,
    });
    assert.ok((opened.contextWindow?.promptBudget ?? 0) > 0 && (opened.contextWindow?.promptBudget ?? 0) < 8_192);
    const own = await conversationActivities(learn).startConversation({
      ...start,
      contextWindow: { model: 'run-model', maxOutputTokens: 512 },
    });
    assert.equal(own.contextWindow?.maxOutputTokens, 512);
    assert.deepEqual(server.asked, ['worker-model', 'run-model']);
  });

  test('not asked, nothing learned; a failure to learn it leaves it out and the transcript opens', async () => {
    const server = countingServer(async () => window8k);
    const learn = createLearnContextWindow({ chatModel: server.chatModel, modelDefaults: { maxOutputTokens: 1_024 } });
    const unasked = await conversationActivities(learn).startConversation(start);
    assert.equal('contextWindow' in unasked, false);
    assert.deepEqual(server.asked, []);
    const failing = await conversationActivities(async () => {
      throw new Error('model server down');
    }).startConversation({ ...start, contextWindow: {} });
    assert.equal('contextWindow' in failing, false);
    assert.match(failing.conversation, /^sha256:/);
  });
});
