import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { MAX_QUESTION_CHARACTERS, validateRunInput, type ResearchRunInput } from '../../src/core/run-input';
import { DEFAULT_LIMITS, type RunLimits } from '../../src/core/run-limits';

/** Problems for a valid question with these limits. */
function limitProblems(limits: Partial<Record<keyof RunLimits, unknown>>): string[] {
  return validateRunInput({ question: 'q', limits: limits as Partial<RunLimits> }).problems;
}

describe('validateRunInput', () => {
  test('a bare question is valid and takes the default limits', () => {
    const { limits, problems } = validateRunInput({ question: 'Who first reached the South Pole?' });
    assert.deepEqual(problems, []);
    assert.deepEqual(limits, DEFAULT_LIMITS);
    assert.deepEqual(DEFAULT_LIMITS, { maxModelCalls: 100, maxDurationMinutes: 150, maxContextTokens: 110_000, maxObservationCharacters: 40_000, maxTotalTokens: 0 });
    assert.notEqual(limits, DEFAULT_LIMITS, 'the defaults object is not handed out to be mutated');
  });

  test('given limits override only their own defaults', () => {
    const { limits, problems } = validateRunInput({ question: 'q', limits: { maxModelCalls: 5, maxDurationMinutes: 0.5 } });
    assert.deepEqual(problems, []);
    assert.deepEqual(limits, { ...DEFAULT_LIMITS, maxModelCalls: 5, maxDurationMinutes: 0.5 });
  });

  for (const question of ['', '   ', '\n\t ']) {
    test(`question ${JSON.stringify(question)} is refused`, () => {
      assert.deepEqual(validateRunInput({ question }).problems, ['question must be a non-empty string']);
    });
  }

  test('a question that is not a string, or no input at all, is refused without throwing', () => {
    assert.deepEqual(validateRunInput({ question: 42 } as unknown as ResearchRunInput).problems, ['question must be a non-empty string']);
    assert.deepEqual(validateRunInput({} as ResearchRunInput).problems, ['question must be a non-empty string']);
    const fromNull = validateRunInput(null as unknown as ResearchRunInput);
    assert.deepEqual(fromNull.problems, ['question must be a non-empty string']);
    assert.deepEqual(fromNull.limits, DEFAULT_LIMITS);
  });

  test('the longest question allowed, and one character more', () => {
    assert.equal(MAX_QUESTION_CHARACTERS, 20_000);
    assert.deepEqual(validateRunInput({ question: 'x'.repeat(MAX_QUESTION_CHARACTERS) }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'x'.repeat(MAX_QUESTION_CHARACTERS + 1) }).problems, ['question is 20001 characters; the most is 20000']);
  });

  for (const name of ['maxModelCalls', 'maxContextTokens', 'maxObservationCharacters', 'maxDurationMinutes'] as const) {
    test(`limits.${name}: zero, negative, NaN, Infinity and non-numbers are refused`, () => {
      const kind = name === 'maxDurationMinutes' ? 'number' : 'integer';
      assert.deepEqual(limitProblems({ [name]: 0 }), [`limits.${name} must be a positive ${kind}, got 0`]);
      assert.deepEqual(limitProblems({ [name]: -3 }), [`limits.${name} must be a positive ${kind}, got -3`]);
      assert.deepEqual(limitProblems({ [name]: Number.NaN }), [`limits.${name} must be a positive ${kind}, got null`]);
      assert.deepEqual(limitProblems({ [name]: Number.POSITIVE_INFINITY }), [`limits.${name} must be a positive ${kind}, got null`]);
      assert.deepEqual(limitProblems({ [name]: '10' }), [`limits.${name} must be a positive ${kind}, got "10"`]);
      assert.deepEqual(limitProblems({ [name]: null }), [`limits.${name} must be a positive ${kind}, got null`]);
    });
  }

  for (const name of ['maxModelCalls', 'maxContextTokens', 'maxObservationCharacters'] as const) {
    test(`limits.${name} must be an integer`, () => {
      assert.deepEqual(limitProblems({ [name]: 2.5 }), [`limits.${name} must be a positive integer, got 2.5`]);
    });
  }

  test('maxDurationMinutes may be fractional', () => {
    assert.deepEqual(limitProblems({ maxDurationMinutes: 0.25 }), []);
  });

  test('huge limits are refused with their maximum; the maximum itself is allowed', () => {
    const maxima = { maxModelCalls: 10_000, maxDurationMinutes: 7 * 24 * 60, maxContextTokens: 10_000_000, maxObservationCharacters: 10_000_000 };
    for (const [name, maximum] of Object.entries(maxima)) {
      assert.deepEqual(limitProblems({ [name]: maximum }), [], `${name} = ${maximum} is allowed`);
      assert.deepEqual(limitProblems({ [name]: maximum + 1 }), [`limits.${name} must be at most ${maximum}, got ${maximum + 1}`]);
    }
    assert.deepEqual(limitProblems({ maxModelCalls: Number.MAX_SAFE_INTEGER }), [`limits.maxModelCalls must be at most 10000, got ${Number.MAX_SAFE_INTEGER}`]);
  });

  test('every problem is reported, not just the first', () => {
    const { problems } = validateRunInput({ question: ' ', limits: { maxModelCalls: 0, maxContextTokens: -1 }, tools: 'search' as unknown as string[] });
    assert.deepEqual(problems, [
      'question must be a non-empty string',
      'limits.maxModelCalls must be a positive integer, got 0',
      'limits.maxContextTokens must be a positive integer, got -1',
      'tools must be a list of tool names',
    ]);
  });

  test('tools must be a list of strings when given', () => {
    assert.deepEqual(validateRunInput({ question: 'q', tools: ['search', 'visit'] }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'q', tools: [] }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'q', tools: undefined }).problems, []);
    for (const tools of ['search', ['search', 3], [null], { 0: 'search' }, null]) {
      assert.deepEqual(validateRunInput({ question: 'q', tools: tools as unknown as string[] }).problems, ['tools must be a list of tool names'], JSON.stringify(tools));
    }
  });
});
