import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadModelPrices, parseModelPrices } from '../../src/config/model-prices-config';
import { emptyBatchCounts, recordFinished, recordStarted, summaryPerRollout } from '../../src/core/batch-progress';
import { addUsage, ZERO_USAGE } from '../../src/core/messages';
import { callCostUsd, modelCallCostUsd, priceOf } from '../../src/domain/model-prices';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-prices-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

const close = (actual: number | undefined, expected: number) =>
  assert.ok(actual !== undefined && Math.abs(actual - expected) < 1e-12, `${actual} ≈ ${expected}`);

function assertPricesError(value: string, ...patterns: RegExp[]): void {
  let caught: unknown;
  try {
    loadModelPrices({ REACT_AGENT_MODEL_PRICES: value }, scratch);
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigurationError, `a ConfigurationError for ${value}`);
  assert.equal(caught.variable, 'REACT_AGENT_MODEL_PRICES');
  assert.match(caught.message, /REACT_AGENT_MODEL_PRICES/);
  for (const pattern of patterns) assert.match(caught.message, pattern);
}

describe('the cost of a model call (src/domain/model-prices.ts)', () => {
  const price = { input: 0.15, cachedInput: 0.075, output: 0.6 };

  test('prompt and completion tokens at their prices per million', () => {
    close(callCostUsd({ promptTokens: 1_000_000, completionTokens: 0 }, price), 0.15);
    close(callCostUsd({ promptTokens: 2_000, completionTokens: 500 }, price), (2_000 * 0.15 + 500 * 0.6) / 1e6);
  });

  test('cached prompt tokens at the cached price; at the input price when there is none; never more than the prompt', () => {
    close(
      callCostUsd({ promptTokens: 1_000, completionTokens: 200, cachedPromptTokens: 400 }, price),
      (600 * 0.15 + 400 * 0.075 + 200 * 0.6) / 1e6,
    );
    close(
      callCostUsd({ promptTokens: 1_000, completionTokens: 0, cachedPromptTokens: 400 }, { input: 1, output: 2 }),
      1_000 / 1e6,
    );
    close(callCostUsd({ promptTokens: 100, completionTokens: 0, cachedPromptTokens: 500 }, price), (100 * 0.075) / 1e6);
    close(callCostUsd({ promptTokens: -5, completionTokens: Number.NaN }, price), 0);
  });

  test('a model without a price has no cost: absent, not zero', () => {
    assert.equal(priceOf({ a: price }, 'b'), undefined);
    assert.equal(priceOf(undefined, 'a'), undefined);
    assert.equal(priceOf({ a: price }, 'constructor'), undefined, 'no inherited property is a price');
    assert.equal(modelCallCostUsd({ a: price }, 'b', { promptTokens: 10, completionTokens: 10 }), undefined);
    close(modelCallCostUsd({ a: price }, 'a', { promptTokens: 1e6, completionTokens: 1e6 }), 0.75);
    assert.equal(
      modelCallCostUsd({ free: { input: 0, output: 0 } }, 'free', { promptTokens: 10, completionTokens: 10 }),
      0,
      'a price of zero is a cost of zero',
    );
  });

  test('addUsage sums the cache counts when a call reported them, and leaves them out when none did (issue 31)', () => {
    const plain = { promptTokens: 100, completionTokens: 10, totalTokens: 110 };
    assert.deepEqual(addUsage(plain, plain), { promptTokens: 200, completionTokens: 20, totalTokens: 220 });
    assert.deepEqual(addUsage(plain, { ...plain, cachedPromptTokens: 80, cacheWriteTokens: 15 }), {
      promptTokens: 200,
      completionTokens: 20,
      totalTokens: 220,
      cachedPromptTokens: 80,
      cacheWriteTokens: 15,
    });
  });

  test('addUsage sums the cost when a call had one, and leaves it out when none had', () => {
    const priced = { promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0.25 };
    const unpriced = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    assert.deepEqual(addUsage(ZERO_USAGE, unpriced), unpriced);
    assert.equal('costUsd' in addUsage(ZERO_USAGE, unpriced), false);
    assert.deepEqual(addUsage(addUsage(ZERO_USAGE, priced), unpriced), {
      promptTokens: 11,
      completionTokens: 6,
      totalTokens: 17,
      costUsd: 0.25,
    });
    assert.deepEqual(addUsage(priced, priced), {
      promptTokens: 20,
      completionTokens: 10,
      totalTokens: 30,
      costUsd: 0.5,
    });
  });

  test("a batch's per-rollout usage sums its runs' costs the same way (absent when no run had one)", () => {
    const counts = emptyBatchCounts(2);
    for (const rollout of [1, 1, 2]) recordStarted(counts, rollout);
    recordFinished(counts, 1, {
      termination: 'answer',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0.25 },
    });
    recordFinished(counts, 1, {
      termination: 'answer',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15, costUsd: 0.5 },
    });
    recordFinished(counts, 2, {
      termination: 'answer',
      usage: { promptTokens: 10, completionTokens: 5, totalTokens: 15 },
    });
    const [first, second] = summaryPerRollout(counts, 2);
    assert.equal(first?.usage.costUsd, 0.75);
    assert.equal(second && 'costUsd' in second.usage, false);
  });
});

describe('REACT_AGENT_MODEL_PRICES (src/config/model-prices-config.ts)', () => {
  test('unset or blank: no prices', () => {
    assert.deepEqual(loadModelPrices({}), {});
    assert.deepEqual(loadModelPrices({ REACT_AGENT_MODEL_PRICES: '  ' }), {});
  });

  test('JSON of models to prices; cachedInput optional', () => {
    assert.deepEqual(
      loadModelPrices({
        REACT_AGENT_MODEL_PRICES:
          '{"gpt-4o-mini": {"input": 0.15, "cachedInput": 0.075, "output": 0.6}, "local": {"input": 0, "output": 0}}',
      }),
      {
        'gpt-4o-mini': { input: 0.15, cachedInput: 0.075, output: 0.6 },
        local: { input: 0, output: 0 },
      },
    );
  });

  test('cacheWrite optional (issue 31): cache writes at their price, at the input price when there is none', () => {
    const prices = loadModelPrices({
      REACT_AGENT_MODEL_PRICES: '{"claude": {"input": 3, "cachedInput": 0.3, "cacheWrite": 3.75, "output": 15}}',
    });
    assert.deepEqual(prices, { claude: { input: 3, cachedInput: 0.3, cacheWrite: 3.75, output: 15 } });
    const tokens = { promptTokens: 2000, completionTokens: 0, cachedPromptTokens: 1000, cacheWriteTokens: 500 };
    assert.ok(Math.abs(callCostUsd(tokens, prices.claude!) - (500 * 3 + 1000 * 0.3 + 500 * 3.75) / 1e6) < 1e-12);
    assert.ok(Math.abs(callCostUsd(tokens, { input: 3, output: 15 }) - (2000 * 3) / 1e6) < 1e-12);
  });

  test('@file: read from the file, relative to the working directory', () => {
    writeFileSync(join(scratch, 'prices.json'), JSON.stringify({ 'qwen3:8b': { input: 0.1, output: 0.2 } }));
    assert.deepEqual(loadModelPrices({ REACT_AGENT_MODEL_PRICES: '@prices.json' }, scratch), {
      'qwen3:8b': { input: 0.1, output: 0.2 },
    });
    assert.deepEqual(loadModelPrices({ REACT_AGENT_MODEL_PRICES: `@${join(scratch, 'prices.json')}` }, '/'), {
      'qwen3:8b': { input: 0.1, output: 0.2 },
    });
    assertPricesError('@missing.json', /missing\.json/, /cannot be read/);
    writeFileSync(join(scratch, 'bad.json'), '{"a": ');
    assertPricesError('@bad.json', /not valid JSON/, /bad\.json/);
    writeFileSync(join(scratch, 'huge.json'), `{"m": {"input": 1, "output": 1}, "x": "${'x'.repeat(1_000_001)}"}`);
    assertPricesError('@huge.json', /huge\.json/, /larger than 1000000 bytes/);
  });

  test('a model name that is empty or longer than 200 characters is refused', () => {
    assertPricesError('{" ": {"input": 1, "output": 1}}', /model name that is empty or too long/);
    assertPricesError(`{"${'m'.repeat(201)}": {"input": 1, "output": 1}}`, /model name that is empty or too long/);
  });

  test('bad JSON, not an object, a negative or non-number price, a missing or unknown field: a ConfigurationError naming the variable and the model', () => {
    assertPricesError('{gpt: 1}', /not valid JSON/);
    assertPricesError('[1, 2]', /JSON object of model names/);
    assertPricesError('{"gpt-4o": 0.15}', /"gpt-4o"/, /no price object/);
    assertPricesError('{"gpt-4o": {"input": -1, "output": 1}}', /"gpt-4o"/, /input price -1/);
    assertPricesError('{"gpt-4o": {"input": 1, "output": "0.6"}}', /"gpt-4o"/, /output price "0\.6"/);
    assertPricesError(
      '{"gpt-4o": {"input": 1, "cachedInput": null, "output": 1}}',
      /"gpt-4o"/,
      /cachedInput price null/,
    );
    assertPricesError('{"gpt-4o": {"input": 1}}', /"gpt-4o"/, /no output price/);
    assertPricesError('{"gpt-4o": {"input": 1, "output": 1, "cached": 0.5}}', /"gpt-4o"/, /unknown field "cached"/);
  });

  test('parseModelPrices is the same check on text', () => {
    assert.throws(
      () => parseModelPrices('{"m": {"input": 1, "output": -0.1}}'),
      (error: unknown) => error instanceof ConfigurationError && /"m"/.test(error.message),
    );
  });
});
