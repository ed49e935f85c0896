import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { characterEstimateCounter } from '../../activities/token-counter';
import { createParseFileTool } from '../../activities/tools/parse-file/parse-file-tool';
import { createToolActivity } from '../../activities/tools/tool-activity';
import { ToolInputError } from '../../activities/tools/tool-definition';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import { validateArguments } from '../../activities/tools/validate-arguments';
import type { ToolActivityOutput } from '../../src/core/activity-contracts';
import { makeDocx, makePdf, toolContext } from '../fakes/documents';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-parse-file-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

// <scratch>/workspace       the workspace: notes.md, reports/ev.pdf, reports/ev.docx, big.txt
// <scratch>/second          a second workspace: extra.txt
// <scratch>/outside         never readable: secret.txt
const workspace = join(scratch, 'workspace');
const second = join(scratch, 'second');
const outside = join(scratch, 'outside');
for (const folder of [workspace, join(workspace, 'reports'), second, outside]) mkdirSync(folder, { recursive: true });
writeFileSync(join(workspace, 'notes.md'), '# EV notes\n\nBYD sold 4,272,145 vehicles in 2024.\n');
writeFileSync(join(workspace, 'big.txt'), 'y'.repeat(40_960));
writeFileSync(join(second, 'extra.txt'), 'Extra notes from the second workspace.');
writeFileSync(join(outside, 'secret.txt'), 'TOP SECRET outside the workspace');
symlinkSync(join(outside, 'secret.txt'), join(workspace, 'escape-link.txt'));
symlinkSync(outside, join(workspace, 'escape-folder'));
symlinkSync(join(workspace, 'notes.md'), join(workspace, 'inside-link.md'));

const parseFile = createParseFileTool({ workspaceDirectories: [workspace, second], maxBytes: 32 * 1024 });
const context = toolContext();

async function prepareDocuments(): Promise<void> {
  writeFileSync(
    join(workspace, 'reports', 'ev.pdf'),
    await makePdf([['Tesla delivered 1,789,226 vehicles in 2024.']], 'Tesla 2024'),
  );
  writeFileSync(
    join(workspace, 'reports', 'ev.docx'),
    await makeDocx('BYD overseas', ['Overseas sales were about 417,000.']),
  );
}

async function assertRefused(files: unknown, ...patterns: RegExp[]): Promise<void> {
  await assert.rejects(parseFile.run({ files }, context), (error: unknown) => {
    assert.ok(error instanceof ToolInputError, `expected a ToolInputError, got ${String(error)}`);
    for (const pattern of patterns) assert.match(error.message, pattern);
    assert.doesNotMatch(error.message, /TOP SECRET/);
    return true;
  });
}

describe('parse_file tool', () => {
  test('is a valid tool whose schema takes a list of files or one file', () => {
    const registry = new ToolRegistry([parseFile]);
    assert.deepEqual(registry.names(), ['parse_file']);
    assert.deepEqual(validateArguments(parseFile.parameters, { files: ['a.pdf'] }), []);
    assert.deepEqual(validateArguments(parseFile.parameters, { files: 'a.pdf' }), []);
    assert.deepEqual(validateArguments(parseFile.parameters, {}), ['missing required argument "files"']);
  });

  test('reads files inside the workspace: relative, absolute, one string, PDF and docx, each under a header', async () => {
    await prepareDocuments();
    const output = await parseFile.run(
      { files: ['notes.md', join(workspace, 'reports', 'ev.pdf'), 'reports/ev.docx', join(second, 'extra.txt')] },
      context,
    );
    assert.match(
      output,
      /^=== File 1 of 4: notes\.md \(markdown, "EV notes", \d+ characters\) ===\n# EV notes\n\nBYD sold 4,272,145 vehicles in 2024\./,
    );
    assert.match(
      output,
      /=== File 2 of 4: .*reports\/ev\.pdf \(pdf, "Tesla 2024", 1 pages, \d+ characters\) ===\nTesla delivered 1,789,226 vehicles in 2024\./,
    );
    assert.match(
      output,
      /=== File 3 of 4: reports\/ev\.docx \(docx, "BYD overseas", \d+ characters\) ===\n[\s\S]*Overseas sales were about 417,000\./,
    );
    assert.match(
      output,
      /=== File 4 of 4: .*extra\.txt \(text, \d+ characters\) ===\nExtra notes from the second workspace\./,
    );
    const single = await parseFile.run({ files: 'notes.md' }, context);
    assert.match(single, /^=== File: notes\.md \(markdown/);
    assert.ok(context.heartbeats.length >= 5, 'heartbeats once per file');
  });

  test('a symbolic link that stays inside the workspace is read', async () => {
    assert.match(await parseFile.run({ files: ['inside-link.md'] }, context), /BYD sold 4,272,145/);
  });

  test('path traversal out of the workspace is refused', async () => {
    await assertRefused(
      ['../../etc/passwd'],
      /Refused "\.\.\/\.\.\/etc\/passwd": it is outside the workspace/,
      /pass a path relative to it/,
    );
    await assertRefused(['reports/../../outside/secret.txt'], /outside the workspace/);
    await assertRefused('..', /outside the workspace/);
  });

  test('an absolute path outside every workspace is refused', async () => {
    await assertRefused([join(outside, 'secret.txt')], /outside the workspace/);
    await assertRefused(['/etc/passwd'], /outside the workspace/);
  });

  test('symbolic links leading outside are refused, whether the file or a folder on the way is the link', async () => {
    await assertRefused(
      ['escape-link.txt'],
      /Refused "escape-link\.txt": it is a symbolic link .* leads outside the workspace/,
    );
    await assertRefused(['escape-folder/secret.txt'], /symbolic link .* outside the workspace/);
    await assertRefused([join(workspace, 'escape-link.txt')], /symbolic link/);
  });

  test('a missing file lists what is there; a folder lists its files; an empty path says how to pass one', async () => {
    await assertRefused(
      ['report-2024.pdf'],
      /File not found: "report-2024\.pdf"\. Files in the workspace: .*notes\.md.*reports\//,
    );
    await assertRefused(
      ['reports/missing.pdf'],
      /File not found.*Files in reports: reports\/ev\.docx, reports\/ev\.pdf/,
    );
    await assertRefused(['reports'], /"reports" is a folder; pass the files inside it\. Files in reports: /);
    await assertRefused([' '], /"files" is empty/);
    await assertRefused([42], /"files" must be a file path or a list of file paths/);
    await assertRefused(['~/notes.md'], /"~" is not expanded/);
  });

  test('a file that cannot be read is reported under its header while the others are returned', async () => {
    const output = await parseFile.run({ files: ['notes.md', 'big.txt', '../../etc/passwd'] }, context);
    assert.match(output, /=== File 1 of 3: notes\.md \(markdown/);
    assert.match(output, /=== File 2 of 3: big\.txt \(not read\) ===\nError: big\.txt is 40 KB, over the 32 KB limit/);
    assert.match(output, /=== File 3 of 3: \.\.\/\.\.\/etc\/passwd \(not read\) ===\nError: Refused/);
  });

  test('unsupported types get the advice of the extractor', async () => {
    writeFileSync(join(workspace, 'table.xlsx'), 'PK\u0003\u0004');
    await assertRefused(['table.xlsx'], /spreadsheets are not supported; export the sheet as CSV/);
  });

  test('too many files in one call are refused', async () => {
    const tool = createParseFileTool({ workspaceDirectories: [workspace], maxFilesPerCall: 2 });
    await assert.rejects(
      tool.run({ files: ['a', 'b', 'c'] }, context),
      /Too many files in one call \(3\); read at most 2/,
    );
  });

  test('as an activity: a refused path becomes an error observation for the model, a good one a normal observation', async () => {
    const store = new MemoryTranscriptStore();
    const activity = createToolActivity(parseFile, { store, tokenCounter: characterEstimateCounter });
    const environment = new MockActivityEnvironment(
      { heartbeatTimeoutMs: 30_000 },
      { logger: new DefaultLogger('ERROR', () => undefined) },
    );
    const input = (files: unknown) => ({
      workflowId: 'wf-parse',
      callId: 'call-1-1',
      arguments: { files },
      maxObservationCharacters: 10_000,
    });
    const refused = (await environment.run(activity, input('../../etc/passwd'))) as ToolActivityOutput;
    assert.equal(refused.isError, true);
    assert.match(
      await store.getText(refused.observation.ref),
      /^Error: Refused "\.\.\/\.\.\/etc\/passwd": it is outside the workspace/,
    );
    const read = (await environment.run(activity, input(['notes.md']))) as ToolActivityOutput;
    assert.equal(read.isError, false);
    assert.match(await store.getText(read.observation.ref), /BYD sold 4,272,145 vehicles in 2024\./);
  });
});
