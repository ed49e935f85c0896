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
    assert.deepEqual(DEFAULT_LIMITS, {
      maxModelCalls: 100,
      maxDurationMinutes: 150,
      maxContextTokens: 110_000,
      maxObservationCharacters: 40_000,
      maxTotalTokens: 0,
    });
    assert.notEqual(limits, DEFAULT_LIMITS, 'the defaults object is not handed out to be mutated');
  });

  test('given limits override only their own defaults', () => {
    const { limits, problems } = validateRunInput({
      question: 'q',
      limits: { maxModelCalls: 5, maxDurationMinutes: 0.5 },
    });
    assert.deepEqual(problems, []);
    assert.deepEqual(limits, { ...DEFAULT_LIMITS, maxModelCalls: 5, maxDurationMinutes: 0.5 });
  });

  test('an empty or blank question is refused', () => {
    assert.deepEqual(validateRunInput({ question: '' }).problems, ['question must not be empty']);
    for (const question of ['   ', '\n\t '])
      assert.deepEqual(
        validateRunInput({ question }).problems,
        ['question must not be blank'],
        JSON.stringify(question),
      );
  });

  test('a question that is not a string, or no input at all, is refused without throwing', () => {
    assert.deepEqual(validateRunInput({ question: 42 } as unknown as ResearchRunInput).problems, [
      'question must be a string, got 42',
    ]);
    assert.deepEqual(validateRunInput({} as ResearchRunInput).problems, ['question is required']);
    const fromNull = validateRunInput(null as unknown as ResearchRunInput);
    assert.deepEqual(fromNull.problems, ['the input must be a JSON object such as {"question": "..."}, got null']);
    assert.deepEqual(fromNull.limits, DEFAULT_LIMITS);
    assert.deepEqual(validateRunInput(['q'] as unknown as ResearchRunInput).problems, [
      'the input must be a JSON object such as {"question": "..."}, got a list',
    ]);
  });

  test('the longest question allowed, and one character more', () => {
    assert.equal(MAX_QUESTION_CHARACTERS, 20_000);
    assert.deepEqual(validateRunInput({ question: 'x'.repeat(MAX_QUESTION_CHARACTERS) }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'x'.repeat(MAX_QUESTION_CHARACTERS + 1) }).problems, [
      'question is 20001 characters; the most is 20000',
    ]);
  });

  const maxima = {
    maxModelCalls: 10_000,
    maxDurationMinutes: 7 * 24 * 60,
    maxContextTokens: 10_000_000,
    maxObservationCharacters: 10_000_000,
  };

  for (const name of ['maxModelCalls', 'maxContextTokens', 'maxObservationCharacters'] as const) {
    test(`limits.${name}: zero, negative, fractional, NaN, Infinity and non-numbers are refused, naming the range`, () => {
      const range = `an integer from 1 to ${maxima[name]}`;
      assert.deepEqual(limitProblems({ [name]: 0 }), [`limits.${name} must be ${range}, got 0`]);
      assert.deepEqual(limitProblems({ [name]: -3 }), [`limits.${name} must be ${range}, got -3`]);
      assert.deepEqual(limitProblems({ [name]: 2.5 }), [`limits.${name} must be ${range}, got 2.5`]);
      assert.deepEqual(limitProblems({ [name]: Number.NaN }), [`limits.${name} must be ${range}, got NaN`]);
      assert.deepEqual(limitProblems({ [name]: Number.POSITIVE_INFINITY }), [
        `limits.${name} must be ${range}, got Infinity`,
      ]);
      assert.deepEqual(limitProblems({ [name]: '10' }), [`limits.${name} must be an integer, got "10"`]);
      assert.deepEqual(limitProblems({ [name]: null }), [`limits.${name} must be an integer, got null`]);
    });
  }

  test('limits.maxDurationMinutes: more than 0, may be fractional', () => {
    assert.deepEqual(limitProblems({ maxDurationMinutes: 0.25 }), []);
    assert.deepEqual(limitProblems({ maxDurationMinutes: 0 }), [
      'limits.maxDurationMinutes must be a number more than 0 and at most 10080, got 0',
    ]);
    assert.deepEqual(limitProblems({ maxDurationMinutes: 'long' }), [
      'limits.maxDurationMinutes must be a number, got "long"',
    ]);
  });

  test('limits.maxTotalTokens: 0 (no budget) or a positive integer', () => {
    assert.deepEqual(limitProblems({ maxTotalTokens: 0 }), []);
    assert.deepEqual(limitProblems({ maxTotalTokens: 50_000 }), []);
    assert.deepEqual(limitProblems({ maxTotalTokens: -1 }), [
      'limits.maxTotalTokens must be an integer of at least 0, got -1',
    ]);
  });

  test('huge limits are refused with their maximum; the maximum itself is allowed', () => {
    for (const [name, maximum] of Object.entries(maxima)) {
      assert.deepEqual(limitProblems({ [name]: maximum }), [], `${name} = ${maximum} is allowed`);
      assert.equal(limitProblems({ [name]: maximum + 1 }).length, 1);
      assert.match(
        limitProblems({ [name]: maximum + 1 })[0] as string,
        new RegExp(`^limits\\.${name} must be an? (integer|number) .*${maximum}, got ${maximum + 1}$`),
      );
    }
  });

  test('every problem is reported, not just the first', () => {
    const { problems } = validateRunInput({
      question: ' ',
      limits: { maxModelCalls: 0, maxContextTokens: -1 },
      tools: 'search' as unknown as string[],
    });
    assert.deepEqual(problems, [
      'question must not be blank',
      'limits.maxModelCalls must be an integer from 1 to 10000, got 0',
      'limits.maxContextTokens must be an integer from 1 to 10000000, got -1',
      'tools must be a list, got "search"',
    ]);
  });

  test('tools must be a list of strings when given', () => {
    assert.deepEqual(validateRunInput({ question: 'q', tools: ['search', 'visit'] }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'q', tools: [] }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'q', tools: undefined }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'q', tools: ['search', 3] as unknown as string[] }).problems, [
      'tools[1] must be a string, got 3',
    ]);
    for (const tools of ['search', { 0: 'search' }, null]) {
      assert.equal(
        validateRunInput({ question: 'q', tools: tools as unknown as string[] }).problems.length,
        1,
        JSON.stringify(tools),
      );
      assert.match(
        validateRunInput({ question: 'q', tools: tools as unknown as string[] }).problems[0] as string,
        /^tools must be a list, got /,
      );
    }
  });

  test('unknown fields are refused, naming them and the known ones, at any depth', () => {
    assert.deepEqual(validateRunInput({ question: 'q', qestion2: 1 } as unknown as ResearchRunInput).problems, [
      'qestion2 is not a known field (known: question, answer, limits, model, tools, protocol, loop, answerSchema, subruns)',
    ]);
    assert.match(
      validateRunInput({ question: 'q', limits: { maxCalls: 5 } } as unknown as ResearchRunInput).problems[0] as string,
      /^limits\.maxCalls is not a known field \(known: maxModelCalls, /,
    );
    assert.match(
      validateRunInput({ question: 'q', model: { temprature: 0.1 } } as unknown as ResearchRunInput)
        .problems[0] as string,
      /^model\.temprature is not a known field/,
    );
  });

  test('the internal resume is refused from a client, and from a continued run it did not come from (issue 28 #4)', () => {
    const refused =
      /^resume and resumedFrom are internal: only the run's own continue-as-new sets them, never a client$/;
    const resume = { limits: DEFAULT_LIMITS } as unknown as ResearchRunInput['resume'];
    // A client's start (and the client-side check, which never has a run it continued from).
    assert.match(validateRunInput({ question: 'q', resume }).problems.join('; '), refused);
    assert.match(validateRunInput({ question: 'q', resume, resumedFrom: 'run-a' }).problems.join('; '), refused);
    assert.match(validateRunInput({ question: 'q', resumedFrom: 'run-a' }).problems.join('; '), refused);
    // A run the server continued (a retry, a cron run) whose input a client wrote: the ids differ.
    assert.match(validateRunInput({ question: 'q', resume }, 'run-a').problems.join('; '), refused);
    assert.match(
      validateRunInput({ question: 'q', resume, resumedFrom: 'run-b' }, 'run-a').problems.join('; '),
      refused,
    );
    assert.match(
      validateRunInput({ question: 'q', resume: 'state' as never, resumedFrom: 'run-a' }, 'run-a').problems.join('; '),
      refused,
    );
    // The workflow's own continue-as-new.
    assert.deepEqual(validateRunInput({ question: 'q', resume, resumedFrom: 'run-a' }, 'run-a').problems, []);
  });

  test("a continued run's carried limits are held to the schema's bounds too", () => {
    const resume = {
      limits: { ...DEFAULT_LIMITS, maxModelCalls: 1_000_000, maxDurationMinutes: 1_000_000 },
    } as unknown as ResearchRunInput['resume'];
    assert.deepEqual(validateRunInput({ question: 'q', resume, resumedFrom: 'run-a' }, 'run-a').problems, [
      'resume.limits.maxModelCalls must be an integer from 1 to 10000, got 1000000',
      'resume.limits.maxDurationMinutes must be a number more than 0 and at most 10080, got 1000000',
    ]);
  });

  test('__proto__ and constructor are unknown fields, at the top and inside (issue 28 #16)', () => {
    const input = JSON.parse(
      '{"question": "q", "__proto__": {"x": 1}, "constructor": "y", "limits": {"__proto__": {"maxModelCalls": 5}, "constructor": 1}}',
    ) as ResearchRunInput;
    const { problems, limits } = validateRunInput(input);
    assert.deepEqual(
      problems.map((problem) => problem.replace(/ \(known: .*\)$/, '')),
      [
        '__proto__ is not a known field',
        'constructor is not a known field',
        'limits.__proto__ is not a known field',
        'limits.constructor is not a known field',
      ],
    );
    assert.equal(limits.maxModelCalls, DEFAULT_LIMITS.maxModelCalls);
    assert.equal(({} as { x?: number }).x, undefined, 'nothing was polluted');
  });

  test('a __proto__ key that became the prototype on the way in is refused: its fields would pass the schema unchecked', () => {
    const input = Object.setPrototypeOf(
      { question: 'q', tools: ['lookup'] },
      { answerSchema: { pattern: '^(a+)+$' }, tools: ['x'] },
    ) as ResearchRunInput;
    assert.deepEqual(validateRunInput(input).problems, ['__proto__ is not a known field']);
    const nested = {
      question: 'q',
      limits: Object.setPrototypeOf({}, { maxModelCalls: 1_000_000 }),
    } as ResearchRunInput;
    assert.deepEqual(validateRunInput(nested).problems, ['limits.__proto__ is not a known field']);
    assert.deepEqual(
      validateRunInput({ question: 'q', tools: ['lookup'], loop: { finalAnswerPhase: false } }).problems,
      [],
      'plain objects and arrays pass',
    );
    assert.deepEqual(
      validateRunInput(Object.assign(Object.create(null) as object, { question: 'q' }) as ResearchRunInput).problems,
      [],
      'an object without prototype passes',
    );
  });

  test('an unknown field named by a long key is quoted shortened', () => {
    const [problem] = validateRunInput({
      question: 'q',
      ['k'.repeat(100_000)]: 1,
    } as unknown as ResearchRunInput).problems;
    assert.ok((problem as string).length < 400, `${(problem as string).length} characters`);
    assert.match(problem as string, /^k{57}\.\.\. is not a known field/);
  });

  test('model options, protocol, loop flags and the answer schema are checked by type and range', () => {
    assert.deepEqual(
      validateRunInput({
        question: 'q',
        model: { model: 'm', temperature: 0, topP: 1, presencePenalty: -2, maxOutputTokens: 1 },
      }).problems,
      [],
    );
    assert.deepEqual(validateRunInput({ question: 'q', model: { temperature: 9 } }).problems, [
      'model.temperature must be a number from 0 to 2, got 9',
    ]);
    assert.deepEqual(validateRunInput({ question: 'q', model: { maxOutputTokens: 0 } }).problems, [
      'model.maxOutputTokens must be an integer of at least 1, got 0',
    ]);
    assert.deepEqual(validateRunInput({ question: 'q', protocol: 'smoke' as never }).problems, [
      'protocol must be one of "deep-research", "native", "classic", got "smoke"',
    ]);
    assert.deepEqual(validateRunInput({ question: 'q', loop: { finalAnswerPhase: 'yes' as never } }).problems, [
      'loop.finalAnswerPhase must be true or false, got "yes"',
    ]);
    assert.deepEqual(validateRunInput({ question: 'q', loop: { maxParallelToolCalls: 65 } }).problems, [
      'loop.maxParallelToolCalls must be an integer from 1 to 64, got 65',
    ]);
    assert.deepEqual(validateRunInput({ question: 'q', answerSchema: [1] as never }).problems, [
      'answerSchema must be an object, got [1]',
    ]);
  });
});
