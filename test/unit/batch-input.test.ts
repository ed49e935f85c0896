import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { batchInputFormatOf, describeBatchInputProblems, parseBatchInput } from '../../src/domain/batch-input';
import {
  BatchInputFileError,
  loadBatchInput,
  readBatchInputFile,
  storeBatchInput,
} from '../../src/storage/batch-input-file';
import { MAX_QUESTION_CHARACTERS } from '../../src/core/run-input';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const directory = mkdtempSync(join(tmpdir(), 'batch-input-'));
afterAll(() => rmSync(directory, { recursive: true, force: true }));

function file(name: string, text: string): string {
  const path = join(directory, name);
  writeFileSync(path, text);
  return path;
}

describe('formats', () => {
  test('the extension names the format, in any case', () => {
    assert.equal(batchInputFormatOf('q.jsonl'), 'jsonl');
    assert.equal(batchInputFormatOf('/a/b/Q.JSON'), 'json');
    assert.equal(batchInputFormatOf('questions.csv'), 'csv');
    assert.equal(batchInputFormatOf('questions.txt'), undefined);
    assert.equal(batchInputFormatOf('questions'), undefined);
  });
});

describe('.jsonl', () => {
  test('one object a line, answers optional, blank lines and CRLF ignored', () => {
    const parsed = parseBatchInput('{"question":"Who?","answer":"Amundsen"}\r\n\n{"question":"  When?  "}\n', 'jsonl');
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.items, [{ question: 'Who?', answer: 'Amundsen' }, { question: 'When?' }]);
    assert.deepEqual(parsed.lines, [1, 3]);
    assert.deepEqual(parsed.duplicates, []);
  });

  test("an empty question falls back to messages[1].content after 'User:' (DeepResearch's fallback)", () => {
    const parsed = parseBatchInput(
      [
        JSON.stringify({
          question: '',
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: 'Context.\nUser: What is 2+2?' },
          ],
          answer: 4,
        }),
        JSON.stringify({
          messages: [
            { role: 'system', content: 's' },
            { role: 'user', content: 'No marker here' },
          ],
        }),
      ].join('\n'),
      'jsonl',
    );
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.items, [{ question: 'What is 2+2?', answer: '4' }, { question: 'No marker here' }]);
  });

  test('every bad line is reported with its line number and what is wrong', () => {
    const text = [
      '{"question":"fine"}',
      '{not json',
      '{"answer":"no question"}',
      '["a list"]',
      `{"question":"${'x'.repeat(MAX_QUESTION_CHARACTERS + 1)}"}`,
      '{"question":42}',
      '{"question":"ok","answer":{"nested":true}}',
      '{"question":"","messages":"nope"}',
    ].join('\n');
    const parsed = parseBatchInput(text, 'jsonl');
    assert.deepEqual(
      parsed.problems.map((problem) => problem.line),
      [2, 3, 4, 5, 6, 7, 8],
    );
    const messages = parsed.problems.map((problem) => problem.message);
    assert.match(messages[0] as string, /^not JSON \(/);
    assert.match(messages[1] as string, /^no question/);
    assert.match(messages[2] as string, /expected an object with a "question", got a list/);
    assert.match(
      messages[3] as string,
      new RegExp(
        `question too long: ${MAX_QUESTION_CHARACTERS + 1} characters; the most is ${MAX_QUESTION_CHARACTERS}`,
      ),
    );
    assert.match(messages[4] as string, /"question" must be a string, got number 42/);
    assert.match(messages[5] as string, /"answer" must be a string, got an object/);
    assert.match(messages[6] as string, /"messages" must be a list/);
    assert.deepEqual(describeBatchInputProblems('q.jsonl', parsed.problems.slice(0, 1)), [`q.jsonl:2: ${messages[0]}`]);
  });

  test('an empty file is a problem of the whole file', () => {
    for (const text of ['', '\n\n  \n']) {
      const parsed = parseBatchInput(text, 'jsonl');
      assert.deepEqual(parsed.problems, [{ line: 0, message: 'the file has no questions' }]);
      assert.deepEqual(describeBatchInputProblems('e.jsonl', parsed.problems), ['e.jsonl: the file has no questions']);
    }
  });

  test('duplicate questions are kept as separate items and reported with their indices and lines', () => {
    const parsed = parseBatchInput(
      ['{"question":"Same?"}', '{"question":"Other"}', '{"question":"Same? "}', '{"question":"Same?"}'].join('\n'),
      'jsonl',
    );
    assert.deepEqual(parsed.problems, []);
    assert.equal(parsed.items.length, 4);
    assert.deepEqual(parsed.duplicates, [{ question: 'Same?', indices: [0, 2, 3], lines: [1, 3, 4] }]);
  });
});

describe('.json', () => {
  test('a list of objects; each problem names the line its element starts on', () => {
    const text =
      '[\n  {"question": "one"},\n  {"answer": "x"},\n  {\n    "question": "three, with [brackets] and \\"quotes\\""\n  },\n  "a string"\n]\n';
    const parsed = parseBatchInput(text, 'json');
    assert.deepEqual(parsed.items, [{ question: 'one' }, { question: 'three, with [brackets] and "quotes"' }]);
    assert.deepEqual(parsed.lines, [2, 4]);
    assert.deepEqual(
      parsed.problems.map((problem) => problem.line),
      [3, 7],
    );
  });

  test('not JSON, or not a list, is reported with a line', () => {
    const broken = parseBatchInput('[\n {"question": "a"},\n {"question": }\n]', 'json');
    assert.equal(broken.problems.length, 1);
    assert.match(broken.problems[0]?.message as string, /^not JSON/);
    assert.equal(broken.problems[0]?.line, 3);
    assert.equal(
      parseBatchInput('[\n {"question": "a"},\n {"question": "b"},\n]', 'json').problems[0]?.line,
      4,
      'a trailing comma is reported where the next element should be',
    );
    assert.equal(parseBatchInput('[\n {"question": "a\\q"}\n]', 'json').problems[0]?.line, 2, 'a bad escape');
    assert.deepEqual(parseBatchInput('{"question":"a"}', 'json').problems, [
      { line: 1, message: 'a .json input must be a list of objects, got an object' },
    ]);
    assert.deepEqual(parseBatchInput('[]', 'json').problems, [{ line: 0, message: 'the file has no questions' }]);
  });
});

describe('.csv', () => {
  test('a header naming question and answer; quoted fields keep commas, quotes and line breaks', () => {
    const text = '\ufeffQuestion,answer\r\n"Who, exactly?",Amundsen\n"He said ""go""\nand left",\n\nplain,yes\n';
    const parsed = parseBatchInput(text, 'csv');
    assert.deepEqual(parsed.problems, []);
    assert.deepEqual(parsed.items, [
      { question: 'Who, exactly?', answer: 'Amundsen' },
      { question: 'He said "go"\nand left' },
      { question: 'plain', answer: 'yes' },
    ]);
    assert.deepEqual(parsed.lines, [2, 3, 6]);
  });

  test('unknown columns, a missing question column, ragged rows, empty questions and open quotes are reported', () => {
    const unknown = parseBatchInput('question,answer,level\nq,a,1\n', 'csv');
    assert.deepEqual(unknown.problems, [{ line: 1, message: 'unknown column "level" (allowed: question, answer)' }]);
    const noQuestion = parseBatchInput('prompt\nq\n', 'csv');
    assert.deepEqual(
      noQuestion.problems.map((problem) => problem.message),
      ['unknown column "prompt" (allowed: question, answer)', 'the header must name a "question" column, got "prompt"'],
    );
    const rows = parseBatchInput('question,answer\nq1,a1\nq2\n,a3\nq4,a4,extra\n', 'csv');
    assert.deepEqual(rows.problems, [
      { line: 3, message: 'has 1 field; the header has 2' },
      { line: 4, message: 'no question (an empty or missing "question")' },
      { line: 5, message: 'has 3 fields; the header has 2' },
    ]);
    assert.deepEqual(parseBatchInput('question\n"never closed\nq\n', 'csv').problems, [
      { line: 2, message: 'a quoted field is never closed' },
    ]);
    assert.deepEqual(parseBatchInput('question\n', 'csv').problems, [
      { line: 0, message: 'the file has no questions' },
    ]);
  });
});

describe('input files and the store', () => {
  test('a file is read, checked and hashed; an unknown extension or a missing file is refused clearly', async () => {
    const path = file('q.jsonl', '{"question":"a"}\n{"question":"b","answer":"B"}\n');
    const read = await readBatchInputFile(path);
    assert.equal(read.format, 'jsonl');
    assert.deepEqual(read.problems, []);
    assert.equal(read.items.length, 2);
    assert.match(read.fileHash, /^sha256:[0-9a-f]{64}$/);
    await assert.rejects(
      readBatchInputFile(file('q.txt', 'question')),
      (error: unknown) =>
        error instanceof BatchInputFileError &&
        /unknown input format "\.txt"; use \.jsonl, \.json, \.csv/.test(error.message),
    );
    await assert.rejects(
      readBatchInputFile(join(directory, 'absent.csv')),
      /absent\.csv: cannot read the input file \(no such file\)/,
    );
    const unreadable = file('locked.json', '[]');
    chmodSync(unreadable, 0o000);
    if (process.getuid?.() !== 0)
      await assert.rejects(readBatchInputFile(unreadable), /cannot read the input file \(permission denied\)/);
  });

  test('the questions are stored by content hash and read back; the same questions give the same reference', async () => {
    const store = new MemoryTranscriptStore();
    const items = [{ question: 'a' }, { question: 'b', answer: 'B' }];
    const reference = await storeBatchInput(store, items);
    assert.match(reference, /^sha256:[0-9a-f]{64}$/);
    assert.equal(await storeBatchInput(store, [{ question: 'a' }, { question: 'b', answer: 'B' }]), reference);
    assert.deepEqual(await loadBatchInput(store, reference), items);
    assert.notEqual(await storeBatchInput(store, [{ question: 'a' }]), reference);
    const other = await store.putText('{"kind":"conversation","messages":[]}');
    await assert.rejects(loadBatchInput(store, other), /is not a batch input/);
    await assert.rejects(loadBatchInput(store, 'questions.jsonl'), /Not a batch input reference/);
  });
});
