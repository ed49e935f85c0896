import { MAX_QUESTION_CHARACTERS } from '../core/run-input';

/**
 * A batch's questions, parsed and checked before anything starts (issue 11). Pure:
 * text in, items and problems out. Reading the file and storing it is `src/storage/batch-input-file.ts`.
 *
 * Shapes, as DeepResearch reads them:
 * - `.jsonl`: one object a line with `question` and optional `answer`; when `question` is
 *   missing or empty, the text of `messages[1].content` after `User:` (DeepResearch's fallback).
 * - `.json`: a list of such objects.
 * - `.csv`: a header naming `question` (and optionally `answer`), one question a row.
 */

export type BatchInputFormat = 'jsonl' | 'json' | 'csv';

export const BATCH_INPUT_FORMATS: readonly BatchInputFormat[] = ['jsonl', 'json', 'csv'];

/** One question of a batch. */
export interface BatchItem {
  question: string;
  /** Reference answer, carried into the result line (DeepResearch's `answer`). */
  answer?: string;
}

/** Something wrong with the input: `line` is 1-based; 0 means the file as a whole. */
export interface BatchInputProblem {
  line: number;
  message: string;
}

/** The same question more than once: kept as separate items, reported. */
export interface BatchInputDuplicate {
  /** The question, shortened. */
  question: string;
  /** 0-based item indices (the `q<index>` of the runs). */
  indices: number[];
  /** 1-based source lines of those items. */
  lines: number[];
}

export interface ParsedBatchInput {
  items: BatchItem[];
  /** Source line of each item (1-based), parallel to `items`. */
  lines: number[];
  /** Every problem found; the batch must not start unless this is empty. */
  problems: BatchInputProblem[];
  duplicates: BatchInputDuplicate[];
}

/** Columns a CSV input may have. */
export const CSV_COLUMNS = ['question', 'answer'] as const;

/** The format a file name's extension names, or undefined (`.JSONL` counts as `.jsonl`). */
export function batchInputFormatOf(fileName: string): BatchInputFormat | undefined {
  const match = /\.([A-Za-z]+)$/.exec(fileName);
  const extension = match?.[1]?.toLowerCase();
  return BATCH_INPUT_FORMATS.find((format) => format === extension);
}

/** Parses and checks a whole input; every bad line is reported, none is skipped silently. */
export function parseBatchInput(text: string, format: BatchInputFormat): ParsedBatchInput {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const found =
    format === 'jsonl' ? jsonLinesRecords(body) : format === 'json' ? jsonListRecords(body) : csvRecords(body);
  const items: BatchItem[] = [];
  const lines: number[] = [];
  const problems = [...found.problems];
  for (const record of found.records) {
    const checked = itemOf(record.value, format);
    if (typeof checked === 'string') problems.push({ line: record.line, message: checked });
    else {
      items.push(checked);
      lines.push(record.line);
    }
  }
  if (problems.length === 0 && items.length === 0) problems.push({ line: 0, message: 'the file has no questions' });
  problems.sort((left, right) => left.line - right.line);
  return { items, lines, problems, duplicates: duplicatesOf(items, lines) };
}

/** One line per problem, `FILE:LINE: what is wrong`, for the command line. */
export function describeBatchInputProblems(source: string, problems: readonly BatchInputProblem[]): string[] {
  return problems.map((problem) =>
    problem.line === 0 ? `${source}: ${problem.message}` : `${source}:${problem.line}: ${problem.message}`,
  );
}

interface SourceRecord {
  line: number;
  value: unknown;
}

interface Records {
  records: SourceRecord[];
  problems: BatchInputProblem[];
}

function jsonLinesRecords(text: string): Records {
  const records: SourceRecord[] = [];
  const problems: BatchInputProblem[] = [];
  text.split('\n').forEach((raw, position) => {
    const line = raw.endsWith('\r') ? raw.slice(0, -1) : raw;
    if (line.trim() === '') return;
    try {
      records.push({ line: position + 1, value: JSON.parse(line) });
    } catch (error) {
      problems.push({ line: position + 1, message: `not JSON (${jsonErrorText(error)})` });
    }
  });
  return { records, problems };
}

function jsonListRecords(text: string): Records {
  if (text.trim() === '') return { records: [], problems: [] };
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return {
      records: [],
      problems: [{ line: lineAt(text, jsonErrorOffset(text)), message: `not JSON (${jsonErrorText(error)})` }],
    };
  }
  if (!Array.isArray(value))
    return {
      records: [],
      problems: [{ line: 1, message: `a .json input must be a list of objects, got ${kindOf(value)}` }],
    };
  const starts = topLevelElementStarts(text);
  return {
    records: value.map((element, index) => ({ line: lineAt(text, starts[index] ?? 0), value: element })),
    problems: [],
  };
}

function csvRecords(text: string): Records {
  const rows = csvRows(text);
  const problems: BatchInputProblem[] = [...rows.problems];
  const nonEmpty = rows.rows.filter((row) => !(row.fields.length === 1 && row.fields[0]?.trim() === ''));
  const header = nonEmpty[0];
  if (!header) return { records: [], problems };
  const names = header.fields.map((name) => name.trim().toLowerCase());
  const unknown = names.filter((name) => !(CSV_COLUMNS as readonly string[]).includes(name));
  if (unknown.length) {
    problems.push({
      line: header.line,
      message: `unknown column${unknown.length > 1 ? 's' : ''} ${unknown.map((name) => JSON.stringify(name)).join(', ')} (allowed: ${CSV_COLUMNS.join(', ')})`,
    });
  }
  const repeated = names.filter((name, index) => names.indexOf(name) !== index);
  if (repeated.length)
    problems.push({ line: header.line, message: `column ${JSON.stringify(repeated[0])} appears more than once` });
  if (!names.includes('question')) {
    problems.push({
      line: header.line,
      message: `the header must name a "question" column, got ${names.map((name) => JSON.stringify(name)).join(', ') || 'nothing'}`,
    });
    return { records: [], problems };
  }
  const records: SourceRecord[] = [];
  for (const row of nonEmpty.slice(1)) {
    if (row.fields.length !== names.length) {
      problems.push({
        line: row.line,
        message: `has ${row.fields.length} field${row.fields.length === 1 ? '' : 's'}; the header has ${names.length}`,
      });
      continue;
    }
    const value: Record<string, string> = {};
    names.forEach((name, index) => {
      value[name] = row.fields[index] as string;
    });
    records.push({ line: row.line, value });
  }
  return { records, problems };
}

/** RFC 4180 rows: quoted fields may hold commas, quotes ("") and line breaks; each row keeps the line it starts on. */
function csvRows(text: string): { rows: Array<{ line: number; fields: string[] }>; problems: BatchInputProblem[] } {
  const rows: Array<{ line: number; fields: string[] }> = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let rowLine = 1;
  let quoted = false;
  let quoteLine = 0;
  let index = 0;
  const endRow = () => {
    fields.push(field);
    rows.push({ line: rowLine, fields });
    fields = [];
    field = '';
  };
  while (index < text.length) {
    const character = text[index] as string;
    if (quoted) {
      if (character === '"') {
        if (text[index + 1] === '"') {
          field += '"';
          index += 2;
          continue;
        }
        quoted = false;
      } else {
        if (character === '\n') line += 1;
        field += character;
      }
      index += 1;
      continue;
    }
    if (character === '"' && field.trim() === '') {
      quoted = true;
      quoteLine = line;
      field = '';
    } else if (character === ',') {
      fields.push(field);
      field = '';
    } else if (character === '\n' || character === '\r') {
      if (character === '\r' && text[index + 1] === '\n') index += 1;
      endRow();
      line += 1;
      rowLine = line;
    } else {
      field += character;
    }
    index += 1;
  }
  if (quoted) return { rows, problems: [{ line: quoteLine, message: 'a quoted field is never closed' }] };
  if (field !== '' || fields.length) endRow();
  return { rows, problems: [] };
}

/** The item a record stands for, or what is wrong with it. */
function itemOf(value: unknown, format: BatchInputFormat): BatchItem | string {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    return `expected an object with a "question", got ${kindOf(value)}`;
  const record = value as Record<string, unknown>;
  let question: string | undefined;
  if (record.question !== undefined && record.question !== null && typeof record.question !== 'string') {
    return `"question" must be a string, got ${kindOf(record.question)}`;
  }
  if (typeof record.question === 'string' && record.question.trim() !== '') question = record.question.trim();
  else if (format !== 'csv') {
    const fallback = questionFromMessages(record.messages);
    if (typeof fallback === 'string' && fallback !== '') question = fallback;
    else if (fallback instanceof Error) return fallback.message;
  }
  if (question === undefined)
    return (
      'no question (an empty or missing "question"' +
      (format === 'csv' ? ')' : ', and no messages[1].content to take it from)')
    );
  if (question.length > MAX_QUESTION_CHARACTERS)
    return `question too long: ${question.length} characters; the most is ${MAX_QUESTION_CHARACTERS}`;
  const answer = record.answer;
  if (answer === undefined || answer === null || answer === '') return { question };
  if (typeof answer === 'number' || typeof answer === 'boolean') return { question, answer: String(answer) };
  if (typeof answer !== 'string') return `"answer" must be a string, got ${kindOf(answer)}`;
  return { question, answer };
}

/** DeepResearch's fallback: the user message's text after `User:` (all of it when there is no `User:`). */
function questionFromMessages(messages: unknown): string | Error | undefined {
  if (messages === undefined) return undefined;
  if (!Array.isArray(messages)) return new Error(`"messages" must be a list, got ${kindOf(messages)}`);
  const content = (messages[1] as { content?: unknown } | undefined)?.content;
  if (typeof content !== 'string') return undefined;
  const marker = content.indexOf('User:');
  return (marker === -1 ? content : content.slice(marker + 'User:'.length)).trim();
}

function duplicatesOf(items: BatchItem[], lines: number[]): BatchInputDuplicate[] {
  const byQuestion = new Map<string, number[]>();
  items.forEach((item, index) => {
    const key = item.question.replace(/\s+/g, ' ');
    byQuestion.set(key, [...(byQuestion.get(key) ?? []), index]);
  });
  return [...byQuestion.entries()]
    .filter(([, indices]) => indices.length > 1)
    .map(([question, indices]) => ({
      question: question.length > 80 ? `${question.slice(0, 79)}…` : question,
      indices,
      lines: indices.map((index) => lines[index] as number),
    }));
}

function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'string')
    return `the string ${JSON.stringify(value.length > 40 ? `${value.slice(0, 39)}…` : value)}`;
  return `${typeof value} ${String(value)}`;
}

function jsonErrorText(error: unknown): string {
  return (error as Error).message.replace(/\s+/g, ' ').slice(0, 160);
}

function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let index = 0; index < offset && index < text.length; index += 1) if (text.charCodeAt(index) === 10) line += 1;
  return line;
}

/** Offsets where each element of a top-level JSON array begins (the text is known to parse). */
function topLevelElementStarts(text: string): number[] {
  const starts: number[] = [];
  let depth = 0;
  let inString = false;
  let expectingElement = false;
  for (let index = 0; index < text.length; index += 1) {
    const character = text[index] as string;
    if (inString) {
      if (character === '\\') index += 1;
      else if (character === '"') inString = false;
      continue;
    }
    if (/\s/.test(character)) continue;
    if (depth === 1 && expectingElement && character !== ']') {
      starts.push(index);
      expectingElement = false;
    }
    if (character === '"') inString = true;
    else if (character === '[' || character === '{') {
      depth += 1;
      if (depth === 1) expectingElement = true;
    } else if (character === ']' || character === '}') depth -= 1;
    else if (character === ',' && depth === 1) expectingElement = true;
  }
  return starts;
}

/**
 * Where a text that JSON.parse refused goes wrong: a small strict JSON reader that stops at the
 * first character it cannot accept (Node 20's messages give no position to report a line from).
 */
function jsonErrorOffset(text: string): number {
  let index = 0;
  const fail = (): never => {
    throw index;
  };
  const space = () => {
    while (index < text.length && ' \t\n\r'.includes(text[index] as string)) index += 1;
  };
  const literal = (word: string) => {
    for (const character of word) {
      if (text[index] !== character) fail();
      index += 1;
    }
  };
  const string = () => {
    index += 1;
    for (;;) {
      const character = text[index];
      if (character === undefined || character < ' ') fail();
      if (character === '"') break;
      if (character === '\\') {
        index += 1;
        const escaped = text[index];
        if (escaped === 'u') {
          if (!/^[0-9a-fA-F]{4}$/.test(text.slice(index + 1, index + 5))) fail();
          index += 4;
        } else if (escaped === undefined || !'"\\/bfnrt'.includes(escaped)) fail();
      }
      index += 1;
    }
    index += 1;
  };
  const number = () => {
    const match = /^-?(0|[1-9]\d*)(\.\d+)?([eE][+-]?\d+)?/.exec(text.slice(index, index + 400));
    if (!match) fail();
    index += (match as RegExpExecArray)[0].length;
  };
  const value = (): void => {
    space();
    const character = text[index];
    if (character === '{') {
      index += 1;
      space();
      if (text[index] === '}') {
        index += 1;
        return;
      }
      for (;;) {
        space();
        if (text[index] !== '"') fail();
        string();
        space();
        if (text[index] !== ':') fail();
        index += 1;
        value();
        space();
        if (text[index] === ',') index += 1;
        else if (text[index] === '}') {
          index += 1;
          return;
        } else fail();
      }
    }
    if (character === '[') {
      index += 1;
      space();
      if (text[index] === ']') {
        index += 1;
        return;
      }
      for (;;) {
        value();
        space();
        if (text[index] === ',') index += 1;
        else if (text[index] === ']') {
          index += 1;
          return;
        } else fail();
      }
    }
    if (character === '"') return string();
    if (character === 't') return literal('true');
    if (character === 'f') return literal('false');
    if (character === 'n') return literal('null');
    return number();
  };
  try {
    value();
    space();
    return index;
  } catch (offset) {
    return typeof offset === 'number' ? offset : 0;
  }
}
