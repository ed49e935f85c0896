import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { test } from '@jest/globals';
import { PROJECT_ROOT } from './support/source-imports';

/**
 * The documentation points at things that exist: every relative link in README.md and docs/*.md
 * reaches a file or folder of the repository (and a `#fragment` a heading of the page it names),
 * and every repository path a comment or a README names — `src/core/run-state.ts` — is there.
 * Files move; this is what tells the docs and comments they did.
 */
const root = PROJECT_ROOT;
const THIS_FILE = 'test/unit/docs-links.test.ts';

/** README.md and every markdown page under docs/. */
function documentationPages(): string[] {
  const docs = join(root, 'docs');
  return [
    join(root, 'README.md'),
    ...readdirSync(docs)
      .filter((name) => name.endsWith('.md'))
      .map((name) => join(docs, name)),
  ];
}

/** The text of a markdown page without its fenced code blocks and inline code spans. */
function proseOf(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation other than `-` and `_` dropped, spaces → `-`. */
function headingAnchor(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

/** The anchors of a markdown page's headings, numbered as GitHub numbers repeats (`x`, `x-1`). */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const withoutCode = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const match of withoutCode.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = headingAnchor(match[1] as string);
    let anchor = base;
    for (let repeat = 1; anchors.has(anchor); repeat++) anchor = `${base}-${repeat}`;
    anchors.add(anchor);
  }
  return anchors;
}

/** The relative targets of a page's links and images: `[text](target)`, without URLs and mail. */
function relativeLinks(markdown: string): string[] {
  const targets: string[] = [];
  for (const match of proseOf(markdown).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    const target = match[1] as string;
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // https:, mailto:
    targets.push(target);
  }
  return targets;
}

/** Problems with one page's links: a missing file, or a fragment no heading of the target has. */
function linkProblems(page: string): string[] {
  const problems: string[] = [];
  const where = relative(root, page);
  for (const target of relativeLinks(readFileSync(page, 'utf8'))) {
    const [pathPart, fragment] = target.split('#', 2) as [string, string | undefined];
    const file = pathPart === '' ? page : resolve(dirname(page), decodeURIComponent(pathPart));
    if (!existsSync(file)) {
      problems.push(`${where}: link to ${target}: no such file`);
      continue;
    }
    if (fragment !== undefined && file.endsWith('.md') && statSync(file).isFile()) {
      if (!anchorsOf(readFileSync(file, 'utf8')).has(fragment))
        problems.push(`${where}: link to ${target}: ${relative(root, file)} has no heading #${fragment}`);
    }
  }
  return problems;
}

/** The folders of the repository a path in a comment may start with (not dist/, which is built). */
const TOP_FOLDERS = [
  'activities',
  'benchmarks',
  'bin',
  'docs',
  'examples',
  'ops',
  'samples',
  'schemas',
  'scripts',
  'src',
  'test',
  'worker',
  'workflows',
];
const NAMED_PATH = new RegExp(
  `(?<![\\w@./-])((?:${TOP_FOLDERS.join('|')})/[\\w./-]*\\.(?:ts|mts|mjs|js|md|json|yml|yaml|py|go))(?![\\w/])`,
  'g',
);

/** Files git tracks that may name paths: sources, scripts and documents (not recorded fixtures). */
function trackedTextFiles(): string[] {
  return execFileSync('git', ['ls-files'], { cwd: root, encoding: 'utf8' })
    .split('\n')
    .filter((file) => /\.(ts|mts|mjs|js|md|yml|yaml|py|go)$/.test(file) || file === '.ci/run')
    .filter(
      (file) => !file.startsWith('test/fixtures/') && !file.startsWith('schemas/') && existsSync(join(root, file)),
    );
}

/** Repository paths named in a file's comments (in a markdown file: anywhere) that do not exist. */
function namedPathProblems(file: string): string[] {
  const problems: string[] = [];
  const lines = readFileSync(join(root, file), 'utf8').split('\n');
  lines.forEach((line, index) => {
    const comment = file.endsWith('.md') ? line : /(?:\/\/|\/\*|^\s*\*|^\s*#)(.*)$/.exec(line)?.[1];
    if (comment === undefined) return;
    for (const match of comment.matchAll(NAMED_PATH)) {
      const path = (match[1] as string).replace(/[.]+$/, '');
      if (!existsSync(join(root, path))) problems.push(`${file}:${index + 1}: names ${path}, which does not exist`);
    }
  });
  return problems;
}

test('every relative link in README.md and docs/*.md reaches a file, and its #fragment a heading', () => {
  assert.deepEqual(documentationPages().flatMap(linkProblems), []);
});

test('README.md and docs/README.md link every page under docs/', () => {
  const pages = readdirSync(join(root, 'docs')).filter((name) => name.endsWith('.md') && name !== 'README.md');
  const readme = relativeLinks(readFileSync(join(root, 'README.md'), 'utf8')).map((target) => target.split('#')[0]);
  const index = relativeLinks(readFileSync(join(root, 'docs', 'README.md'), 'utf8')).map(
    (target) => target.split('#')[0],
  );
  assert.deepEqual([...pages.filter((page) => !readme.includes(`docs/${page}`))], [], 'pages the README does not link');
  assert.deepEqual([...pages.filter((page) => !index.includes(page))], [], 'pages docs/README.md does not link');
});

test('every repository path a comment or a document names exists', () => {
  const others = trackedTextFiles().filter((file) => file !== THIS_FILE); // its own examples name made-up paths
  assert.deepEqual(others.flatMap(namedPathProblems), []);
});

test('no file cites a design document outside the repository', () => {
  const citations = trackedTextFiles().filter(
    (file) => file !== THIS_FILE && /\bDESIGN(\.md| decision)/.test(readFileSync(join(root, file), 'utf8')),
  );
  assert.deepEqual(citations, []);
});

test('the checks see what they look for', () => {
  assert.equal(
    headingAnchor('The production-shaped stack: docker-compose.yml'),
    'the-production-shaped-stack-docker-composeyml',
  );
  assert.equal(headingAnchor("Research tools' variables"), 'research-tools-variables');
  assert.deepEqual(relativeLinks('[a](docs/x.md#y) [b](https://e.org) `[c](no.md)` ![i](images/p.png)'), [
    'docs/x.md#y',
    'images/p.png',
  ]);
  assert.deepEqual(
    [...'see src/core/run-state.ts and `workflows/patches.ts`.'.matchAll(NAMED_PATH)].map(
      (match) => match[1] as string,
    ),
    ['src/core/run-state.ts', 'workflows/patches.ts'],
  );
});
