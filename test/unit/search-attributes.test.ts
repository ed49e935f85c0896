import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import {
  modelAttribute,
  PROJECT_SEARCH_ATTRIBUTES,
  QUESTION_ATTRIBUTE_MAX_CHARACTERS,
  questionAttribute,
  TOKENS_ATTRIBUTE_EVERY_MODEL_CALLS,
  tokensAttributeDue,
  usageAttributesDue,
} from '../../src/core/search-attributes';
import { researchRunsQuery } from '../../src/cli/commands/list-command';

const utf8Length = (text: string) => Buffer.byteLength(text, 'utf8');

describe('the search attributes a run sets (issue 22)', () => {
  test('every attribute is registered with its type; SQL visibility has room for them (3 Int, 3 Double, 3 Text, 10 Keyword per namespace)', () => {
    assert.deepEqual(PROJECT_SEARCH_ATTRIBUTES, {
      ReactTermination: 'Keyword',
      ReactIterations: 'Int',
      ReactBatchId: 'Keyword',
      ReactRollout: 'Int',
      ReactQuestion: 'Text',
      ReactModel: 'Keyword',
      ReactTokens: 'Int',
      ReactProtocol: 'Keyword',
      ReactCost: 'Double',
      ReactTreeId: 'Keyword',
    });
    const count = (type: string) => Object.values(PROJECT_SEARCH_ATTRIBUTES).filter((value) => value === type).length;
    assert.ok(count('Int') <= 3 && count('Double') <= 3 && count('Text') <= 3 && count('Keyword') <= 10);
  });

  test('a short question is kept as it is, its whitespace folded', () => {
    assert.equal(
      questionAttribute('Which company sold more cars in 2024, BYD or Tesla?'),
      'Which company sold more cars in 2024, BYD or Tesla?',
    );
    assert.equal(questionAttribute('  Line one\n\tline two  '), 'Line one line two');
  });

  test('a long question is cut at a word boundary with an ellipsis', () => {
    const question = `${'word '.repeat(100)}end`;
    const value = questionAttribute(question);
    assert.ok(Array.from(value).length <= QUESTION_ATTRIBUTE_MAX_CHARACTERS + 1, value);
    assert.match(value, /^(word )+word…$/);
  });

  test('a long question in a script of 3- and 4-byte characters stays within 1,000 bytes and never splits a character', () => {
    for (const character of ['比', '😀']) {
      const value = questionAttribute(character.repeat(600));
      assert.ok(utf8Length(value) <= 1_003, `${utf8Length(value)} bytes`);
      assert.ok(value.endsWith('…'));
      assert.equal(value.slice(0, -1), character.repeat(Array.from(value.slice(0, -1)).length));
    }
  });

  test('a model name is kept, cut to 200 characters', () => {
    assert.equal(modelAttribute('qwen2.5-7b-instruct'), 'qwen2.5-7b-instruct');
    assert.equal(modelAttribute('m'.repeat(500)).length, 200);
  });

  test('tokens are updated every tenth model call, never after each one', () => {
    assert.equal(TOKENS_ATTRIBUTE_EVERY_MODEL_CALLS, 10);
    const due = Array.from({ length: 35 }, (_, index) => index).filter(tokensAttributeDue);
    assert.deepEqual(due, [10, 20, 30]);
  });

  test('with light bookkeeping a reply that ends the run upserts nothing: the last upsert follows at once (issue 34)', () => {
    const calls = Array.from({ length: 35 }, (_, index) => index);
    assert.deepEqual(
      calls.filter((modelCalls) => usageAttributesDue(modelCalls, false)),
      [10, 20, 30],
    );
    assert.deepEqual(
      calls.filter((modelCalls) => usageAttributesDue(modelCalls, true)),
      [],
    );
  });
});

describe("react-agent list's query", () => {
  test('the filter is joined to the research runs, a trailing ORDER BY kept outside its parentheses', () => {
    assert.equal(researchRunsQuery(undefined), "WorkflowType = 'researchAgent'");
    assert.equal(
      researchRunsQuery("ReactQuestion = 'BYD' OR ReactModel = 'm'"),
      "WorkflowType = 'researchAgent' AND (ReactQuestion = 'BYD' OR ReactModel = 'm')",
    );
    assert.equal(
      researchRunsQuery('ReactTokens > 0 ORDER BY ReactTokens DESC'),
      "WorkflowType = 'researchAgent' AND (ReactTokens > 0) ORDER BY ReactTokens DESC",
    );
    assert.equal(researchRunsQuery('order by StartTime'), "WorkflowType = 'researchAgent' order by StartTime");
  });
});
