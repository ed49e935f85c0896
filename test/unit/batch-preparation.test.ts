import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import {
  batchSettingsFrom,
  checkedBatchFiles,
  researchBatchInputOf,
  storedQuestions,
  type CheckedBatchFiles,
} from '../../src/cli/batch-preparation';
import type { TranscriptStore } from '../../src/storage/transcript-store';

/*
 * `batch` and `schedule create` prepare a researchBatch's input the same way
 * (src/cli/batch-preparation.ts): the settings from the command line, the checked files, then the input.
 */
const directory = mkdtempSync(join(tmpdir(), 'batch-preparation-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

describe('batch settings', () => {
  test('defaults: one rollout, eight at once, no run options, no evaluation, no name', () => {
    assert.deepEqual(batchSettingsFrom({}, 'HELP'), { rollouts: 1, concurrency: 8, run: {} });
  });

  test("--model-share: every run of the batch gets that share of its model's shared limits; outside 0.01–1 it is refused", () => {
    assert.deepEqual(batchSettingsFrom({ 'model-share': '0.5' }, 'HELP').run, { model: { modelShare: 0.5 } });
    assert.throws(() => batchSettingsFrom({ 'model-share': '0' }, 'HELP'), /--model-share/);
    assert.throws(() => batchSettingsFrom({ 'model-share': '1.5' }, 'HELP'), /--model-share/);
    assert.throws(() => batchSettingsFrom({ 'model-share': 'half' }, 'HELP'), /--model-share/);
  });

  test('what is given, with an empty name left out', () => {
    assert.deepEqual(
      batchSettingsFrom(
        { rollouts: '3', concurrency: '2', 'max-calls': '7', evaluate: true, judge: 'gaia', name: 'nightly' },
        'HELP',
      ),
      {
        rollouts: 3,
        concurrency: 2,
        run: { limits: { maxModelCalls: 7 } },
        evaluate: { judge: 'gaia' },
        name: 'nightly',
      },
    );
    assert.equal(batchSettingsFrom({ name: '' }, 'HELP').name, undefined);
  });

  test('checks the numbers before the run options, and those before --evaluate', () => {
    assert.throws(
      () => batchSettingsFrom({ rollouts: '0', 'max-calls': '0', judge: 'gaia' }, 'HELP'),
      /--rollouts must be/,
    );
    assert.throws(() => batchSettingsFrom({ 'max-calls': '0', judge: 'gaia' }, 'HELP'), /--max-calls must be/);
    assert.throws(() => batchSettingsFrom({ judge: 'gaia' }, 'HELP'), /--judge goes with --evaluate/);
  });
});

describe('the researchBatch input', () => {
  const files = {
    file: { items: [{ question: 'a' }, { question: 'b' }] },
    source: 'questions.jsonl',
    notes: [],
    output: '/data/out',
  } as unknown as CheckedBatchFiles;
  const settings = { rollouts: 2, concurrency: 4, run: { protocol: 'native' as const } };

  test('of a batch', () => {
    assert.deepEqual(researchBatchInputOf(files, 'sha256:abc', settings), {
      input: 'sha256:abc',
      questions: 2,
      rollouts: 2,
      concurrency: 4,
      output: '/data/out',
      run: { protocol: 'native' },
      source: 'questions.jsonl',
    });
  });

  test('resumed, named and evaluated, or started by a schedule', () => {
    const resumed = researchBatchInputOf(
      files,
      'sha256:abc',
      { ...settings, name: 'n', evaluate: {} },
      { resume: true },
    );
    assert.equal(resumed.resume, true);
    assert.equal(resumed.name, 'n');
    assert.deepEqual(resumed.evaluate, {});
    assert.deepEqual(researchBatchInputOf(files, 'sha256:abc', settings, { schedule: { id: 'nightly' } }).schedule, {
      id: 'nightly',
    });
  });
});

describe('checked batch files', () => {
  test('the questions with notes on duplicates, the file name and the output made absolute', async () => {
    const path = join(directory, 'questions.jsonl');
    writeFileSync(path, '{"question":"a"}\n{"question":"a"}\n');
    const checked = await checkedBatchFiles(path, join(directory, 'out'), { resume: false });
    assert.equal(checked.file.items.length, 2);
    assert.equal(checked.source, 'questions.jsonl');
    assert.equal(checked.notes.length, 1);
    assert.equal(checked.output, join(directory, 'out'));
  });
});

describe('stored questions', () => {
  test('the reference the store gives, the count and the file name', async () => {
    const texts: string[] = [];
    const store = {
      putText: async (text: string) => (texts.push(text), 'sha256:stored'),
    } as unknown as TranscriptStore;
    const checked = {
      file: { items: [{ question: 'a' }, { question: 'b', answer: 'B' }] },
      source: 'q.jsonl',
      notes: [],
    } as unknown as CheckedBatchFiles;
    assert.deepEqual(await storedQuestions(store, checked), {
      input: 'sha256:stored',
      questions: 2,
      source: 'q.jsonl',
    });
    assert.deepEqual(JSON.parse(texts[0] as string), {
      kind: 'batch-input',
      items: [{ question: 'a' }, { question: 'b', answer: 'B' }],
    });
  });
});
