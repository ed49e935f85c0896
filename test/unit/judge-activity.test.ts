import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import OpenAI from 'openai';
import { createJudgeRuns } from '../../activities/judge-activity';
import { classifyJudgeError } from '../../activities/model/openai-errors';
import { judgeTemplate } from '../../activities/evaluation-activities';
import type { JudgeRunsOutput, StoredEvaluationInput } from '../../src/core/evaluation/evaluation-contract';
import type { EvaluationRun } from '../../src/core/evaluation/evaluation-runs';
import { LocalDirectoryVerdictStore } from '../../src/storage/verdict-store';
import { fakeChatModel } from '../fakes/fake-chat-model';

const directory = mkdtempSync(join(tmpdir(), 'judge-activity-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));
const endpoint = { model: 'judge-model', baseUrl: 'http://judge.test/v1' };

function run(question: string, reference: string, prediction: string): EvaluationRun {
  return {
    rollout: 1,
    question,
    reference,
    prediction,
    termination: 'answer',
    isError: false,
    modelCalls: 1,
    toolCalls: {},
    file: 'iter1.jsonl',
    line: 1,
  };
}

describe('judgeRuns', () => {
  test('verdicts: clean, decorated, fixed by the reminder, unparseable; no reference: not judged; a second pass makes no call', async () => {
    const replies: Record<string, string[]> = {
      'clean?': ['Correct'],
      'decorated?': ['**Incorrect.**'],
      'reminded?': ['I believe so', 'Correct'],
      'unparseable?': ['Perhaps', 'Still perhaps'],
    };
    const chatModel = fakeChatModel((request) => {
      const prompt = String(request.messages[0]?.content);
      const question = Object.keys(replies).find((key) => prompt.includes(`Question: ${key}`)) as string;
      return (replies[question] as string[])[request.messages.length >= 3 ? 1 : 0] as string;
    });
    const judge = await judgeTemplate('gaia', endpoint.model);
    const input: StoredEvaluationInput = {
      version: 1,
      source: { paths: ['/x'] },
      files: ['/x/iter1.jsonl'],
      rollouts: [
        [
          run('clean?', 'a', 'a'),
          run('decorated?', 'a', 'b'),
          run('reminded?', 'a', 'c'),
          run('unparseable?', 'a', 'd'),
          run('no reference?', '', 'e'),
        ],
      ],
      skipped: [],
      duplicates: [],
      judge,
    };
    const verdicts = new LocalDirectoryVerdictStore(join(directory, 'verdicts'));
    const judgeRuns = createJudgeRuns({ chatModel, endpoint, verdicts, loadInput: async () => input });
    const first = (await new MockActivityEnvironment().run(judgeRuns, {
      input: 'sha256:x',
      from: 0,
      to: 5,
    })) as JudgeRunsOutput;
    assert.deepEqual({ ...first }, { made: 6, stored: 0, unparsed: 1 });
    assert.equal(chatModel.calls.length, 6);
    assert.equal(chatModel.calls[0]?.request.model, 'judge-model');
    assert.equal(chatModel.calls[0]?.request.sampling?.temperature, 0);
    const reminder = chatModel.calls.find((call) => call.request.messages.length === 3);
    assert.match(String(reminder?.request.messages[2]?.content), /Reply with exactly one word: Correct or Incorrect/);
    assert.equal(reminder?.request.messages[1]?.role, 'assistant');

    const again = (await new MockActivityEnvironment().run(judgeRuns, {
      input: 'sha256:x',
      from: 0,
      to: 5,
    })) as JudgeRunsOutput;
    assert.deepEqual({ ...again }, { made: 0, stored: 4, unparsed: 1 });
    assert.equal(chatModel.calls.length, 6, 'no judge call for stored verdicts');
    // A range judges only its runs.
    const ranged = (await new MockActivityEnvironment().run(judgeRuns, {
      input: 'sha256:x',
      from: 1,
      to: 2,
    })) as JudgeRunsOutput;
    assert.deepEqual({ ...ranged }, { made: 0, stored: 1, unparsed: 0 });
  });
});

describe('judge errors', () => {
  const headers = new Headers();
  test('unreachable and 5xx are retried, naming REACT_AGENT_JUDGE_BASE_URL', () => {
    const unreachable = classifyJudgeError(new OpenAI.APIConnectionError({ message: 'Connection error.' }), endpoint);
    assert.equal(unreachable.type, 'ReactAgent.Judge.Unreachable');
    assert.equal(unreachable.nonRetryable, false);
    assert.match(unreachable.message, /http:\/\/judge\.test\/v1 could not be reached .*REACT_AGENT_JUDGE_BASE_URL/);
    const server = classifyJudgeError(
      OpenAI.APIError.generate(503, { error: { message: 'busy' } }, 'busy', headers),
      endpoint,
    );
    assert.equal(server.type, 'ReactAgent.Judge.ServerError');
    assert.equal(server.nonRetryable, false);
  });

  test('401 names the key, 404 the model; neither is retried', () => {
    const refused = classifyJudgeError(
      OpenAI.APIError.generate(401, { error: { message: 'bad key' } }, 'bad key', headers),
      endpoint,
    );
    assert.ok(refused instanceof ApplicationFailure);
    assert.equal(refused.nonRetryable, true);
    assert.match(refused.message, /REACT_AGENT_JUDGE_API_KEY/);
    const missing = classifyJudgeError(
      OpenAI.APIError.generate(404, { error: { message: 'no model' } }, 'no model', headers),
      endpoint,
    );
    assert.equal(missing.nonRetryable, true);
    assert.match(missing.message, /REACT_AGENT_JUDGE_MODEL \(now "judge-model"\)/);
  });
});

test('a prompt file needs a {prediction} placeholder; built-in judges carry their prompt hash', async () => {
  const gaia = await judgeTemplate('gaia', 'm');
  assert.match(gaia.promptHash, /^sha256:[0-9a-f]{64}$/);
  assert.equal(gaia.format, 'word');
  assert.equal((await judgeTemplate('browsecomp', 'm')).format, 'json');
  await assert.rejects(judgeTemplate(join(directory, 'missing.txt'), 'm'), /Cannot read the judge prompt file/);
  writeFileSync(join(directory, 'no-placeholder.txt'), 'Is {question} answered?');
  await assert.rejects(judgeTemplate(join(directory, 'no-placeholder.txt'), 'm'), /has no \{prediction\}/);
  writeFileSync(join(directory, 'mine.txt'), 'Q {question} R {reference} P {prediction}');
  assert.equal((await judgeTemplate(join(directory, 'mine.txt'), 'm')).format, 'either');
});
