import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import { joinCjkCharacters, spaceOutCjkCharacters } from '../../src/knowledge-base/cjk-segmentation';
import { chunkText } from '../../src/knowledge-base/chunk-text';
import { buildFullTextQuery } from '../../src/knowledge-base/full-text-query';
import { KnowledgeBase } from '../../src/knowledge-base/knowledge-base';
import { makeDocx, makePdf } from '../fakes/documents';

/** better-sqlite3 builds its rows in Node's own realm, not in jest's sandbox: compare by value, not by prototype. */
function assertSameValue(actual: unknown, expected: unknown, message?: string): void {
  try {
    expect(actual).toEqual(expected);
  } catch (error) {
    if (message && error instanceof Error) error.message = `${message}\n${error.message}`;
    throw error;
  }
}

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-knowledge-base-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));
const samples = resolve(__dirname, '../../samples/knowledge-base');

function folder(name: string, files: Record<string, string | Uint8Array>): string {
  const path = join(scratch, name);
  for (const [file, content] of Object.entries(files)) {
    mkdirSync(join(path, file, '..'), { recursive: true });
    writeFileSync(join(path, file), content);
  }
  return path;
}

/** A paragraph of about `characters` characters that mentions `topic`. */
function paragraph(topic: string, characters: number, seed = 0): string {
  const words = [
    'market',
    'growth',
    'vehicles',
    'battery',
    'quarter',
    'report',
    'price',
    'factory',
    'range',
    'charging',
  ];
  const sentence = (index: number) =>
    `The ${topic} ${words[(index + seed) % words.length]} figures were noted in line ${index}.`;
  const sentences: string[] = [];
  for (let index = 0; sentences.join(' ').length < characters; index++) sentences.push(sentence(index));
  return sentences.join(' ');
}

describe('chunkText', () => {
  test('packs whole paragraphs up to the target and never exceeds the maximum', () => {
    const text = Array.from({ length: 12 }, (_, index) => paragraph(`topic${index}`, 400, index)).join('\n\n');
    const chunks = chunkText(text);
    assert.ok(chunks.length >= 4 && chunks.length <= 6, `got ${chunks.length} chunks`);
    for (const chunk of chunks) assert.ok(chunk.length <= 1_500, `chunk of ${chunk.length} characters`);
    for (const chunk of chunks.slice(0, -1)) assert.ok(chunk.length >= 800, `chunk of only ${chunk.length} characters`);
    assert.ok(chunks.every((chunk) => !chunk.startsWith(' ') && !chunk.endsWith(' ')));
  });

  test('each chunk after the first starts with a little of the one before', () => {
    const text = Array.from({ length: 8 }, (_, index) => paragraph(`subject${index}`, 500, index)).join('\n\n');
    const chunks = chunkText(text, { overlapCharacters: 100 });
    for (let index = 1; index < chunks.length; index++) {
      const previous = chunks[index - 1] as string;
      const overlap = (chunks[index] as string).split('\n\n')[0] as string;
      assert.ok(overlap.length > 20 && overlap.length <= 100, `overlap of ${overlap.length}`);
      assert.ok(previous.endsWith(overlap), 'the overlap is the end of the previous chunk');
    }
  });

  test('a long paragraph is split at sentences; a run without spaces is still cut', () => {
    const chunks = chunkText(paragraph('long', 5_000));
    assert.ok(chunks.length >= 4);
    for (const chunk of chunks) assert.ok(chunk.length <= 1_500);
    assert.match(chunks[1] as string, /\.$/);
    const unbroken = chunkText('x'.repeat(4_000));
    assert.ok(unbroken.every((chunk) => chunk.length <= 1_500));
    assert.equal(unbroken.join('').replace(/\n/g, '').length >= 4_000, true);
  });

  test('Chinese text splits at 。 and short text is one chunk; empty text gives none', () => {
    const chinese = '比亚迪二零二四年销量创新高。'.repeat(200);
    const chunks = chunkText(chinese);
    assert.ok(chunks.length > 1 && chunks.every((chunk) => chunk.length <= 1_500 && chunk.endsWith('。')));
    assertSameValue(chunkText('# Title\n\nShort note.'), ['# Title\n\nShort note.']);
    assertSameValue(chunkText('  \n\n '), []);
  });

  test('a heading starts a new chunk rather than ending one', () => {
    const text = `${paragraph('alpha', 700)}\n\n## Beta\n\n${paragraph('beta', 700)}`;
    const chunks = chunkText(text);
    assert.equal(chunks.length, 2);
    assert.match(chunks[1] as string, /## Beta\n\nThe beta/);
  });
});

describe('buildFullTextQuery', () => {
  test('words become quoted tokens joined by OR; stop words dropped; phrases kept', () => {
    assert.equal(buildFullTextQuery('How many cars did BYD sell in 2024?'), '"cars" OR "byd" OR "sell" OR "2024"');
    assert.equal(buildFullTextQuery('"blade battery" LFP'), '"blade battery" OR "lfp"');
    assert.equal(buildFullTextQuery('the'), '"the"');
  });

  test('operators, quotes and punctuation are text, never syntax', () => {
    assert.equal(buildFullTextQuery('BYD AND NOT tesla*'), '"byd" OR "not" OR "tesla"');
    assert.equal(
      buildFullTextQuery('NEAR(a b) title:x -y ^z "unbalanced'),
      '"near(a" OR "b" OR "title:x" OR "y" OR "z" OR "unbalanced"',
    );
    assert.equal(buildFullTextQuery('4,272,145'), '"4,272,145"');
    assert.equal(buildFullTextQuery('!!! *** ""'), undefined);
  });

  test('CJK characters are spaced so each is a token', () => {
    assert.equal(buildFullTextQuery('比亚迪 销量'), '"比 亚 迪" OR "销 量"');
    assert.equal(spaceOutCjkCharacters('BYD比亚迪2024年'), 'BYD比 亚 迪2024年');
    assert.equal(joinCjkCharacters('比 **亚 迪** 销 量 and more'), '比**亚迪**销量 and more');
  });
});

describe('KnowledgeBase', () => {
  test('add indexes a folder of sample notes; search ranks the right document first', async () => {
    const knowledgeBase = KnowledgeBase.open(join(scratch, 'samples.sqlite'));
    try {
      const result = await knowledgeBase.add([samples]);
      assert.equal(result.added, 5);
      assert.equal(result.failed, 0);
      assert.ok(result.chunksWritten >= 5);
      assert.equal(knowledgeBase.list().length, 5);

      const expectations: Array<[string, string]> = [
        ['Tesla deliveries 2024', 'tesla-2024-deliveries.md'],
        ['How many more cars did BYD sell than Tesla?', 'byd-vs-tesla-2024.md'],
        ['lithium iron phosphate blade battery', 'ev-battery-chemistry.md'],
        ['electric car sales in China and Europe', 'global-ev-market-2024.md'],
        ['BYD overseas plants Hungary', 'byd-2024-sales.md'],
      ];
      for (const [query, expected] of expectations) {
        const [first] = knowledgeBase.search(query, 5);
        assert.ok(first, `no result for ${query}`);
        assert.ok(first.path.endsWith(expected), `"${query}" found ${first.path} first, expected ${expected}`);
      }
      const results = knowledgeBase.search('Tesla deliveries 2024', 5);
      assert.ok(results.length > 1);
      assertSameValue(
        [...results].sort((left, right) => right.score - left.score),
        results,
        'best score first',
      );
      assert.equal(new Set(results.map((result) => result.path)).size, results.length, 'one result per document');
      assert.match(results[0]?.snippet ?? '', /\*\*Tesla\*\*/);
      assert.equal(results[0]?.title, 'Tesla deliveries in 2024');
    } finally {
      knowledgeBase.close();
    }
  });

  test('re-adding: unchanged files are left alone, changed files have their chunks replaced', async () => {
    const corpus = folder('re-add', {
      'a.md': '# Alpha\n\nThe zeppelin landed at noon.',
      'b.txt': 'Bravo talks about submarines.',
    });
    const knowledgeBase = KnowledgeBase.open(join(scratch, 're-add.sqlite'));
    try {
      assertSameValue((await knowledgeBase.add([corpus])).added, 2);
      const again = await knowledgeBase.add([corpus, join(corpus, 'a.md')]);
      assertSameValue(
        [again.added, again.updated, again.unchanged, again.chunksWritten],
        [0, 0, 2, 0],
        'each file once, nothing written',
      );

      writeFileSync(join(corpus, 'a.md'), '# Alpha\n\nThe hovercraft arrived at dusk.');
      const changed = await knowledgeBase.add([corpus]);
      assertSameValue([changed.updated, changed.unchanged], [1, 1]);
      assertSameValue(knowledgeBase.search('zeppelin', 5), [], 'the old text is gone from the index');
      assert.equal(knowledgeBase.search('hovercraft', 5)[0]?.title, 'Alpha');
      assert.equal(knowledgeBase.list().length, 2);
      assert.equal(knowledgeBase.statistics().chunks, 2);
    } finally {
      knowledgeBase.close();
    }
  });

  test('remove by id, by path and by folder; list reflects it', async () => {
    const corpus = folder('remove', {
      'one.md': 'First note about kites.',
      'sub/two.md': 'Second note about kites.',
      'sub/three.md': 'Third note about kites.',
      'four.md': 'Fourth note.',
    });
    const knowledgeBase = KnowledgeBase.open(join(scratch, 'remove.sqlite'));
    const names = () => knowledgeBase.list().map((document) => document.path.slice(corpus.length + 1));
    try {
      await knowledgeBase.add([corpus]);
      assertSameValue(names(), ['four.md', 'one.md', 'sub/three.md', 'sub/two.md']);
      const four = knowledgeBase.list()[0];
      assert.ok(four);
      assertSameValue(
        knowledgeBase.remove(String(four.id)).map((document) => document.id),
        [four.id],
      );
      assertSameValue(names(), ['one.md', 'sub/three.md', 'sub/two.md']);
      assert.equal(knowledgeBase.remove(join(corpus, 'sub')).length, 2, 'a folder removes everything under it');
      assertSameValue(names(), ['one.md']);
      assertSameValue(knowledgeBase.remove('no/such/file.md'), []);
      assertSameValue(knowledgeBase.remove(99_999), []);
      assertSameValue(
        knowledgeBase.search('kites', 5).map((result) => result.title),
        ['one.md'],
      );
      assert.equal(knowledgeBase.remove(join(corpus, 'one.md')).length, 1);
      assertSameValue(knowledgeBase.search('kites', 5), []);
      assertSameValue(knowledgeBase.statistics(), { documents: 0, chunks: 0 });
    } finally {
      knowledgeBase.close();
    }
  });

  test('queries with quotes, operators and odd characters never throw', async () => {
    const knowledgeBase = KnowledgeBase.open(join(scratch, 'hostile.sqlite'));
    try {
      await knowledgeBase.add([samples]);
      const hostile = [
        '"',
        '""',
        '"""',
        "'",
        'AND',
        'OR OR OR',
        'NOT',
        'NEAR(BYD Tesla, 3)',
        'BYD AND',
        '(',
        ')',
        '*',
        'tesla*',
        '^BYD',
        'title:BYD',
        '-BYD',
        '+BYD',
        '{title body}: BYD',
        'BYD"; DROP TABLE documents; --',
        '\\',
        '\u0000',
        '💥🚗',
        '   ',
        '',
        'a'.repeat(5_000),
        '"unbalanced phrase',
        'col:"x" OR',
      ];
      for (const query of hostile)
        assert.doesNotThrow(() => knowledgeBase.search(query, 5), `query ${JSON.stringify(query.slice(0, 30))}`);
      assert.ok(knowledgeBase.search('BYD"; DROP TABLE documents; --', 5).length > 0);
      assert.equal(knowledgeBase.list().length, 5);
      assert.ok(knowledgeBase.search('NEAR(BYD Tesla, 3)', 5).length > 0);
    } finally {
      knowledgeBase.close();
    }
  });

  test('Chinese and Japanese text is searchable by words inside sentences', async () => {
    const corpus = folder('cjk', {
      'byd.md': '# 比亚迪\n\n比亚迪二〇二四年新能源汽车销量为四百二十七万辆，创历史新高。',
      'tesla.md': '# 特斯拉\n\n特斯拉二〇二四年交付了一百七十九万辆电动汽车。',
      'japan.txt': 'トヨタは電気自動車の販売を増やしている。',
    });
    const knowledgeBase = KnowledgeBase.open(join(scratch, 'cjk.sqlite'));
    try {
      await knowledgeBase.add([corpus]);
      const [byd] = knowledgeBase.search('比亚迪 销量', 5);
      assert.equal(byd?.title, '比亚迪');
      assert.match(byd?.snippet ?? '', /\*\*比亚迪\*\*二〇二四年新能源汽车\*\*销量\*\*/);
      assert.equal(knowledgeBase.search('交付', 5)[0]?.title, '特斯拉');
      assert.match(knowledgeBase.search('電気自動車', 5)[0]?.path ?? '', /japan\.txt$/);
      assertSameValue(knowledgeBase.search('亚比', 5), [], 'characters must be consecutive');
    } finally {
      knowledgeBase.close();
    }
  });

  test('PDF and docx files are indexed; unreadable files are reported, the rest still added', async () => {
    const corpus = folder('mixed', {
      'report.pdf': await makePdf([['The quarterly report mentions photovoltaic panels.']], 'Solar report'),
      'memo.docx': await makeDocx('Memo', ['The memo mentions hydroelectric dams.']),
      'broken.pdf': '%PDF-1.4 broken',
      'image.png': 'ignored in folders',
      '.hidden/secret.md': 'hidden files are skipped',
    });
    const knowledgeBase = KnowledgeBase.open(join(scratch, 'mixed.sqlite'), { maxFileBytes: 1024 * 1024 });
    try {
      const outcomes: string[] = [];
      const result = await knowledgeBase.add([corpus, join(corpus, 'missing.md')], {
        onFile: (outcome) => outcomes.push(outcome.status),
      });
      assertSameValue([result.added, result.failed], [2, 2]);
      assert.equal(outcomes.length, 4);
      assert.match(result.files.find((file) => file.path.endsWith('broken.pdf'))?.reason ?? '', /as a PDF/);
      assert.match(
        result.files.find((file) => file.path.endsWith('missing.md'))?.reason ?? '',
        /no such file or folder/,
      );
      assert.equal(knowledgeBase.search('photovoltaic', 5)[0]?.title, 'Solar report');
      assert.equal(knowledgeBase.search('hydroelectric', 5)[0]?.title, 'Memo');
      assertSameValue(knowledgeBase.search('hidden', 5), []);
    } finally {
      knowledgeBase.close();
    }
  });

  test('in a large index, terms in more than half the chunks do not make candidates but the ranking holds', () => {
    const knowledgeBase = KnowledgeBase.open(join(scratch, 'large.sqlite'));
    try {
      for (let index = 0; index < 1_200; index++) {
        const rare = index % 400 === 7 ? ' The rare word axolotl appears here.' : '';
        knowledgeBase.addText({
          path: `generated/${index}.txt`,
          title: `Note ${index}`,
          text: `Common vehicle note number ${index}.${rare}`,
        });
      }
      const results = knowledgeBase.search('vehicle axolotl', 5);
      assertSameValue(results.map((result) => result.path).sort(), [
        'generated/407.txt',
        'generated/7.txt',
        'generated/807.txt',
      ]);
      assert.ok(results.every((result) => result.score > 0));
      assert.equal(knowledgeBase.search('vehicle', 5).length, 5, 'a query of only common words still matches them');
    } finally {
      knowledgeBase.close();
    }
  });

  test('a second connection (the CLI) adds while the first (the worker) searches', async () => {
    const path = join(scratch, 'shared.sqlite');
    const worker = KnowledgeBase.open(path);
    const cli = KnowledgeBase.open(path);
    try {
      assertSameValue(worker.search('narwhal', 5), []);
      cli.addText({ path: 'notes/narwhal.md', title: 'Narwhals', text: 'Narwhals have a long tusk.' });
      assert.equal(worker.search('narwhal', 5)[0]?.title, 'Narwhals');
      cli.remove('notes/narwhal.md');
      assertSameValue(worker.search('narwhal', 5), []);
    } finally {
      cli.close();
      worker.close();
    }
  });

  test('the file is created with its folder, uses WAL, and keeps its content when reopened', async () => {
    const path = join(scratch, 'nested', 'deeper', 'kb.sqlite');
    const first = KnowledgeBase.open(path);
    first.addText({
      path: 'https://example.com/page',
      title: 'Example page',
      text: 'Quokkas live on Rottnest Island.',
    });
    assert.ok(existsSync(`${path}-wal`), 'write-ahead log in use');
    first.close();
    const reopened = KnowledgeBase.open(path);
    try {
      assert.equal(reopened.search('quokka', 5)[0]?.path, 'https://example.com/page');
      assertSameValue(reopened.statistics(), { documents: 1, chunks: 1 });
    } finally {
      reopened.close();
    }
  });
});
