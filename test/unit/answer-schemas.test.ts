import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { RE2JS } from 're2js';
import { ANSWER_SCHEMA_LIMITS, answerSchemaProblems } from '../../src/core/answer-schema-bounds';
import {
  ANSWER_CHECK_LIMITS,
  checkAnswerValue,
  parseStructuredAnswer,
  valueDepth,
} from '../../src/core/json-schema-validation';
import {
  compileLinearPattern,
  MAX_PATTERN_SIZE,
  patternSize,
  type LinearPattern,
} from '../../src/core/linear-patterns';
import { validateRunInput } from '../../src/core/run-input';

/** Issue 28 #1 and #8: a client's answer schema is bounded at input and checked in linear time. */

function compiled(pattern: string): LinearPattern {
  const made = compileLinearPattern(pattern);
  assert.ok('pattern' in made, `${pattern}: ${'problem' in made ? made.problem : ''}`);
  return made.pattern;
}

function elapsedMs(work: () => unknown): number {
  const started = performance.now();
  work();
  return performance.now() - started;
}

describe('linear-time patterns', () => {
  test('a backtracking pattern answers at once, on a short text and a long one', () => {
    const pattern = compiled('^(a+)+$');
    assert.equal(pattern.test('aaaa'), true);
    assert.ok(elapsedMs(() => assert.equal(pattern.test(`${'a'.repeat(64)}!`), false)) < 1_000);
    assert.ok(elapsedMs(() => assert.equal(pattern.test(`${'a'.repeat(100_000)}!`), false)) < 1_000);
  });

  test('ECMA escapes RE2 spells differently are translated; the usual schema patterns work', () => {
    assert.equal(compiled('^\\u0041\\d{2}$').test('A42'), true);
    assert.equal(compiled('^[A-Z]{2,3}-\\d+$').test('AB-1'), true);
    assert.equal(compiled('^\\d{4}-\\d{2}-\\d{2}$').test('2026-12-04'), true);
    assert.equal(compiled('^\\d{4}-\\d{2}-\\d{2}$').test('04.12.2026'), false);
    assert.equal(compiled('colou?r').test('the colour red'), true, 'unanchored, as RegExp.test');
  });

  test('an invalid pattern, lookaround and backreferences are refused with RE2s words', () => {
    for (const [pattern, words] of [
      ['((', /missing closing \)/],
      ['^(?=a)a$', /invalid or unsupported Perl syntax/],
      ['(a)\\1', /invalid escape sequence/],
    ] as const) {
      const made = compileLinearPattern(pattern);
      assert.ok('problem' in made, pattern);
      assert.match(made.problem, /^is not a pattern this agent can check \(/);
      assert.match(made.problem, words);
    }
  });

  test('a pattern larger than the bound is refused before it is compiled', () => {
    const pattern = 'a{1000}'.repeat(140);
    let made: ReturnType<typeof compileLinearPattern> | undefined;
    assert.ok(
      elapsedMs(() => (made = compileLinearPattern(pattern))) < 100,
      'measured, not built (compiling it takes about a second)',
    );
    assert.ok(made && 'problem' in made);
    assert.match(
      made.problem,
      new RegExp(`^is too large to check \\(size about \\d+; the most is ${MAX_PATTERN_SIZE}\\)$`),
    );
  });

  test('the estimated size is never below the size of the program RE2 compiles', () => {
    const patterns = [
      'abc',
      '^(a+)+$',
      'a{1000}',
      '(?:ab|cd){0,100}',
      '(x{10}){10}',
      '[a-z]{2,30}',
      '\\p{L}{50}',
      '[]a]{20}',
      '(?i)[a-zäöü]{100}',
      '\\Qa{99}\\E{5}',
      '(a|b|c|d)*e{0,40}',
      'a{10,}',
      '((a?){5}){5}',
    ];
    for (const pattern of patterns) {
      const program = (
        RE2JS.compile(RE2JS.translateRegExp(pattern)) as unknown as { re2Input: { prog: { numInst(): number } } }
      ).re2Input.prog.numInst();
      assert.ok(patternSize(pattern) >= program, `${pattern}: estimated ${patternSize(pattern)}, compiled ${program}`);
    }
  });
});

describe('answer schema bounds at input', () => {
  const nested = (depth: number): Record<string, unknown> => {
    let schema: Record<string, unknown> = { type: 'string' };
    for (let level = 0; level < depth; level++) schema = { type: 'object', properties: { a: schema } };
    return schema;
  };

  test('a usual schema is within them', () => {
    assert.deepEqual(
      answerSchemaProblems({
        type: 'object',
        properties: {
          date: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
          tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' } },
        },
        required: ['date'],
      }),
      [],
    );
  });

  test(`nesting past ${ANSWER_SCHEMA_LIMITS.maxDepth} levels is refused, even 100,000 deep (no recursion)`, () => {
    assert.deepEqual(answerSchemaProblems(nested(15)), [], '15 schema levels are 31 JSON levels');
    assert.match(
      answerSchemaProblems(nested(16))[0] ?? '',
      /^answerSchema is nested more than 32 levels deep \(at answerSchema(\.properties\.a)+/,
    );
    let deep: unknown = {};
    for (let level = 0; level < 100_000; level++) deep = { items: deep };
    assert.match(answerSchemaProblems(deep)[0] ?? '', /^answerSchema is nested more than 32 levels deep/);
  });

  test('a schema larger than the bound is refused', () => {
    const large = { type: 'object', description: 'x'.repeat(ANSWER_SCHEMA_LIMITS.maxCharacters) };
    assert.deepEqual(answerSchemaProblems(large), [
      `answerSchema is ${JSON.stringify(large).length} characters as JSON; the most is ${ANSWER_SCHEMA_LIMITS.maxCharacters}`,
    ]);
  });

  test('each pattern is checked and named by its path; patterns too large together are refused', () => {
    assert.deepEqual(
      answerSchemaProblems({
        type: 'object',
        properties: {
          ok: { type: 'string', pattern: '^a$' },
          bad: { type: 'array', items: { type: 'string', pattern: '((' } },
        },
      }).map((problem) => problem.replace(/ \(.*$/, '')),
      ['answerSchema.properties.bad.items.pattern is not a pattern this agent can check'],
    );
    const many = Object.fromEntries(
      Array.from({ length: 10 }, (_, index) => [`p${index}`, { type: 'string', pattern: '[a-z]{0,500}' }]),
    );
    assert.match(
      answerSchemaProblems({ type: 'object', properties: many }).join('\n'),
      /^answerSchema's patterns are too large to check together \(size about \d+; the most is 4000, and 1000 for one\)$/,
    );
  });

  test('validateRunInput refuses them, naming the field; the client and the workflow use it', () => {
    assert.match(
      validateRunInput({
        question: 'q',
        answerSchema: { type: 'object', properties: { x: { type: 'string', pattern: '((' } } },
      }).problems.join('; '),
      /^answerSchema\.properties\.x\.pattern is not a pattern this agent can check/,
    );
    assert.match(
      validateRunInput({ question: 'q', answerSchema: nested(40) }).problems.join('; '),
      /^answerSchema is nested more than 32 levels deep/,
    );
    assert.deepEqual(validateRunInput({ question: 'q', answerSchema: { type: 'object' } }).problems, []);
    assert.deepEqual(validateRunInput({ question: 'q', answerSchema: [1] as never }).problems, [
      'answerSchema must be an object, got [1]',
    ]);
  });
});

describe('bounded answer checks', () => {
  test('a backtracking pattern against "aaaa…a!" fails at once', () => {
    const schema = { type: 'object', properties: { x: { type: 'string', pattern: '^(a+)+$' } } };
    assert.ok(
      elapsedMs(() =>
        assert.deepEqual(checkAnswerValue(schema, { x: `${'a'.repeat(64)}!` }), ['$.x must match /^(a+)+$/']),
      ) < 1_000,
    );
    assert.deepEqual(checkAnswerValue(schema, { x: 'aaa' }), []);
  });

  test('a string too long for its pattern is a problem of its own, not minutes of matching', () => {
    const schema = { type: 'array', items: { type: 'string', pattern: '^(?:a|b)*a(?:a|b){100}$' } };
    const problems = checkAnswerValue(schema, ['ab'.repeat(5_000), 'ab'.repeat(5_000)]);
    assert.match(problems.at(-1) ?? '', /^\$\[\d\] is too long to check against its pattern \(10000 characters\)$/);
  });

  test('a schema whose anyOf branches double at each level stops after the step bound', () => {
    const schema = {
      $defs: {
        a: {
          anyOf: [
            { type: 'array', items: { $ref: '#/$defs/a' } },
            { type: 'array', items: { $ref: '#/$defs/a' } },
          ],
        },
      },
      $ref: '#/$defs/a',
    };
    let value: unknown = 1;
    for (let level = 0; level < 40; level++) value = [value];
    let problems: string[] = [];
    assert.ok(elapsedMs(() => (problems = checkAnswerValue(schema, value))) < 5_000);
    assert.equal(
      problems.at(-1),
      `the answer is too large to check against the schema (more than ${ANSWER_CHECK_LIMITS.maxSteps} steps)`,
    );
  });

  test('a schema that refers to itself without end stops at the recursion bound (no stack overflow)', () => {
    const schema = { $defs: { a: { anyOf: [{ $ref: '#/$defs/a' }] } }, $ref: '#/$defs/a' };
    // The bound's own problem is one anyOf branch's; the branch failing is what the answer is told.
    assert.deepEqual(checkAnswerValue(schema, 1), ['$ must be a value, got 1']);
    assert.deepEqual(
      checkAnswerValue({ type: 'array', items: { $ref: '#' } }, [[[1]]]),
      [],
      'a reference it cannot follow accepts anything, as before',
    );
  });

  test(`an answer nested more than ${ANSWER_CHECK_LIMITS.maxValueDepth} levels is refused (its result could not be encoded either)`, () => {
    let value: unknown = 1;
    for (let level = 0; level < 100_000; level++) value = [value];
    assert.deepEqual(checkAnswerValue({ type: 'array' }, value), ['the answer is nested more than 64 levels deep']);
    assert.equal(valueDepth([[1], { a: [2] }], 64), 3);
  });

  test('parseStructuredAnswer: bounded refuses an answer too long to parse; unbounded (runs from before) reads as it did', () => {
    const long = JSON.stringify({ x: 'y'.repeat(ANSWER_CHECK_LIMITS.maxAnswerCharacters) });
    assert.deepEqual(parseStructuredAnswer(long, { type: 'object' }, true).problems, [
      `the answer is ${long.length} characters; a structured answer may have at most ${ANSWER_CHECK_LIMITS.maxAnswerCharacters}`,
    ]);
    assert.deepEqual(parseStructuredAnswer(long, { type: 'object' }).problems, []);
    assert.deepEqual(
      parseStructuredAnswer(
        '```json\n{"x": "2026-12-04"}\n```',
        { type: 'object', properties: { x: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' } } },
        true,
      ),
      {
        value: { x: '2026-12-04' },
        problems: [],
      },
    );
  });
});
