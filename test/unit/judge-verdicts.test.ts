import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  BROWSECOMP_JUDGE_PROMPT,
  parseJsonVerdict,
  parseVerdict,
  parseWordVerdict,
  renderJudgePrompt,
} from '../../src/core/evaluation/judge-prompts';

describe('one-word verdicts, read strictly', () => {
  test('clean and decorated verdicts', () => {
    assert.equal(parseWordVerdict('Correct'), true);
    assert.equal(parseWordVerdict('incorrect'), false);
    assert.equal(parseWordVerdict('**Correct**'), true);
    assert.equal(parseWordVerdict('Verdict: Incorrect.'), false);
    assert.equal(parseWordVerdict('"Correct."'), true);
    assert.equal(parseWordVerdict('<think>it says Paris, so Correct</think>\nIncorrect'), false);
  });

  test('"Answer: Incorrect" is incorrect (DeepResearch counted anything starting with "a" as correct)', () => {
    assert.equal(parseWordVerdict('Answer: Incorrect'), false);
    assert.equal(parseWordVerdict('A'), undefined);
    assert.equal(parseWordVerdict('absolutely'), undefined);
  });

  test('unparseable replies are undefined, never correct', () => {
    assert.equal(parseWordVerdict('Correct or Incorrect'), undefined);
    assert.equal(parseWordVerdict('The answer is correct'), undefined);
    assert.equal(parseWordVerdict(''), undefined);
    assert.equal(parseWordVerdict('I think it might be right'), undefined);
  });
});

describe('browsecomp JSON verdicts', () => {
  test('fenced JSON with the four keys', () => {
    const verdict = parseJsonVerdict(
      '```json\n{"extracted_final_answer": "Paris", "reasoning": "same city", "correct": "yes", "confidence": "90%"}\n```',
    );
    assert.deepEqual(
      { ...verdict },
      { isCorrect: true, extractedFinalAnswer: 'Paris', confidence: '90%', reasoning: 'same city' },
    );
  });

  test("BrowseComp's own text lines, and nonsense", () => {
    assert.equal(
      parseJsonVerdict('extracted_final_answer: Lyon\nreasoning: differs\ncorrect: no\nconfidence: 80%').isCorrect,
      false,
    );
    assert.equal(parseJsonVerdict('{"correct": "maybe"}').isCorrect, undefined);
    assert.equal(parseJsonVerdict('correct: yes\ncorrect: no').isCorrect, undefined);
  });

  test('either format for a prompt file', () => {
    assert.equal(parseVerdict('{"correct": "no"}', 'either').isCorrect, false);
    assert.equal(parseVerdict('**Correct**', 'either').isCorrect, true);
    assert.equal(parseVerdict('hmm', 'either').isCorrect, undefined);
  });
});

test('placeholders are filled everywhere, aliases too', () => {
  const prompt = renderJudgePrompt('Q={question} R={reference}/{correct_answer} P={prediction}/{response} {other}', {
    question: 'q',
    reference: 'r',
    prediction: 'p',
  });
  assert.equal(prompt, 'Q=q R=r/r P=p/p {other}');
  assert.match(
    renderJudgePrompt(BROWSECOMP_JUDGE_PROMPT, { question: 'Q?', reference: 'REF', prediction: 'PRED' }),
    /\[correct_answer\]: REF/,
  );
});
