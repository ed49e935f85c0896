import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { replyUsage, tokenUsageOf } from '../../activities/model-call/reply';
import type { ChatReply } from '../../activities/model/chat-model';
import { characterEstimateCounter } from '../../activities/token-counter';
import { cacheSaving, resultHeadline } from '../../src/cli/follow-run';
import { cacheFigures, describeCache, describeCacheSaving } from '../../src/core/cache-figures';
import { addUsage, ZERO_USAGE, type TokenUsage } from '../../src/core/messages';
import type { ResearchRunResult } from '../../src/core/run-result';
import { callCacheSavedUsd, modelCallCacheSavedUsd } from '../../src/domain/model-prices';
import { runOfLine } from '../../src/storage/evaluation-input';

const close = (actual: number | undefined, expected: number) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-12, `${actual} ≈ ${expected}`);

const claude = { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 };

describe('what prompt caching saved a call (callCacheSavedUsd, issue 31)', () => {
  test('the cost with every prompt token at input and no cache write, less the cost charged', () => {
    const tokens = { promptTokens: 2000, completionTokens: 100, cachedPromptTokens: 1000, cacheWriteTokens: 500 };
    // Without caching 2000 × 3; charged 500 × 3 + 1000 × 0.3 + 500 × 3.75. Completion tokens cancel out.
    close(callCacheSavedUsd(tokens, claude), (2000 * 3 - (500 * 3 + 1000 * 0.3 + 500 * 3.75)) / 1e6);
  });

  test('negative when the writes cost more than the reads saved', () => {
    const saved = callCacheSavedUsd({ promptTokens: 1000, completionTokens: 0, cacheWriteTokens: 1000 }, claude);
    close(saved, -(1000 * 0.75) / 1e6);
    assert.ok(saved! < 0);
  });

  test('zero when the cache has no price of its own; undefined when the call reported no cache tokens, or 0', () => {
    close(
      callCacheSavedUsd({ promptTokens: 10, completionTokens: 1, cachedPromptTokens: 5 }, { input: 1, output: 2 }),
      0,
    );
    assert.equal(callCacheSavedUsd({ promptTokens: 10, completionTokens: 1 }, claude), undefined);
    const none = { promptTokens: 10, completionTokens: 1, cachedPromptTokens: 0, cacheWriteTokens: 0 };
    assert.equal(callCacheSavedUsd(none, claude), undefined, 'Chat Completions reports 0 cached tokens on every call');
  });

  test('undefined for a model without a price', () => {
    const tokens = { promptTokens: 10, completionTokens: 1, cachedPromptTokens: 5 };
    assert.equal(modelCallCacheSavedUsd({ claude }, 'other', tokens), undefined);
    assert.equal(modelCallCacheSavedUsd(undefined, 'claude', tokens), undefined);
    close(modelCallCacheSavedUsd({ claude }, 'claude', tokens), (5 * 2.7) / 1e6);
  });
});

describe('the saving in the usage', () => {
  const reply = (usage: ChatReply['usage']): ChatReply => ({
    content: 'Paris.',
    reasoning: '',
    toolCalls: [],
    finishReason: 'stop',
    chunks: 1,
    ...(usage ? { usage } : {}),
  });

  test("a priced call's reply usage carries it into the run's TokenUsage", () => {
    const usage = replyUsage(
      reply({ promptTokens: 1_000_000, completionTokens: 0, cachedPromptTokens: 800_000 }),
      5,
      characterEstimateCounter,
      { claude },
      'claude',
    );
    close(usage.cacheSavedUsd, 0.8 * 2.7);
    close(tokenUsageOf(usage).cacheSavedUsd, 0.8 * 2.7);
  });

  test('absent for an unpriced model and for a server that reported no cache', () => {
    const cached = reply({ promptTokens: 100, completionTokens: 1, cachedPromptTokens: 50 });
    assert.equal('cacheSavedUsd' in replyUsage(cached, 5, characterEstimateCounter, undefined, 'claude'), false);
    const uncached = reply({ promptTokens: 100, completionTokens: 1 });
    const usage = replyUsage(uncached, 5, characterEstimateCounter, { claude }, 'claude');
    assert.equal('cacheSavedUsd' in usage, false);
    assert.equal('cacheSavedUsd' in tokenUsageOf(usage), false);
  });

  test('adds up across calls like costUsd; absent when no call had it', () => {
    const call: TokenUsage = { promptTokens: 10, completionTokens: 1, totalTokens: 11 };
    const total = [{ ...call, cacheSavedUsd: 0.25 }, call, { ...call, cacheSavedUsd: -0.05 }].reduce(
      addUsage,
      ZERO_USAGE,
    );
    close(total.cacheSavedUsd, 0.2);
    assert.equal('cacheSavedUsd' in addUsage(call, call), false);
  });
});

describe('the closing line of run and follow', () => {
  const result = (usage: ResearchRunResult['usage']): ResearchRunResult =>
    ({ termination: 'answer', iterations: 3, toolCalls: 2, durationMs: 8100, usage }) as ResearchRunResult;
  const usage = { promptTokens: 10_000, completionTokens: 210, totalTokens: 10_210, costUsd: 0.031 };

  test('the hit rate and what it saved', () => {
    assert.equal(
      resultHeadline(result({ ...usage, cachedPromptTokens: 9_300, cacheSavedUsd: 0.27 })),
      'answer after 3 model calls, 2 tool calls, 8.1 s, 10,210 tokens, $0.03100, 93% of the prompt tokens read from the cache, saving $0.2700',
    );
  });

  test('a negative saving, said as a cost; writes alone; no price, no saving', () => {
    assert.equal(cacheSaving({ ...usage, cacheSavedUsd: -0.01 }), ', costing $0.01000 more');
    assert.match(
      resultHeadline(result({ ...usage, cacheWriteTokens: 9_000, cacheSavedUsd: -0.0068 })),
      /, \$0\.03100, prompt caching costing \$0\.006800 more$/,
    );
    assert.match(
      resultHeadline(result({ ...usage, cachedPromptTokens: 5_000 })),
      /, 50% of the prompt tokens read from the cache$/,
    );
    assert.equal(cacheSaving(usage), '');
  });
});

describe('cache figures of runs (an evaluation report)', () => {
  test('the hit rate over the runs that reported a cache, the savings summed', () => {
    const figures = cacheFigures([
      { promptTokens: 1000, cachedPromptTokens: 900, cacheSavedUsd: 0.3 },
      { promptTokens: 3000, cachedPromptTokens: 100 },
      { promptTokens: 5000 },
    ]);
    assert.deepEqual(figures, {
      runs: 3,
      cachedRuns: 2,
      promptTokens: 4000,
      cachedPromptTokens: 1000,
      hitRate: 0.25,
      savedUsd: 0.3,
    });
    assert.equal(
      describeCache(figures),
      '25% of 4,000 prompt tokens read from the cache · saved $0.3000 · in 2 of 3 runs',
    );
  });

  test('none when no run reported a cache', () => {
    assert.equal(cacheFigures([{ promptTokens: 10 }, {}]), undefined);
    assert.equal(cacheFigures([]), undefined);
    assert.equal(describeCache(undefined), '—');
    assert.equal(describeCacheSaving(undefined), '');
    assert.equal(describeCacheSaving(-0.5), 'cost $0.5000 more');
  });

  test("a line's usage read into the run", () => {
    const run = runOfLine(
      {
        question: 'Q',
        answer: 'A',
        prediction: 'A',
        termination: 'answer',
        usage: {
          promptTokens: 100,
          completionTokens: 5,
          totalTokens: 105,
          cachedPromptTokens: 80,
          cacheSavedUsd: 0.01,
        },
      },
      { file: 'iter1.jsonl', line: 1, rollout: 1 },
    );
    assert.ok(!('skip' in run));
    assert.equal(run.promptTokens, 100);
    assert.equal(run.cachedPromptTokens, 80);
    assert.equal(run.cacheSavedUsd, 0.01);
  });
});
