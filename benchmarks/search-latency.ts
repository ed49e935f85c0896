/**
 * Search latency of the knowledge base (SQLite FTS5, bm25, one result per document) beside a
 * naive baseline over the same chunks in the same run: a `LIKE '%word%'` scan that ranks chunks
 * by how many query words they contain. The corpus is generated from a fixed seed: documents of
 * Zipf-distributed pseudo-words, cut into ~10,000 chunks by the knowledge base's own chunker.
 *
 *   npm run benchmark:search                 (10,000 chunks, 500 queries)
 *   npm run benchmark:search -- 20000 1000   (chunks, queries)
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { chunkText } from '../src/knowledge-base/chunk-text';
import { KnowledgeBase } from '../src/knowledge-base/knowledge-base';
import { seededRandom } from '../test/fakes/seeded-random';

const TARGET_CHUNKS = Number(process.argv[2] ?? 10_000);
const QUERIES = Number(process.argv[3] ?? 500);
const WARM_UP_QUERIES = 50;
const RESULTS_PER_QUERY = 5;
const SEED = 20_240_101;
const VOCABULARY_SIZE = 20_000;

const random = seededRandom(SEED);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)] as T;

/** Pronounceable pseudo-words, each distinct. */
function makeVocabulary(size: number): string[] {
  const onsets = [
    'b',
    'c',
    'd',
    'f',
    'g',
    'h',
    'k',
    'l',
    'm',
    'n',
    'p',
    'r',
    's',
    't',
    'v',
    'z',
    'br',
    'ch',
    'st',
    'tr',
  ];
  const vowels = ['a', 'e', 'i', 'o', 'u', 'ai', 'ou'];
  const words = new Set<string>();
  while (words.size < size) {
    const syllables = 2 + Math.floor(random() * 3);
    let word = '';
    for (let index = 0; index < syllables; index++) word += pick(onsets) + pick(vowels);
    words.add(word + pick(['', 'n', 'r', 's', 'x']));
  }
  return [...words];
}

/** Draws word indices with Zipf's law (exponent 1.07), like natural text: few frequent words, many rare. */
function zipfSampler(size: number): () => number {
  const cumulative = new Float64Array(size);
  let total = 0;
  for (let rank = 0; rank < size; rank++) cumulative[rank] = total += 1 / Math.pow(rank + 1, 1.07);
  return () => {
    const target = random() * total;
    let low = 0;
    let high = size - 1;
    while (low < high) {
      const middle = (low + high) >> 1;
      if ((cumulative[middle] as number) < target) low = middle + 1;
      else high = middle;
    }
    return low;
  };
}

const vocabulary = makeVocabulary(VOCABULARY_SIZE);
const drawWord = zipfSampler(VOCABULARY_SIZE);

function sentence(): string {
  const length = 8 + Math.floor(random() * 14);
  const words = Array.from({ length }, () => vocabulary[drawWord()] as string);
  const first = words[0] as string;
  words[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return `${words.join(' ')}.`;
}

function document(): string {
  const paragraphs = 6 + Math.floor(random() * 30);
  return Array.from({ length: paragraphs }, () =>
    Array.from({ length: 2 + Math.floor(random() * 5) }, sentence).join(' '),
  ).join('\n\n');
}

function percentile(sorted: readonly number[], fraction: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

function summary(milliseconds: number[]): { p50: number; p95: number; p99: number; mean: number } {
  const sorted = [...milliseconds].sort((left, right) => left - right);
  return {
    p50: percentile(sorted, 0.5),
    p95: percentile(sorted, 0.95),
    p99: percentile(sorted, 0.99),
    mean: sorted.reduce((sum, value) => sum + value, 0) / sorted.length,
  };
}

function time<T>(work: () => T): { value: T; milliseconds: number } {
  const started = process.hrtime.bigint();
  const value = work();
  return { value, milliseconds: Number(process.hrtime.bigint() - started) / 1e6 };
}

async function main(): Promise<void> {
  const directory = mkdtempSync(join(tmpdir(), 'react-agent-search-benchmark-'));
  try {
    // The corpus: documents until their chunks reach the target.
    const documents: Array<{ path: string; title: string; text: string; chunks: string[] }> = [];
    let chunkCount = 0;
    while (chunkCount < TARGET_CHUNKS) {
      const text = document();
      const chunks = chunkText(text);
      documents.push({
        path: `generated/document-${documents.length + 1}.md`,
        title: sentence().slice(0, 60),
        text,
        chunks,
      });
      chunkCount += chunks.length;
    }
    const corpusCharacters = documents.reduce((sum, item) => sum + item.text.length, 0);

    // Ours: the knowledge base.
    const knowledgeBase = KnowledgeBase.open(join(directory, 'knowledge-base.sqlite'));
    const build = time(() => {
      for (const item of documents)
        knowledgeBase.addText({ path: item.path, title: item.title, text: item.text, format: 'markdown' });
    });
    const { chunks: indexedChunks } = knowledgeBase.statistics();

    // Baseline: the same chunks in a plain table, scanned with LIKE.
    const baseline = new Database(join(directory, 'baseline.sqlite'));
    baseline.pragma('journal_mode = WAL');
    baseline.exec(
      'CREATE TABLE naive_chunks (id INTEGER PRIMARY KEY, document_id INTEGER NOT NULL, title TEXT NOT NULL, body TEXT NOT NULL)',
    );
    const baselineBuild = time(() => {
      const insert = baseline.prepare('INSERT INTO naive_chunks (document_id, title, body) VALUES (?, ?, ?)');
      baseline.transaction(() =>
        documents.forEach((item, index) => item.chunks.forEach((chunk) => insert.run(index + 1, item.title, chunk))),
      )();
    });
    const baselineStatements = new Map<number, Database.Statement>();
    const baselineSearch = (words: string[]): Array<{ document_id: number }> => {
      let statement = baselineStatements.get(words.length);
      if (!statement) {
        const matches = words.map(() => '(body LIKE ?)');
        statement = baseline.prepare(
          `SELECT document_id FROM naive_chunks WHERE ${matches.join(' OR ')} ORDER BY ${matches.join(' + ')} DESC LIMIT ${RESULTS_PER_QUERY * 4}`,
        );
        baselineStatements.set(words.length, statement);
      }
      const patterns = words.map((word) => `%${word}%`);
      const rows = statement.all(...patterns, ...patterns) as Array<{ document_id: number }>;
      return [...new Map(rows.map((row) => [row.document_id, row])).values()].slice(0, RESULTS_PER_QUERY);
    };

    // Queries: half use words of one chunk (they hit), half random words of any frequency.
    const queries = Array.from({ length: QUERIES + WARM_UP_QUERIES }, (_, index) => {
      const length = 2 + Math.floor(random() * 3);
      if (index % 2 === 0) {
        const words =
          pick(pick(documents).chunks)
            .toLowerCase()
            .match(/[a-z]+/g) ?? [];
        return Array.from({ length }, () => pick(words));
      }
      return Array.from({ length }, () => vocabulary[drawWord()] as string);
    });

    const oursTimes: number[] = [];
    const baselineTimes: number[] = [];
    let oursHits = 0;
    let baselineHits = 0;
    queries.forEach((words, index) => {
      const ours = time(() => knowledgeBase.search(words.join(' '), RESULTS_PER_QUERY));
      const naive = time(() => baselineSearch(words));
      if (index < WARM_UP_QUERIES) return;
      oursTimes.push(ours.milliseconds);
      baselineTimes.push(naive.milliseconds);
      if (ours.value.length) oursHits += 1;
      if (naive.value.length) baselineHits += 1;
    });
    knowledgeBase.close();
    baseline.close();

    const fileSize = (name: string) =>
      ['', '-wal'].reduce(
        (sum, suffix) => sum + (statSync(join(directory, name + suffix), { throwIfNoEntry: false })?.size ?? 0),
        0,
      );
    const ours = summary(oursTimes);
    const naive = summary(baselineTimes);
    const format = (value: number) => value.toFixed(2).padStart(8);
    console.log(
      `Corpus: ${documents.length.toLocaleString('en-US')} documents, ${indexedChunks.toLocaleString('en-US')} chunks (baseline ${chunkCount.toLocaleString('en-US')}), ${(corpusCharacters / 1e6).toFixed(1)} M characters; seed ${SEED}.`,
    );
    console.log(
      `Queries: ${QUERIES} (after ${WARM_UP_QUERIES} warm-up), 2-4 words, ${RESULTS_PER_QUERY} results each; Node ${process.version}.\n`,
    );
    console.log(
      'design                                   p50 ms   p95 ms   p99 ms  mean ms  with hits   build s  file MB',
    );
    console.log(
      `FTS5 + bm25 knowledge base (ours)      ${format(ours.p50)} ${format(ours.p95)} ${format(ours.p99)} ${format(ours.mean)}  ${String(oursHits).padStart(9)}  ${(build.milliseconds / 1000).toFixed(1).padStart(8)} ${(fileSize('knowledge-base.sqlite') / 1e6).toFixed(1).padStart(8)}`,
    );
    console.log(
      `naive LIKE '%word%' scan (baseline)    ${format(naive.p50)} ${format(naive.p95)} ${format(naive.p99)} ${format(naive.mean)}  ${String(baselineHits).padStart(9)}  ${(baselineBuild.milliseconds / 1000).toFixed(1).padStart(8)} ${(fileSize('baseline.sqlite') / 1e6).toFixed(1).padStart(8)}`,
    );
    console.log(
      `\nOurs is ${(naive.p50 / ours.p50).toFixed(0)}x faster at the median and ${(naive.p95 / ours.p95).toFixed(0)}x at p95.`,
    );
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
