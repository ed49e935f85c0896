import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, test } from '@jest/globals';
import { ToolInputError, type ToolContext } from '../../activities/tools/tool-definition';
import type { PageSummarizer, PageToSummarize } from '../../activities/tools/visit/page-summarizer';
import { extractReadableContent, sniffFormat } from '../../activities/tools/visit/readable-content';
import { parseVisitTarget } from '../../activities/tools/visit/visit-target';
import { createVisitTool } from '../../activities/tools/visit/visit-tool';

// No network here: web addresses used below are IP literals the guard refuses before connecting.

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-visit-tool-'));
const allowed = join(scratch, 'allowed');
const outside = join(scratch, 'outside');
mkdirSync(allowed);
mkdirSync(outside);
writeFileSync(join(allowed, 'notes.md'), '# Meeting notes\n\nRevenue rose 12 percent in the third quarter.\n');
writeFileSync(
  join(allowed, 'page.html'),
  '<html><head><title>Local page</title></head><body><article><h1>Local page</h1><p>A paragraph from a local HTML file about turbines.</p></article></body></html>',
);
writeFileSync(join(allowed, 'data.csv'), 'year,sales\n2024,4272145\n');
writeFileSync(join(allowed, 'image.bin'), Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x00, 0x01]));
writeFileSync(join(allowed, 'big.txt'), 'a'.repeat(5_000));
writeFileSync(join(outside, 'secret.txt'), 'the secret');
symlinkSync(join(outside, 'secret.txt'), join(allowed, 'link-to-secret.txt'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function context(): ToolContext & { heartbeats: unknown[] } {
  const heartbeats: unknown[] = [];
  return {
    signal: new AbortController().signal,
    heartbeat: (details) => heartbeats.push(details),
    workflowId: 'wf-visit',
    callId: 'call-1',
    heartbeats,
  };
}

async function inputError(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ToolInputError, `expected a ToolInputError, got ${String(error)}`);
    return error.message;
  }
  assert.fail('expected the call to fail');
}

describe('visit tool without network', () => {
  const tool = createVisitTool({ localFileDirectories: [allowed], maxBytes: 1_000 });

  test('is named visit and takes url (string or array) and an optional goal', () => {
    assert.equal(tool.name, 'visit');
    assert.deepEqual((tool.parameters as { required: string[] }).required, ['url']);
    assert.match(tool.description, /local files/);
    assert.doesNotMatch(createVisitTool().description, /local files/);
  });

  test('reads a markdown file by path and an HTML file by file:// URL, heartbeating per page', async () => {
    const run = context();
    const output = await tool.run(
      { url: [join(allowed, 'notes.md'), pathToFileURL(join(allowed, 'page.html')).href] },
      run,
    );
    const [notes, page] = output.split('\n\n=======\n\n');
    assert.equal(
      notes,
      `## Meeting notes\nURL: ${pathToFileURL(join(allowed, 'notes.md')).href}\n\n# Meeting notes\n\nRevenue rose 12 percent in the third quarter.`,
    );
    assert.match(page ?? '', /^## Local page\nURL: file:\/\/.*page\.html\n\n/);
    assert.match(page ?? '', /turbines/);
    assert.equal(run.heartbeats.length, 2);
  });

  test('reads relative paths inside the allowed directory and sniffs unknown extensions as text', async () => {
    const output = await tool.run({ url: './data.csv' }, context());
    assert.match(output, /^## data\.csv\n/);
    assert.match(output, /2024,4272145/);
  });

  test('caps files at maxBytes and says so', async () => {
    const output = await tool.run({ url: join(allowed, 'big.txt') }, context());
    assert.match(output, /Truncated: only the first 1 KB \(1,000 bytes\) were read/);
    assert.ok(output.length < 1_300);
  });

  test('refuses files outside the directories, symbolic links out of them, binary files, and files when not enabled', async () => {
    assert.match(
      await inputError(tool.run({ url: join(outside, 'secret.txt') }, context())),
      /outside the directories/,
    );
    assert.match(
      await inputError(tool.run({ url: `${allowed}/../outside/secret.txt` }, context())),
      /outside the directories/,
    );
    assert.match(
      await inputError(tool.run({ url: join(allowed, 'link-to-secret.txt') }, context())),
      /outside the directories/,
    );
    assert.match(await inputError(tool.run({ url: join(allowed, 'image.bin') }, context())), /binary file/);
    assert.match(await inputError(tool.run({ url: join(allowed, 'missing.md') }, context())), /does not exist/);
    assert.match(
      await inputError(createVisitTool().run({ url: '/etc/passwd' }, context())),
      /not enabled.*REACT_AGENT_VISIT_FILE_DIRS/,
    );
  });

  test('one bad URL does not sink the others: failures are reported inline', async () => {
    const output = await tool.run(
      { url: [join(allowed, 'notes.md'), 'http://169.254.169.254/latest/meta-data/', 'ftp://files.example/x'] },
      context(),
    );
    const sections = output.split('\n\n=======\n\n');
    assert.equal(sections.length, 3);
    assert.match(sections[0] ?? '', /Revenue rose 12 percent/);
    assert.match(
      sections[1] ?? '',
      /^could not visit http:\/\/169\.254\.169\.254\/latest\/meta-data\/: access to 169\.254\.169\.254 is blocked: .*metadata.*REACT_AGENT_VISIT_ALLOW_PRIVATE/,
    );
    assert.match(sections[2] ?? '', /^could not visit ftp:\/\/files\.example\/x: .*only http and https/);
  });

  test('refuses internal IP literals by default, before connecting', async () => {
    for (const url of ['http://127.0.0.1:9/', 'http://[::1]:9/', 'http://10.0.0.1/', 'http://[::ffff:192.168.0.1]/']) {
      assert.match(
        await inputError(createVisitTool().run({ url }, context())),
        /is blocked.*REACT_AGENT_VISIT_ALLOW_PRIVATE/,
      );
    }
  });

  test('argument problems are input errors', async () => {
    await inputError(tool.run({ url: [] }, context()));
    await inputError(tool.run({ url: [42] }, context()));
    await inputError(tool.run({}, context()));
    assert.match(await inputError(tool.run({ url: 'javascript:alert(1)' }, context())), /only http and https/);
    assert.match(await inputError(tool.run({ url: '   ' }, context())), /empty/);
  });

  test('with a goal and a summarizer, a page becomes its evidence and summary', async () => {
    const seen: PageToSummarize[] = [];
    const summarizer: PageSummarizer = {
      async summarize(page, controls) {
        seen.push(page);
        controls.heartbeat({ summarizing: page.url });
        return {
          rational: 'r',
          evidence: 'Revenue rose 12 percent in the third quarter.',
          summary: 'Revenue grew 12%.',
        };
      },
    };
    const summarizing = createVisitTool({ localFileDirectories: [allowed], summarizer });
    const output = await summarizing.run(
      { url: join(allowed, 'notes.md'), goal: 'How did revenue change?' },
      context(),
    );
    assert.equal(
      output,
      `## Meeting notes\nURL: ${pathToFileURL(join(allowed, 'notes.md')).href}\n\nGoal: How did revenue change?\n\nEvidence:\nRevenue rose 12 percent in the third quarter.\n\nSummary:\nRevenue grew 12%.`,
    );
    assert.equal(seen[0]?.goal, 'How did revenue change?');
    assert.match(seen[0]?.markdown ?? '', /Revenue rose/);
    // without a goal, the whole text
    assert.match(
      await summarizing.run({ url: join(allowed, 'notes.md') }, context()),
      /# Meeting notes\n\nRevenue rose/,
    );
    assert.equal(seen.length, 1);
  });

  test('a failing summarizer is not swallowed (Temporal retries the tool)', async () => {
    const summarizer: PageSummarizer = { summarize: async () => Promise.reject(new Error('model endpoint down')) };
    await assert.rejects(
      createVisitTool({ localFileDirectories: [allowed], summarizer }).run(
        { url: join(allowed, 'notes.md'), goal: 'g' },
        context(),
      ),
      (error: unknown) => {
        assert.ok(!(error instanceof ToolInputError));
        return /model endpoint down/.test(String(error));
      },
    );
  });

  test('a call cancelled before it starts stops with the abort reason', async () => {
    const abort = new AbortController();
    const reason = new Error('cancelled');
    abort.abort(reason);
    await assert.rejects(
      tool.run({ url: join(allowed, 'notes.md') }, { ...context(), signal: abort.signal }),
      (error: unknown) => error === reason,
    );
  });
});

describe('parseVisitTarget', () => {
  test('tells web addresses from local files', () => {
    assert.deepEqual(parseVisitTarget('/srv/docs/a.md'), { kind: 'file', reference: '/srv/docs/a.md' });
    assert.deepEqual(parseVisitTarget('./a.md'), { kind: 'file', reference: './a.md' });
    assert.deepEqual(parseVisitTarget('file:///srv/a.md'), { kind: 'file', reference: 'file:///srv/a.md' });
    const web = (entry: string) => {
      const target = parseVisitTarget(entry);
      assert.equal(target.kind, 'web');
      return target.kind === 'web' ? target.url.href : '';
    };
    assert.equal(web('https://example.com/a?b=1'), 'https://example.com/a?b=1');
    assert.equal(web('example.com/news'), 'https://example.com/news');
    assert.equal(web('localhost:8080/x'), 'https://localhost:8080/x');
    assert.equal(web(' <http://example.com/> '), 'http://example.com/');
    for (const entry of ['mailto:a@example.com', 'data:text/html,hi', 'ftp://example.com/'])
      assert.throws(() => parseVisitTarget(entry), ToolInputError);
  });
});

describe('readable content', () => {
  test('sniffs PDFs, HTML, JSON, text and binary', () => {
    assert.equal(sniffFormat(Buffer.from('%PDF-1.7\n...')), 'pdf');
    assert.equal(sniffFormat(Buffer.from('  <!DOCTYPE html><html></html>')), 'html');
    assert.equal(sniffFormat(Buffer.from('{"a": 1}')), 'json');
    assert.equal(sniffFormat(Buffer.from('plain words, é')), 'text');
    assert.equal(sniffFormat(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00])), undefined);
    assert.equal(sniffFormat(Buffer.from([0xff, 0xfe, 0xfd])), undefined);
  });

  test('decodes the declared or meta charset, and pretty-prints JSON', async () => {
    const latin = Buffer.from(
      '<html><head><meta charset="windows-1252"><title>Caf\xe9</title></head><body><p>Cr\xe8me br\xfbl\xe9e</p></body></html>',
      'latin1',
    );
    const page = await extractReadableContent(latin, { format: 'html', url: 'https://example.com/', truncated: false });
    assert.equal(page.title, 'Café');
    assert.match(page.markdown, /Crème brûlée/);
    const json = await extractReadableContent(Buffer.from('{"sales":{"2024":4272145}}'), {
      format: 'json',
      url: 'https://api.example/v1/sales.json',
      truncated: false,
    });
    assert.deepEqual(json, {
      title: 'sales.json',
      markdown: '```json\n{\n  "sales": {\n    "2024": 4272145\n  }\n}\n```',
    });
  });

  test('a cut PDF is an error, not garbage', async () => {
    await assert.rejects(
      extractReadableContent(Buffer.from('%PDF-1.7'), {
        format: 'pdf',
        url: 'https://example.com/a.pdf',
        truncated: true,
      }),
      /larger than the byte limit/,
    );
  });
});
