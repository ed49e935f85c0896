import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, test } from '@jest/globals';

const root = resolve(__dirname, '../..');
const dataDirectory = mkdtempSync(join(tmpdir(), 'react-agent-kb-cli-test-'));
afterAll(() => rmSync(dataDirectory, { recursive: true, force: true }));

interface CliOutcome {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `node bin/react-agent.js kb …` in its own process with the data folder in a temp dir. */
function kb(...argumentsList: string[]): Promise<CliOutcome> {
  const variables: NodeJS.ProcessEnv = { ...process.env, REACT_AGENT_DATA_DIR: dataDirectory };
  delete variables.REACT_AGENT_KNOWLEDGE_BASE;
  const child = spawn(process.execPath, [join(root, 'bin/react-agent.js'), 'kb', ...argumentsList], {
    cwd: root,
    env: variables,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr.on('data', (data: Buffer) => (stderr += data.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), 60_000);
  return new Promise((resolveOutcome) =>
    child.on('exit', (code) => {
      clearTimeout(timer);
      resolveOutcome({ code, stdout, stderr });
    }),
  );
}

test('kb add, list, search and remove, run as processes on the sample corpus', async () => {
  const empty = await kb('list');
  assert.equal(empty.code, 0, empty.stderr);
  assert.match(empty.stdout, /is empty\. Add files with: react-agent kb add/);
  assert.ok(
    existsSync(join(dataDirectory, 'knowledge-base.sqlite')),
    'the knowledge base is created in REACT_AGENT_DATA_DIR',
  );

  const added = await kb('add', 'samples/knowledge-base');
  assert.equal(added.code, 0, added.stderr);
  assert.match(added.stdout, /^added {5}samples\/knowledge-base\/byd-2024-sales\.md \(\d+ chunks?\)$/m);
  assert.match(
    added.stdout,
    /5 added, 0 updated, 0 unchanged, 0 failed; \d+ chunks written\. The knowledge base .* holds 5 documents/,
  );

  const again = await kb('add', 'samples/knowledge-base/tesla-2024-deliveries.md');
  assert.match(again.stdout, /^unchanged samples\/knowledge-base\/tesla-2024-deliveries\.md/m);

  const listed = await kb('list');
  assert.equal(listed.code, 0, listed.stderr);
  assert.match(listed.stdout, /^ID\tCHUNKS\tFORMAT\tTITLE\tPATH$/m);
  assert.match(
    listed.stdout,
    /^\d+\t\d+\tmarkdown\tTesla deliveries in 2024\tsamples\/knowledge-base\/tesla-2024-deliveries\.md$/m,
  );
  assert.match(listed.stdout, /5 documents, \d+ chunks/);

  const found = await kb('search', 'how many vehicles did Tesla deliver in 2024?', '--limit', '2');
  assert.equal(found.code, 0, found.stderr);
  assert.match(
    found.stdout,
    /^## Search: "how many vehicles did Tesla deliver in 2024\?" \(local knowledge base, 2 results\)\n\n1\. \*\*Tesla deliveries in 2024\*\* — samples\/knowledge-base\/tesla-2024-deliveries\.md/,
  );

  const hostile = await kb('search', '"unbalanced AND NEAR( title:* -');
  assert.equal(hostile.code, 0, hostile.stderr);

  const id = /^(\d+)\t\d+\tmarkdown\tTesla deliveries in 2024/m.exec(listed.stdout)?.[1];
  assert.ok(id);
  const removedById = await kb('remove', id);
  assert.equal(removedById.code, 0, removedById.stderr);
  assert.match(
    removedById.stdout,
    /removed {3}\d+\tsamples\/knowledge-base\/tesla-2024-deliveries\.md\n\n1 document removed\./,
  );
  const removedByPath = await kb('remove', 'samples/knowledge-base/byd-2024-sales.md');
  assert.match(removedByPath.stdout, /1 document removed\./);
  assert.match((await kb('list')).stdout, /3 documents/);
  const nothing = await kb('remove', 'samples/knowledge-base/byd-2024-sales.md');
  assert.equal(nothing.code, 1);
  assert.match(nothing.stderr, /Nothing in the knowledge base matches/);
});

test('kb add with no arguments prints the usage and exits 2; --help prints it and exits 0', async () => {
  const bare = await kb('add');
  assert.equal(bare.code, 2);
  assert.match(
    bare.stderr,
    /kb add needs files or folders to add\.\n\nUsage: react-agent kb <add\|list\|remove\|search>/,
  );
  const help = await kb('--help');
  assert.equal(help.code, 0);
  assert.match(help.stdout, /react-agent kb search "QUERY" \[--limit N\]/);
  const unknown = await kb('frobnicate');
  assert.equal(unknown.code, 2);
});

test('kb add reports files it cannot read and exits 1 when nothing could be added', async () => {
  const sheet = join(dataDirectory, 'table.xlsx');
  writeFileSync(sheet, 'PK\u0003\u0004');
  const outcome = await kb('add', sheet, join(dataDirectory, 'missing.md'));
  assert.equal(outcome.code, 1);
  assert.match(outcome.stdout, /^failed {3}.*table\.xlsx: .*export the sheet as CSV/m);
  assert.match(outcome.stdout, /^failed {3}.*missing\.md: no such file or folder/m);
});
