// Runs alone: asserts fetch timeouts fire within 3 s
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { createGzip, gzipSync } from 'node:zlib';
import { PDFDocument, StandardFonts } from 'pdf-lib';
import { ToolInputError, type ToolContext } from '../../activities/tools/tool-definition';
import { createVisitTool, type VisitToolOptions } from '../../activities/tools/visit/visit-tool';

/**
 * The visit tool against a local HTTP server on 127.0.0.1 serving real-looking pages. The
 * server is loopback, so most tests allow it through `allowedHosts: ['127.0.0.1:<its port>']`
 * (a bare host would allow ports 80 and 443 only), which lets the SSRF guard still judge every
 * other host a redirect points to.
 */

const ARTICLE_SENTENCES = [
  'Shipments of electric vehicles rose sharply in 2024 as battery prices fell to record lows.',
  'BYD delivered 4,272,145 vehicles over the year, overtaking its rivals in total volume.',
  'Tesla reported 1,789,226 deliveries, its first annual decline in more than a decade.',
  'Analysts expect price competition in China to intensify throughout the coming year.',
];

function articlePage(title: string): string {
  const paragraphs = ARTICLE_SENTENCES.map(
    (sentence) =>
      `<p>${sentence} ${'Industry observers noted the shift in market share across several regions and segments. '.repeat(3)}</p>`,
  ).join('\n');
  return `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>${title} | The Daily Ledger</title>
  <script>window.analytics = { track: function () { console.log('TRACKING-SCRIPT-CONTENT'); } };</script>
  <style>.cookie-banner { position: fixed; }</style>
</head>
<body>
  <div class="cookie-banner" id="cookie-consent">We use cookies to improve your experience. ACCEPT-ALL-COOKIES</div>
  <header class="site-header">
    <a class="logo" href="/">The Daily Ledger</a>
    <nav class="main-navigation"><ul>
      <li><a href="/world">World</a></li><li><a href="/business">Business</a></li>
      <li><a href="/technology">Technology</a></li><li><a href="/opinion">NAV-OPINION-LINK</a></li>
    </ul></nav>
  </header>
  <main>
    <article class="story">
      <h1>${title}</h1>
      <p class="byline">By Jane Reporter, Motoring Correspondent</p>
      ${paragraphs}
      <h2>What comes next</h2>
      <ul><li>New models in Europe</li><li>Cheaper batteries</li></ul>
    </article>
    <aside class="sidebar related-stories">
      <h3>Most read</h3>
      <ul><li><a href="/a">SIDEBAR-MOST-READ celebrity gossip</a></li><li><a href="/b">Ten recipes for summer</a></li></ul>
      <div class="advertisement">ADVERTISEMENT-BLOCK buy now</div>
    </aside>
  </main>
  <footer class="site-footer">
    <p>FOOTER-COPYRIGHT © 2025 The Daily Ledger Media Group. All rights reserved.</p>
    <a href="/newsletter">Subscribe to our newsletter</a>
  </footer>
</body>
</html>`;
}

const HUGE_BYTES = 20 * 1024 * 1024;
/** 50 MB of text that compresses to about 50 KB. */
const GZIP_BOMB = gzipSync(Buffer.alloc(50 * 1024 * 1024, 'all work and no play '));

async function makePdf(): Promise<Uint8Array> {
  const document = await PDFDocument.create();
  document.setTitle('Annual Report 2024');
  const font = await document.embedFont(StandardFonts.Helvetica);
  document.addPage().drawText('Revenue rose 12 percent to 4.2 billion euros.', { x: 50, y: 700, font, size: 12 });
  document.addPage().drawText('Outlook: the board expects further growth in 2025.', { x: 50, y: 700, font, size: 12 });
  return document.save();
}

interface TestServer {
  server: Server;
  port: number;
  origin: string;
  /** Bytes the huge page had written when its connection closed. */
  hugeBytesWritten: Promise<number>;
}

async function startServer(pdf: Uint8Array): Promise<TestServer> {
  let reportHuge: (bytes: number) => void = () => undefined;
  const hugeBytesWritten = new Promise<number>((resolve) => (reportHuge = resolve));
  const handle = (request: IncomingMessage, response: ServerResponse, origin: string) => {
    const path = new URL(request.url ?? '/', origin).pathname;
    const redirect = (location: string, status = 302) => {
      response.writeHead(status, { location });
      response.end();
    };
    const chain = /^\/chain\/(\d+)$/.exec(path);
    if (chain) {
      const step = Number(chain[1]);
      return step >= 3 ? redirect('/news/ev-sales', 301) : redirect(`/chain/${step + 1}`, step % 2 ? 307 : 302);
    }
    const loop = /^\/loop\/(\d+)$/.exec(path);
    if (loop) return redirect(`${origin}/loop/${Number(loop[1]) + 1}`);
    switch (path) {
      case '/':
      case '/news/ev-sales':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        return response.end(articlePage('Electric vehicle sales surge as prices fall'));
      case '/news/gzip':
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-encoding': 'gzip' });
        return response.end(gzipSync(articlePage('Compressed story about batteries')));
      case '/gzip-slow': {
        response.writeHead(200, { 'content-type': 'text/html', 'content-encoding': 'gzip' });
        const gzip = createGzip();
        gzip.pipe(response);
        gzip.write('<html><head><title>Stalled</title></head><body><p>The first part arrives');
        return void gzip.flush();
      }
      case '/gzip-bomb':
        response.writeHead(200, { 'content-type': 'text/plain', 'content-encoding': 'gzip' });
        return response.end(GZIP_BOMB);
      case '/to-localhost':
        return redirect(`http://localhost:${(request.socket.localPort ?? 0).toString()}/news/ev-sales`);
      case '/to-loopback-ip':
        return redirect(`http://127.0.0.2:${(request.socket.localPort ?? 0).toString()}/news/ev-sales`);
      case '/to-metadata':
        return redirect('http://169.254.169.254/latest/meta-data/iam/security-credentials/');
      case '/to-ftp':
        return redirect('ftp://files.example/secret');
      case '/huge': {
        response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
        const paragraph = Buffer.from(
          `<p>${'Huge page filler sentence about nothing in particular. '.repeat(18)}</p>\n`,
        );
        let written = 0;
        response.write('<html><head><title>Huge page</title></head><body><article><h1>Huge page</h1>');
        const pump = () => {
          while (written < HUGE_BYTES && !response.destroyed) {
            written += paragraph.length;
            if (!response.write(paragraph)) return void response.once('drain', pump);
          }
          if (!response.destroyed) response.end('</article></body></html>');
        };
        response.once('close', () => reportHuge(written));
        return pump();
      }
      case '/image.png':
        response.writeHead(200, { 'content-type': 'image/png' });
        return response.end(Buffer.alloc(200_000, 0x89));
      case '/slow':
        response.writeHead(200, { 'content-type': 'text/html' });
        response.write('<html><head><title>Slow</title></head><body><p>The first part arrives');
        return void setTimeout(() => response.destroyed || response.end('</p></body></html>'), 10_000).unref();
      case '/slow-headers':
        return void setTimeout(() => response.destroyed || response.end('late'), 10_000).unref();
      case '/report.pdf':
        response.writeHead(200, { 'content-type': 'application/pdf' });
        return response.end(Buffer.from(pdf));
      case '/api/sales.json':
        response.writeHead(200, { 'content-type': 'application/json' });
        return response.end(
          JSON.stringify({
            company: 'BYD',
            year: 2024,
            deliveries: 4272145,
            segments: { battery: 1764992, hybrid: 2485378 },
          }),
        );
      case '/notes.txt':
        response.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' });
        return response.end('Plain notes: deliveries were counted at the end of December.');
      default:
        response.writeHead(404, { 'content-type': 'text/html' });
        return response.end('<h1>Not found</h1>');
    }
  };
  const server = createServer((request, response) =>
    handle(request, response, `http://127.0.0.1:${(server.address() as AddressInfo).port}`),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return { server, port, origin: `http://127.0.0.1:${port}`, hugeBytesWritten };
}

function context(signal = new AbortController().signal): ToolContext & { heartbeats: unknown[] } {
  const heartbeats: unknown[] = [];
  return {
    signal,
    heartbeat: (details) => heartbeats.push(details),
    workflowId: 'wf-visit',
    callId: 'call-1',
    heartbeats,
  };
}

async function failure(promise: Promise<string>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ToolInputError, `expected an observation (ToolInputError), got ${String(error)}`);
    return error.message;
  }
  assert.fail('expected the visit to fail');
}

describe('visit tool against a local HTTP server', () => {
  let site: TestServer;
  const loopbackAllowed = (options: VisitToolOptions = {}) =>
    createVisitTool({ allowedHosts: [`127.0.0.1:${site.port}`], ...options });

  beforeAll(async () => {
    site = await startServer(await makePdf());
  });
  afterAll(async () => {
    site.server.closeAllConnections();
    await new Promise((resolve) => site.server.close(resolve));
  });

  test('a news article becomes readable markdown without the boilerplate', async () => {
    const run = context();
    const output = await loopbackAllowed().run({ url: `${site.origin}/news/ev-sales` }, run);
    assert.match(
      output,
      new RegExp(`^## Electric vehicle sales surge as prices fall.*\\nURL: ${site.origin}/news/ev-sales\\n\\n`),
    );
    for (const sentence of ARTICLE_SENTENCES) assert.ok(output.includes(sentence), `missing: ${sentence}`);
    assert.match(output, /## What comes next/);
    assert.match(output, /^-\s+New models in Europe$/m);
    for (const boilerplate of [
      'TRACKING-SCRIPT-CONTENT',
      'ACCEPT-ALL-COOKIES',
      'NAV-OPINION-LINK',
      'SIDEBAR-MOST-READ',
      'ADVERTISEMENT-BLOCK',
      'FOOTER-COPYRIGHT',
      '<p>',
      'cookie-banner',
    ]) {
      assert.ok(!output.includes(boilerplate), `boilerplate left in: ${boilerplate}`);
    }
    assert.ok(run.heartbeats.length >= 1);
  });

  test('gzip-encoded pages are decompressed', async () => {
    const output = await loopbackAllowed().run({ url: `${site.origin}/news/gzip` }, context());
    assert.match(output, /^## Compressed story about batteries/);
    assert.ok(output.includes(ARTICLE_SENTENCES[1] as string));
  });

  test('a redirect chain is followed and the final address reported', async () => {
    const output = await loopbackAllowed().run({ url: `${site.origin}/chain/0` }, context());
    assert.match(output, new RegExp(`\\nURL: ${site.origin}/news/ev-sales\\n`));
    assert.ok(output.includes(ARTICLE_SENTENCES[0] as string));
  });

  test('too many redirects stop the visit', async () => {
    const message = await failure(
      loopbackAllowed({ maxRedirects: 3 }).run({ url: `${site.origin}/loop/0` }, context()),
    );
    assert.match(message, new RegExp(`^could not visit ${site.origin}/loop/0: too many redirects \\(more than 3\\)`));
  });

  test('a redirect from an allowed host to another loopback name or IP, or to the metadata address, is refused', async () => {
    const tool = loopbackAllowed();
    const toLocalhost = await failure(tool.run({ url: `${site.origin}/to-localhost` }, context()));
    assert.match(
      toLocalhost,
      new RegExp(
        `it redirected to http://localhost:${site.port}/news/ev-sales, and access to localhost is blocked: it resolves to (127\\.0\\.0\\.1|::1), a loopback address`,
      ),
    );
    assert.match(toLocalhost, /REACT_AGENT_VISIT_ALLOW_PRIVATE/);
    assert.match(
      await failure(tool.run({ url: `${site.origin}/to-loopback-ip` }, context())),
      /redirected to http:\/\/127\.0\.0\.2:\d+\/news\/ev-sales, and access to 127\.0\.0\.2 is blocked: it is 127\.0\.0\.2, a loopback address/,
    );
    assert.match(
      await failure(tool.run({ url: `${site.origin}/to-metadata` }, context())),
      /redirected to http:\/\/169\.254\.169\.254\/latest\/meta-data\/iam\/security-credentials\/, and access to 169\.254\.169\.254 is blocked: .*link-local address \(the cloud metadata service\)/,
    );
    assert.match(
      await failure(tool.run({ url: `${site.origin}/to-ftp` }, context())),
      /only http and https addresses can be visited, not ftp/,
    );
    // with private networks allowed, the same redirect is followed
    const followed = await createVisitTool({ allowPrivateNetworks: true }).run(
      { url: `${site.origin}/to-localhost` },
      context(),
    );
    assert.match(followed, new RegExp(`\\nURL: http://localhost:${site.port}/news/ev-sales\\n`));
  });

  test('with default options, the loopback server itself is refused with the guard message', async () => {
    const message = await failure(createVisitTool().run({ url: `http://127.0.0.1:${site.port}/` }, context()));
    assert.equal(
      message,
      `could not visit http://127.0.0.1:${site.port}/: access to 127.0.0.1 is blocked: it is 127.0.0.1, a loopback address. ` +
        'Internal, loopback and link-local destinations are blocked to protect internal services; ' +
        'an operator can allow them with REACT_AGENT_VISIT_ALLOW_PRIVATE=true or allow this host with REACT_AGENT_VISIT_ALLOWED_HOSTS.',
    );
    assert.match(
      await failure(createVisitTool().run({ url: `http://localhost:${site.port}/` }, context())),
      /access to localhost is blocked/,
    );
  });

  test('a 20 MB page is capped at maxBytes, noted, and not downloaded whole', async () => {
    const heapBefore = process.memoryUsage().heapUsed;
    const output = await loopbackAllowed({ maxBytes: 2 * 1024 * 1024 }).run({ url: `${site.origin}/huge` }, context());
    const heapGrowth = process.memoryUsage().heapUsed - heapBefore;
    assert.match(output, /^## Huge page\n/);
    assert.match(
      output,
      /\[Truncated: only the first 2 MB \(2,097,152 bytes\) were read; the rest was not downloaded\.\]$/,
    );
    assert.ok(output.length < 2.2 * 1024 * 1024, `output is ${output.length} characters`);
    const written = await site.hugeBytesWritten;
    assert.ok(written < HUGE_BYTES / 2, `the server wrote ${written} bytes before the client hung up`);
    assert.ok(heapGrowth < 200 * 1024 * 1024, `heap grew by ${heapGrowth} bytes`);
  });

  test('a compressed body is capped after decompression (a gzip bomb stops at maxBytes)', async () => {
    const output = await loopbackAllowed({ maxBytes: 1024 * 1024 }).run({ url: `${site.origin}/gzip-bomb` }, context());
    assert.match(output, /^## gzip-bomb\n/);
    assert.match(output, /Truncated: only the first 1 MB \(1,048,576 bytes\) were read/);
    assert.ok(output.length < 1.1 * 1024 * 1024);
  });

  test('binary content is refused by its content type', async () => {
    const message = await failure(loopbackAllowed().run({ url: `${site.origin}/image.png` }, context()));
    assert.match(
      message,
      /content type image\/png cannot be read as text \(readable types: text\/html, .*application\/pdf\)/,
    );
  });

  test('a slow page times out (body or headers), and the others in the call still arrive', async () => {
    const tool = loopbackAllowed({ timeoutMs: 300 });
    const started = Date.now();
    const output = await tool.run(
      {
        url: [
          `${site.origin}/slow`,
          `${site.origin}/slow-headers`,
          `${site.origin}/gzip-slow`,
          `${site.origin}/notes.txt`,
        ],
      },
      context(),
    );
    assert.ok(Date.now() - started < 3_000, 'the timeouts fired');
    const sections = output.split('\n\n=======\n\n');
    assert.equal(sections[0], `could not visit ${site.origin}/slow: timed out after 0.3 s.`);
    assert.equal(sections[1], `could not visit ${site.origin}/slow-headers: timed out after 0.3 s.`);
    assert.equal(sections[2], `could not visit ${site.origin}/gzip-slow: timed out after 0.3 s.`);
    assert.equal(
      sections[3],
      `## notes.txt\nURL: ${site.origin}/notes.txt\n\nPlain notes: deliveries were counted at the end of December.`,
    );
  });

  test('cancellation aborts a fetch in flight and rejects with the abort reason', async () => {
    const abort = new AbortController();
    const reason = new Error('activity cancelled');
    setTimeout(() => abort.abort(reason), 200);
    const started = Date.now();
    await assert.rejects(
      loopbackAllowed().run({ url: [`${site.origin}/slow`, `${site.origin}/notes.txt`] }, context(abort.signal)),
      (error: unknown) => error === reason,
    );
    assert.ok(Date.now() - started < 3_000);
  });

  test('a PDF becomes its text, titled from its metadata', async () => {
    const output = await loopbackAllowed().run({ url: `${site.origin}/report.pdf` }, context());
    assert.equal(
      output,
      `## Annual Report 2024\nURL: ${site.origin}/report.pdf\n\nRevenue rose 12 percent to 4.2 billion euros.\n\nOutlook: the board expects further growth in 2025.`,
    );
  });

  test('a JSON response is pretty-printed', async () => {
    const output = await loopbackAllowed().run({ url: `${site.origin}/api/sales.json` }, context());
    assert.match(
      output,
      new RegExp(`^## sales\\.json\\nURL: ${site.origin}/api/sales\\.json\\n\\n\`\`\`json\\n\\{\\n  "company": "BYD",`),
    );
    assert.match(output, /"deliveries": 4272145/);
  });

  test('one call with good and bad URLs reports each inline', async () => {
    const output = await loopbackAllowed().run(
      {
        url: [
          `${site.origin}/news/ev-sales`,
          `${site.origin}/missing`,
          `${site.origin}/image.png`,
          `${site.origin}/api/sales.json`,
        ],
      },
      context(),
    );
    const sections = output.split('\n\n=======\n\n');
    assert.equal(sections.length, 4);
    assert.match(sections[0] ?? '', /^## Electric vehicle sales/);
    assert.equal(sections[1], `could not visit ${site.origin}/missing: the server answered 404 Not Found.`);
    assert.match(sections[2] ?? '', /^could not visit .*image\.png: its content type image\/png/);
    assert.match(sections[3] ?? '', /^## sales\.json/);
  });
});
