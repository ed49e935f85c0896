import assert from 'node:assert/strict';
import { describe, expect, test } from '@jest/globals';
import { answerTokens, exactMatch, normaliseAnswer, tokenF1 } from '../../src/domain/evaluation/answer-matching';
import { validateBatchInput } from '../../src/core/batch-contract';
import { compareEvaluations } from '../../src/domain/evaluation/evaluation-comparison';
import { judgeRanges, validateEvaluationInput } from '../../src/core/evaluation/evaluation-contract';
import {
  dedupeRollout,
  toolCallsOfMessages,
  terminationOfLine,
  type EvaluationRun,
} from '../../src/core/evaluation/evaluation-runs';
import {
  buildEvaluationReport,
  deepResearchSummaryLine,
  exactMatchVerdict,
  runKey,
  type RunVerdict,
} from '../../src/domain/evaluation/evaluation-scoring';
import {
  bestRollout,
  meanPassAt1,
  passAt1PerRollout,
  passAtAny,
  unbiasedPassAtK,
  unbiasedPassAtKForQuestion,
} from '../../src/domain/evaluation/pass-at-k';
import { distributionOf } from '../../src/domain/evaluation/trajectory-statistics';

/** Scores below are worked out by hand in the comments next to them. */
const close = (actual: number | undefined, expected: number) => expect(actual).toBeCloseTo(expected, 10);

describe('answer normalisation', () => {
  test('case, punctuation, articles, whitespace and accents', () => {
    assert.equal(normaliseAnswer('  The Café  de   Flore! '), 'cafe de flore');
    assert.equal(normaliseAnswer('U.S.'), 'us');
    assert.equal(normaliseAnswer('An apple, a pear'), 'apple pear');
    assert.equal(normaliseAnswer('Zürich'), 'zurich');
    assert.equal(normaliseAnswer('$1,000'), '1000');
    // "theory" keeps its "the": articles go only as whole words.
    assert.equal(normaliseAnswer('The theory'), 'theory');
  });

  test('CJK counts one token a character; other scripts by word', () => {
    assert.deepEqual(answerTokens('北京大学 2024'), ['北', '京', '大', '学', '2024']);
    assert.deepEqual(answerTokens('東京タワーtower'), ['東', '京', 'タ', 'ワ', 'ー', 'tower']);
  });

  test('exact match compares normalised tokens', () => {
    assert.equal(exactMatch('Paris.', 'paris'), 1);
    assert.equal(exactMatch('the Blue Whale', 'blue whale'), 1);
    assert.equal(exactMatch('Paris, France', 'Paris'), 0);
    assert.equal(exactMatch('北京', '北 京'), 1);
  });

  test('token F1 by hand', () => {
    // pred [quick, brown, fox], ref [quick, fox, jumps]: shared 2, P = R = 2/3, F1 = 2/3.
    close(tokenF1('The quick brown fox', 'quick fox jumps'), 2 / 3);
    // pred 北京大学 (4 characters), ref 北京 (2): shared 2, P = 1/2, R = 1, F1 = 2·(1/2)/(3/2) = 2/3.
    close(tokenF1('北京大学', '北京'), 2 / 3);
    // repeated tokens are a multiset: pred [a1, a1] vs ref [a1]: shared 1, P = 1/2, R = 1, F1 = 2/3.
    close(tokenF1('x x', 'x'), 2 / 3);
    assert.equal(tokenF1('', ''), 1);
    assert.equal(tokenF1('something', ''), 0);
    assert.equal(tokenF1('Lyon', 'Paris'), 0);
  });
});

describe('pass@k', () => {
  // 4 questions × 3 rollouts:  q1 T T T (c=3), q2 T F F (c=1), q3 F F T (c=1), q4 F F F (c=0).
  const k3 = [
    [true, true, true],
    [true, false, false],
    [false, false, true],
    [false, false, false],
  ];

  test('k = 3', () => {
    const perRollout = passAt1PerRollout(k3, 3);
    assert.deepEqual(perRollout, [0.5, 0.25, 0.5]); // 2/4, 1/4, 2/4
    close(meanPassAt1(perRollout), 1.25 / 3);
    assert.deepEqual(bestRollout(perRollout), { rollout: 1, passAt1: 0.5 }); // the first on a tie
    assert.equal(passAtAny(k3), 0.75); // q1, q2, q3
    const unbiased = unbiasedPassAtK(k3, 3);
    close(unbiased['1'], 5 / 12); // (1 + 1/3 + 1/3 + 0) / 4, the same as the mean pass@1
    close(unbiased['2'], 7 / 12); // q1 1; q2, q3 1 - C(2,2)/C(3,2) = 2/3; q4 0 → (7/3)/4
    close(unbiased['3'], 0.75); // equals pass@3 (any of 3)
  });

  test('k = 5, estimator below the number of rollouts', () => {
    // q1 correct in 2 of 5, q2 in none.
    const k5 = [
      [false, true, false, true, false],
      [false, false, false, false, false],
    ];
    const unbiased = unbiasedPassAtK(k5, 5);
    close(unbiased['1'], 0.2); // (2/5 + 0) / 2
    close(unbiased['2'], 0.35); // q1: 1 - C(3,2)/C(5,2) = 1 - 3/10 = 0.7; / 2
    close(unbiased['3'], 0.45); // q1: 1 - C(3,3)/C(5,3) = 1 - 1/10 = 0.9; / 2
    close(unbiased['4'], 0.5); // q1: n - c = 3 < 4 → 1
    close(unbiased['5'], 0.5);
    assert.equal(passAtAny(k5), 0.5);
    assert.deepEqual(passAt1PerRollout(k5, 5), [0, 0.5, 0, 0.5, 0]);
    assert.deepEqual(bestRollout(passAt1PerRollout(k5, 5)), { rollout: 2, passAt1: 0.5 });
    assert.throws(() => unbiasedPassAtKForQuestion(5, 2, 6), /k must be from 1 to 5/);
  });

  test('k = 1', () => {
    const k1 = [[true], [false], [true]];
    const perRollout = passAt1PerRollout(k1, 1);
    close(perRollout[0], 2 / 3);
    close(meanPassAt1(perRollout), 2 / 3);
    close(passAtAny(k1), 2 / 3);
    close(unbiasedPassAtK(k1, 1)['1'], 2 / 3);
  });
});

function run(
  rollout: number,
  question: string,
  reference: string,
  prediction: string,
  extra: Partial<EvaluationRun> = {},
): EvaluationRun {
  return {
    rollout,
    question,
    reference,
    prediction,
    termination: 'answer',
    isError: false,
    modelCalls: 1,
    toolCalls: {},
    file: `iter${rollout}.jsonl`,
    line: 1,
    ...extra,
  };
}

describe('runs: termination strings, tool calls, duplicates', () => {
  test("DeepResearch's termination strings map to ours, the original kept", () => {
    assert.deepEqual(terminationOfLine('exceed available llm calls', false), {
      termination: 'max_calls',
      originalTermination: 'exceed available llm calls',
    });
    assert.deepEqual(terminationOfLine('generate an answer as token limit reached', false), {
      termination: 'token_limit',
      originalTermination: 'generate an answer as token limit reached',
    });
    assert.deepEqual(terminationOfLine('answer', false), { termination: 'answer' });
    assert.deepEqual(terminationOfLine(undefined, true), { termination: 'error' });
  });

  test('tool calls are parsed from <tool_call> bodies and native calls, not substrings', () => {
    const messages = [
      { role: 'system', content: 'You may call <tool_call>{"name": "search"}</tool_call>' },
      { role: 'user', content: 'q' },
      {
        role: 'assistant',
        content:
          '<think>maybe search, or visit</think>\n<tool_call>\n{"name": "search", "arguments": {"query": ["x"]}}\n</tool_call>',
      },
      { role: 'user', content: '<tool_response>search results</tool_response>' },
      {
        role: 'assistant',
        content:
          '<tool_call>\n{"name": "python", "arguments": {}}\n<code>\nimport re\nprint(re.search("a", "a"))\n</code>\n</tool_call>',
      },
      {
        role: 'assistant',
        content:
          "<tool_call>{name: 'visit', arguments: {url: ['https://example.com'], goal: 'search'}}</tool_call><tool_call>not json</tool_call>",
      },
      {
        role: 'assistant',
        content: '',
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 'visit', arguments: '{}' } }],
      },
      { role: 'assistant', content: '', toolCalls: [{ id: 'c2', name: 'search', arguments: '{}' }] },
      { role: 'assistant', content: '<answer>search</answer>' },
    ];
    assert.deepEqual(toolCallsOfMessages(messages), { search: 2, python: 1, visit: 2, '(unparsed)': 1 });
    assert.deepEqual(toolCallsOfMessages('not a list'), {});
  });

  test('a question twice in one rollout counts once: the last line that is not an error wins', () => {
    const lines = [
      run(1, 'q1', 'Paris', 'Lyon', { line: 1 }),
      run(1, 'q2', '4', '[Failed]', { line: 2, isError: true, termination: 'error' }),
      run(1, 'q1', 'Paris', 'Paris', { line: 3 }), // a resume's newer line
      run(1, 'q2', '4', '4', { line: 4 }),
      run(1, 'q1', 'Paris', '[Failed]', { line: 5, isError: true, termination: 'error' }), // an error never beats an answer
      run(1, 'q3', 'x', '', { line: 6, isError: true, termination: 'error' }),
      run(1, 'q3', 'x', '[Failed]', { line: 7, isError: true, termination: 'error' }), // all errors: the last
    ];
    const { runs, duplicates } = dedupeRollout(lines);
    assert.equal(duplicates, 4);
    assert.deepEqual(
      runs.map((kept) => [kept.question, kept.line]),
      [
        ['q1', 3],
        ['q2', 4],
        ['q3', 7],
      ],
    );
  });
});

/*
 * Fixture: 3 questions × 2 rollouts, after dedupe (duplicates and error lines as after a resume).
 * References: q1 "Paris", q2 "4", q3 "Blue whale".
 *   rollout 1: q1 "paris."  EM 1 F1 1 | q2 "4" EM 1 F1 1 | q3 "the blue whale shark" EM 0, F1: P 2/3, R 1 → 0.8
 *   rollout 2: q1 "Lyon"    EM 0 F1 0 | q2 "4" EM 1 F1 1 | q3 error line "[Failed]" EM 0 F1 0
 */
function fixtureRollouts(): EvaluationRun[][] {
  const rollout1 = dedupeRollout([
    run(1, 'q1', 'Paris', 'paris.', {
      modelCalls: 3,
      toolCalls: { search: 1, python: 1, visit: 1 },
      tokens: 300,
      durationMs: 3000,
    }),
    run(1, 'q2', '4', '[Failed]', { isError: true, termination: 'error', modelCalls: 0 }),
    run(1, 'q2', '4', '4', { modelCalls: 1, tokens: 100, durationMs: 1000 }),
    run(1, 'q3', 'Blue whale', 'the blue whale shark', { modelCalls: 2, tokens: 200, durationMs: 2000 }),
  ]);
  const rollout2 = dedupeRollout([
    run(2, 'q1', 'Paris', 'Lyon', { modelCalls: 1, tokens: 50 }),
    run(2, 'q1', 'Paris', '[Failed]', { isError: true, termination: 'error', modelCalls: 0 }),
    run(2, 'q2', '4', '4', { modelCalls: 2, toolCalls: { search: 2 }, tokens: 400, durationMs: 4000 }),
    run(2, 'q3', 'Blue whale', '[Failed]', { isError: true, termination: 'error', modelCalls: 0 }),
  ]);
  assert.equal(rollout1.duplicates, 1);
  assert.equal(rollout2.duplicates, 1);
  return [rollout1.runs, rollout2.runs];
}

function exactMatchReport(rollouts: EvaluationRun[][]) {
  const verdicts = new Map<string, RunVerdict>();
  for (const runs of rollouts) for (const each of runs) verdicts.set(runKey(each), exactMatchVerdict(each));
  return buildEvaluationReport({
    rollouts,
    verdicts,
    method: 'exact_match',
    createdAt: '2026-12-01T00:00:00.000Z',
    source: { paths: ['/out'] },
  });
}

describe('the report over the k = 2 fixture', () => {
  const report = exactMatchReport(fixtureRollouts());

  test('metrics by hand', () => {
    const metrics = report.metrics;
    assert.equal(metrics.questions, 3);
    assert.equal(metrics.rollouts, 2);
    close(metrics.perRollout[0]?.passAt1, 2 / 3); // q1, q2
    close(metrics.perRollout[1]?.passAt1, 1 / 3); // q2
    close(metrics.meanPassAt1, 0.5);
    assert.equal(metrics.bestPassAt1.rollout, 1);
    close(metrics.passAtAllRollouts, 2 / 3); // q1 (rollout 1), q2
    close(metrics.unbiasedPassAtK['1'], 0.5); // (1/2 + 1 + 0) / 3
    close(metrics.unbiasedPassAtK['2'], 2 / 3); // q1: n - c = 1 < 2 → 1; q2 1; q3 0
    close(metrics.perRollout[0]?.exactMatch, 2 / 3);
    close(metrics.perRollout[0]?.f1, 2.8 / 3); // (1 + 1 + 0.8) / 3
    close(metrics.perRollout[1]?.exactMatch, 1 / 3);
    close(metrics.perRollout[1]?.f1, 1 / 3);
    assert.equal(report.missingRuns?.length, 0);
  });

  test('statistics over all runs and over solved ones', () => {
    const all = report.statistics.all;
    assert.equal(all.runs, 6);
    assert.deepEqual(all.terminations, { answer: 5, error: 1 });
    close(all.terminationFrequencies?.answer, 5 / 6);
    close(all.terminationFrequencies?.error, 1 / 6);
    // search 1 + 2 over 6 runs; python 1, visit 1.
    close(all.toolCallsPerQuestion.search, 0.5);
    close(all.toolCallsPerQuestion.python, 1 / 6);
    close(all.toolCallsPerQuestion.visit, 1 / 6);
    // model calls [3, 1, 2, 1, 2, 0]: mean 1.5, median (1 + 2) / 2.
    close(all.modelCalls.mean, 1.5);
    close(all.modelCalls.median, 1.5);
    assert.equal(all.modelCalls.max, 3);
    // tokens recorded on 5 runs: 300 100 200 50 400 → mean 210, median 200.
    assert.equal(all.tokens.count, 5);
    close(all.tokens.mean, 210);
    assert.equal(all.tokens.median, 200);
    // durations recorded on 4 runs: 3000 1000 2000 4000 → mean 2500.
    close(all.durationsMs.mean, 2500);
    // answer lengths: "paris." 6, "4" 1, "the blue whale shark" 20, "Lyon" 4, "4" 1, "[Failed]" 8 → 40 / 6.
    close(all.answerLengths.mean, 40 / 6);
    const solved = report.statistics.solved; // r1 q1, r1 q2, r2 q2
    assert.equal(solved.runs, 3);
    close(solved.toolCallsPerQuestion.search, 1); // 3 / 3
    close(solved.modelCalls.mean, 2); // (3 + 1 + 2) / 3
    assert.deepEqual(solved.terminations, { answer: 3 });
  });

  test('per-question table', () => {
    assert.deepEqual(
      report.questions.map((row) => [row.question, row.reference, row.rollouts.map((verdict) => verdict.isCorrect)]),
      [
        ['q1', 'Paris', [true, false]],
        ['q2', '4', [true, true]],
        ['q3', 'Blue whale', [false, false]],
      ],
    );
    assert.equal(report.questions[2]?.rollouts[1]?.termination, 'error');
  });

  test("summary line in DeepResearch's shape, in percent", () => {
    const line = deepResearchSummaryLine(report) as {
      overall: Record<string, number>;
      individual: Record<string, number>;
      statistics: Record<string, unknown>;
    };
    assert.deepEqual(line.overall, { avg_pass_at_2: 50, best_pass_at_1: 66.67, pass_at_2: 66.67 });
    assert.deepEqual(line.individual, { 'Round1_Pass@1': 66.67, 'Round2_Pass@1': 33.33 });
    assert.deepEqual(line.statistics.terminations, { answer: 5, error: 1 });
  });

  test('rollouts over different question sets: the union is the denominator, missing pairs listed', () => {
    const [first, second] = fixtureRollouts() as [EvaluationRun[], EvaluationRun[]];
    const partial = exactMatchReport([first, second.filter((each) => each.question !== 'q3')]);
    assert.deepEqual(partial.missingRuns, [{ question: 'q3', rollout: 2 }]);
    close(partial.metrics.perRollout[1]?.passAt1, 1 / 3); // q2 of the 3 unique questions
    assert.equal(partial.metrics.perRollout[1]?.questions, 2);
  });

  test('distribution of nothing is all zero', () => {
    assert.deepEqual(distributionOf([]), { count: 0, mean: 0, median: 0, min: 0, max: 0, values: [] });
  });
});

describe('compareEvaluations', () => {
  test('deltas, flips and termination shifts by hand', () => {
    const a = exactMatchReport(fixtureRollouts());
    // B, one rollout: q1 wrong, q2 wrong, q3 right. A's majorities: q1 1/2 (wrong), q2 2/2 (right), q3 0/2 (wrong).
    const b = exactMatchReport([
      [
        run(1, 'q1', 'Paris', 'Rome'),
        run(1, 'q2', '4', '5', { termination: 'max_calls' }),
        run(1, 'q3', 'Blue whale', 'blue whale'),
        run(1, 'q4', 'x', 'x'),
      ],
    ]);
    const comparison = compareEvaluations(a, b);
    assert.deepEqual(
      comparison.rightToWrong.map((entry) => entry.question),
      ['q2'],
    );
    assert.deepEqual(
      comparison.wrongToRight.map((entry) => entry.question),
      ['q3'],
    );
    assert.deepEqual(
      comparison.shareChanged.map((entry) => [entry.question, entry.a.share, entry.b.share]),
      [['q1', 0.5, 0]],
    );
    assert.deepEqual(comparison.onlyInB, ['q4']);
    assert.equal(comparison.commonQuestions, 3);
    const mean = comparison.metrics.find((metric) => metric.name === 'mean_pass_at_1');
    close(mean?.delta, 0.5 - 0.5); // B: q3, q4 of 4 → 0.5
    const round2 = comparison.metrics.find((metric) => metric.name === 'round2_pass_at_1');
    assert.equal(round2?.b, undefined);
    assert.equal(round2?.delta, undefined);
    const maxCalls = comparison.terminationShifts.find((shift) => shift.termination === 'max_calls');
    assert.deepEqual(
      { ...maxCalls },
      { termination: 'max_calls', a: 0, b: 1, aFrequency: 0, bFrequency: 0.25, delta: 1, frequencyDelta: 0.25 },
    );
  });
});

describe('contracts', () => {
  test('the judge activities take the runs in ranges of runsPerActivity, in order, the last one what is left', () => {
    assert.deepEqual(
      [...judgeRanges(25, 10)],
      [
        { from: 0, to: 10 },
        { from: 10, to: 20 },
        { from: 20, to: 25 },
      ],
    );
    assert.deepEqual(
      [...judgeRanges(3, 1)],
      [
        { from: 0, to: 1 },
        { from: 1, to: 2 },
        { from: 2, to: 3 },
      ],
    );
    assert.deepEqual([...judgeRanges(10, 10)], [{ from: 0, to: 10 }]);
    assert.deepEqual([...judgeRanges(0, 10)], []);
  });

  test("the evaluation input and a batch's evaluate option are checked", () => {
    assert.deepEqual(validateEvaluationInput({ paths: ['/out'], output: '/out/evaluation', judge: 'gaia' }), []);
    assert.deepEqual(
      validateEvaluationInput({
        paths: ['/out'],
        output: '/out/evaluation',
        judge: '/prompts/mine.txt',
        concurrency: 4,
      }),
      [],
    );
    assert.deepEqual(validateEvaluationInput({ paths: ['relative'], output: 'x', judge: 'llama', concurrency: 0 }), [
      'concurrency must be an integer from 1 to 1000, got 0',
      'paths must be a non-empty list of absolute paths',
      'output must be an absolute directory path',
      'judge must be gaia, browsecomp, exact_match or the absolute path of a prompt file',
    ]);
    // The shape comes from the contract's schema: wrong types and unknown fields, each named.
    assert.deepEqual(
      validateEvaluationInput({ paths: '/out', output: '/o', judge: 'gaia', judgeModel: 'x' } as never),
      [
        'paths must be a list, got "/out"',
        'judgeModel is not a known field (known: paths, output, judge, batchId, concurrency, runsPerActivity, judgeAttempts, webUiBase)',
      ],
    );
    // s3:// batch outputs and rollout files are read, and outputs written, through S3 (issue 13).
    assert.deepEqual(
      validateEvaluationInput({ paths: ['s3://bucket/out'], output: 's3://bucket/out/evaluation', judge: 'gaia' }),
      [],
    );
    assert.deepEqual(
      validateEvaluationInput({
        paths: ['s3://bucket/out/iter1.jsonl', '/local/iter2.jsonl'],
        output: '/local/evaluation',
        judge: 'exact_match',
      }),
      [],
    );
    assert.deepEqual(
      validateEvaluationInput({ paths: ['s3://Bad_Bucket/out'], output: 's3://bucket/a//b', judge: 'gaia' }),
      [
        'paths: "s3://Bad_Bucket/out" is not a valid s3://bucket/prefix URL',
        'output: "s3://bucket/a//b" is not a valid s3://bucket/prefix URL',
      ],
    );
    const batch = { input: `sha256:${'a'.repeat(64)}`, questions: 2, rollouts: 1, output: '/out' };
    assert.deepEqual(validateBatchInput({ ...batch, evaluate: { judge: 'browsecomp' } }), []);
    assert.deepEqual(validateBatchInput({ ...batch, evaluate: {} }), []);
    assert.deepEqual(validateBatchInput({ ...batch, evaluate: { judge: 'vibes' } }), [
      'evaluate.judge must be gaia, browsecomp, exact_match or an absolute prompt file path, got "vibes"',
    ]);
  });
});
