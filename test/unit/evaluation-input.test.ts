import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { buildEvaluationReport } from '../../src/domain/evaluation/evaluation-scoring';
import { describeInputs, readEvaluationInputs, resolveEvaluationFiles } from '../../src/storage/evaluation-input';
import { readEvaluationReport, writeEvaluationOutputs } from '../../src/storage/evaluation-output';
import { LocalDirectoryVerdictStore, verdictKey } from '../../src/storage/verdict-store';
import { loadJudgeConfig } from '../../src/config/judge-config';
import { toolCallsOfMessages } from '../../src/core/evaluation/evaluation-runs';
import { resultMessages } from '../../src/storage/batch-output';
import { putConversation, putMessage } from '../../src/storage/conversation';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const directory = mkdtempSync(join(tmpdir(), 'evaluation-input-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function write(name: string, lines: unknown[]): string {
  const path = join(directory, name);
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `${lines.map((line) => (typeof line === 'string' ? line : JSON.stringify(line))).join('\n')}\n`);
  return path;
}

describe('reading rollout files', () => {
  test('a directory gives its iter files in rollout order (iter10 after iter2)', async () => {
    for (const rollout of [10, 2, 1])
      write(`batch/iter${rollout}.jsonl`, [{ question: 'q', answer: 'a', prediction: 'a', termination: 'answer' }]);
    write('batch/batch.json', ['{}']);
    const resolved = await resolveEvaluationFiles([join(directory, 'batch')]);
    expect(resolved.files.map((file) => file.split('/').pop())).toEqual(['iter1.jsonl', 'iter2.jsonl', 'iter10.jsonl']);
    await expect(resolveEvaluationFiles([join(directory, 'nowhere')])).rejects.toThrow(/nowhere does not exist/);
    mkdirSync(join(directory, 'empty'), { recursive: true });
    await expect(resolveEvaluationFiles([join(directory, 'empty')])).rejects.toThrow(/holds no iter\*\.jsonl files/);
  });

  test('a line that is not JSON names the file and line', async () => {
    const file = write('broken.jsonl', [{ question: 'q', answer: 'a' }, '', '{"question": "cut']);
    await expect(readEvaluationInputs([file])).rejects.toThrow(new RegExp(`${file} line 3 is not JSON`));
  });

  test("DeepResearch's lines: error lines without termination, its termination strings, duplicates; lines without question or answer skipped and listed", async () => {
    const first = write('dr/run1.jsonl', [
      {
        question: 'Q1',
        answer: 'A1',
        messages: [
          { role: 'assistant', content: '<tool_call>{"name": "visit", "arguments": {}}</tool_call>' },
          { role: 'assistant', content: '<answer>A1</answer>' },
        ],
        prediction: 'A1',
        termination: 'answer',
      },
      { question: 'Q2', answer: 'A2', error: 'Timeout after 3 tries', prediction: '[Failed]', messages: [] },
      { question: 'Q2', answer: 'A2', messages: [], prediction: 'guess', termination: 'exceed available llm calls' },
      { question: 'Q3', prediction: 'no answer key' },
      { answer: 'no question' },
      [1, 2],
    ]);
    const second = write('dr/run2.jsonl', [
      { question: 'Q1', answer: 'A1', messages: [], prediction: '[Failed]', error: 'boom' },
    ]);
    const inputs = await readEvaluationInputs([first, second], { countTokens: (text) => text.length });
    assert.deepEqual(
      inputs.rollouts[0]?.map((run) => [
        run.question,
        run.prediction,
        run.termination,
        run.originalTermination ?? null,
        run.isError,
      ]),
      [
        ['Q1', 'A1', 'answer', null, false],
        ['Q2', 'guess', 'max_calls', 'exceed available llm calls', false],
      ],
    );
    assert.deepEqual(inputs.rollouts[0]?.[0]?.toolCalls, { visit: 1 });
    assert.equal(inputs.rollouts[0]?.[0]?.modelCalls, 2);
    // No usage recorded: tokens counted from the messages (here: characters).
    assert.equal(
      inputs.rollouts[0]?.[0]?.tokens,
      '<tool_call>{"name": "visit", "arguments": {}}</tool_call>\n<answer>A1</answer>'.length,
    );
    assert.equal(inputs.rollouts[0]?.[0]?.tokensCounted, true);
    assert.deepEqual(
      inputs.rollouts[1]?.map((run) => [run.question, run.termination, run.isError]),
      [['Q1', 'error', true]],
    );
    assert.deepEqual(
      inputs.skipped.map((skip) => [skip.line, skip.reason]),
      [
        [4, 'no "answer" key (write "answer": "" when there is no reference)'],
        [5, 'no "question"'],
        [6, 'not a JSON object'],
      ],
    );
    assert.deepEqual(inputs.duplicates, [{ rollout: 1, lines: 1 }]);
    const notes = describeInputs(inputs);
    assert.ok(notes.includes('3 lines skipped.'));
    assert.ok(
      notes.some((note) => /Rollout 2 \(run2\.jsonl\) lacks 1 of the 2 questions/.test(note)),
      notes.join('\n'),
    );
  });

  test('usage recorded on the line wins over a count', async () => {
    const file = write('ours.jsonl', [
      {
        question: 'q',
        answer: 'a',
        messages: [{ role: 'assistant', content: 'xxxx' }],
        prediction: 'a',
        termination: 'answer',
        usage: { promptTokens: 7, completionTokens: 3, totalTokens: 10 },
        durationMs: 42,
        runId: 'b/q0-r1',
      },
    ]);
    const [run] = (await readEvaluationInputs([file], { countTokens: () => 999 })).rollouts[0] ?? [];
    assert.deepEqual([run?.tokens, run?.tokensCounted, run?.durationMs, run?.runId], [10, undefined, 42, 'b/q0-r1']);
  });
});

test('outputs: report.json, scored lines with is_correct/judgement/em/f1, summary.jsonl appended; a report read back from its directory', async () => {
  const file = write('out-input/iter1.jsonl', [
    { question: 'q', answer: 'Paris', prediction: 'paris', termination: 'answer', extra: 'kept' },
  ]);
  const inputs = await readEvaluationInputs([file]);
  const run = inputs.rollouts[0]?.[0];
  assert.ok(run);
  const verdicts = new Map([[`1\u0000q`, { isCorrect: true, judgement: 'exact_match', exactMatch: 1, f1: 1 }]]);
  const report = buildEvaluationReport({
    rollouts: inputs.rollouts,
    verdicts,
    method: 'exact_match',
    createdAt: 't',
    source: { paths: [file] },
  });
  const output = join(directory, 'out');
  await writeEvaluationOutputs(output, report, inputs.rollouts, verdicts);
  await writeEvaluationOutputs(output, report, inputs.rollouts, verdicts);
  const scored = JSON.parse(readFileSync(join(output, 'scored', 'iter1.jsonl'), 'utf8')) as Record<string, unknown>;
  assert.deepEqual(
    [scored.extra, scored.is_correct, scored.judgement, scored.em, scored.f1],
    ['kept', true, 'exact_match', 1, 1],
  );
  assert.equal(readFileSync(join(output, 'summary.jsonl'), 'utf8').trim().split('\n').length, 2);
  assert.equal((await readEvaluationReport(output)).report.metrics.meanPassAt1, 1);
  await expect(readEvaluationReport(join(directory, 'missing'))).rejects.toThrow(/does not exist/);
});

test('verdicts are kept by the sha256 of prompt, model, question, reference and prediction', async () => {
  const store = new LocalDirectoryVerdictStore(join(directory, 'verdicts'));
  const parts = { prompt: 'p', model: 'm', question: 'q', reference: 'r', prediction: 'x' };
  const key = verdictKey(parts);
  assert.match(key, /^sha256:[0-9a-f]{64}$/);
  assert.notEqual(verdictKey({ ...parts, model: 'other' }), key);
  assert.notEqual(verdictKey({ ...parts, prediction: 'y' }), key);
  assert.equal(await store.get(key), undefined);
  await store.put(key, { isCorrect: true, judgement: 'Correct', calls: 1, model: 'm' });
  expect(await store.get(key)).toEqual({ isCorrect: true, judgement: 'Correct', calls: 1, model: 'm' });
});

describe('judge configuration', () => {
  const run = {
    OPENAI_BASE_URL: 'http://localhost:8000/v1',
    OPENAI_API_KEY: 'run-key',
    REACT_AGENT_MODEL: 'run-model',
  };

  test('defaults to the run model, endpoint and key', () => {
    const config = loadJudgeConfig(run);
    assert.deepEqual(
      [config.baseUrl, config.apiKey, config.model, config.maxAttempts, config.concurrency],
      ['http://localhost:8000/v1', 'run-key', 'run-model', 5, 8],
    );
  });

  test('its own variables win', () => {
    const config = loadJudgeConfig({
      ...run,
      REACT_AGENT_JUDGE_BASE_URL: 'https://judge.example/v1/',
      REACT_AGENT_JUDGE_MODEL: 'gpt-judge',
      REACT_AGENT_JUDGE_API_KEY: 'judge-key',
      REACT_AGENT_JUDGE_MAX_ATTEMPTS: '2',
    });
    assert.deepEqual(
      [config.baseUrl, config.apiKey, config.model, config.maxAttempts],
      ['https://judge.example/v1', 'judge-key', 'gpt-judge', 2],
    );
  });

  test('errors name the variable', () => {
    assert.throws(
      () => loadJudgeConfig({ ...run, REACT_AGENT_JUDGE_BASE_URL: 'not a url' }),
      (error: Error) => (error as { variable?: string }).variable === 'REACT_AGENT_JUDGE_BASE_URL',
    );
    assert.throws(
      () => loadJudgeConfig({ REACT_AGENT_JUDGE_BASE_URL: 'http://judge/v1' }),
      (error: Error) =>
        (error as { variable?: string }).variable === 'REACT_AGENT_JUDGE_MODEL' &&
        /REACT_AGENT_JUDGE_MODEL/.test(error.message),
    );
    assert.throws(
      () => loadJudgeConfig({}),
      (error: Error) => (error as { variable?: string }).variable === 'REACT_AGENT_JUDGE_BASE_URL',
    );
    assert.throws(
      () => loadJudgeConfig({ ...run, REACT_AGENT_JUDGE_MAX_ATTEMPTS: 'zero' }),
      /REACT_AGENT_JUDGE_MAX_ATTEMPTS/,
    );
  });
});

test("a native run's line carries its tool calls (OpenAI's shape), so the evaluation counts them", async () => {
  const store = new MemoryTranscriptStore();
  const references = await Promise.all(
    [
      { role: 'system' as const, content: 's' },
      { role: 'user' as const, content: 'q' },
      {
        role: 'assistant' as const,
        content: '',
        toolCalls: [
          { id: 'c1', name: 'search', arguments: '{"query":["x"]}' },
          { id: 'c2', name: 'visit', arguments: '{}' },
        ],
      },
      { role: 'tool' as const, content: 'results', toolCallId: 'c1' },
      { role: 'tool' as const, content: 'page', toolCallId: 'c2' },
      { role: 'assistant' as const, content: 'the answer' },
    ].map((message) => putMessage(store, message)),
  );
  const messages = await resultMessages(store, await putConversation(store, references));
  expect(messages[2]).toEqual({
    role: 'assistant',
    content: '',
    tool_calls: [
      { id: 'c1', type: 'function', function: { name: 'search', arguments: '{"query":["x"]}' } },
      { id: 'c2', type: 'function', function: { name: 'visit', arguments: '{}' } },
    ],
  });
  expect(messages[3]).toEqual({ role: 'tool', content: 'results', tool_call_id: 'c1' });
  expect(messages[5]).toEqual({ role: 'assistant', content: 'the answer' });
  assert.deepEqual(toolCallsOfMessages(JSON.parse(JSON.stringify(messages))), { search: 1, visit: 1 });
});
