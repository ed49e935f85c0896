/**
 * Time per page of the visit tool (fetch over loopback + Readability/turndown extraction),
 * beside a naive baseline in the same run (global fetch + regex tag stripping), for generated
 * news-like pages of 10 KB, 100 KB and 1 MB served from 127.0.0.1. Also counts boilerplate
 * markers (navigation, sidebar, footer, scripts) left in each output.
 *
 *   npx tsx benchmarks/visit-extraction.ts            (40 / 40 / 15 pages per size)
 *   npx tsx benchmarks/visit-extraction.ts 100        (pages per size, 1 MB gets a third)
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ToolContext } from '../activities/tools/tool-definition';
import { createVisitTool } from '../activities/tools/visit/visit-tool';

const PAGES_PER_SIZE = Number(process.argv[2] ?? 40);
const SIZES: Array<{ label: string; bytes: number; pages: number }> = [
  { label: '10 KB', bytes: 10 * 1024, pages: PAGES_PER_SIZE },
  { label: '100 KB', bytes: 100 * 1024, pages: PAGES_PER_SIZE },
  { label: '1 MB', bytes: 1024 * 1024, pages: Math.max(5, Math.ceil(PAGES_PER_SIZE / 3)) },
];
const BOILERPLATE_MARKERS = ['NAV-MARKER', 'SIDEBAR-MARKER', 'FOOTER-MARKER', 'SCRIPT-MARKER', 'COOKIE-MARKER'];

/** A news-like page of about `bytes` bytes: site chrome around an article of numbered paragraphs. */
function generatePage(bytes: number, seed: number): string {
  const head = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>Report ${seed} | Example News</title>
<script>var tracker = "SCRIPT-MARKER"; function track() { return tracker; }</script>
<style>body { font-family: serif; } .nav { display: flex; }</style></head><body>
<div class="cookie-banner">COOKIE-MARKER We use cookies.</div>
<header><nav class="nav">${Array.from({ length: 12 }, (_, index) => `<a href="/section/${index}">Section ${index} NAV-MARKER</a>`).join(' ')}</nav></header>
<main><article><h1>Report ${seed}</h1><p class="byline">By A. Writer</p>`;
  const tail = `</article><aside class="sidebar">${Array.from({ length: 8 }, (_, index) => `<a href="/popular/${index}">Popular story ${index} SIDEBAR-MARKER</a>`).join('<br>')}</aside></main>
<footer>FOOTER-MARKER &copy; Example News. <a href="/terms">Terms</a> <a href="/privacy">Privacy</a></footer></body></html>`;
  const paragraphs: string[] = [];
  let size = head.length + tail.length;
  for (let index = 0; size < bytes; index += 1) {
    const paragraph =
      index % 7 === 6
        ? `<h2>Part ${index}</h2>`
        : `<p>Paragraph ${index} of report ${seed}: output rose by ${(index * 3.7) % 100} percent while <a href="/link/${index}">costs</a> fell, according to <em>industry data</em> published this week. Analysts said the trend would continue.</p>`;
    paragraphs.push(paragraph);
    size += paragraph.length + 1;
  }
  return head + paragraphs.join('\n') + tail;
}

/** The baseline: fetch the body and strip tags with regular expressions. */
async function baselineVisit(url: string): Promise<string> {
  const html = await (await fetch(url)).text();
  return html
    .replace(/<(script|style)[^>]*>[\s\S]*?<\/\1>/gi, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/&nbsp;/g, ' ')
    .replace(/&amp;/g, '&')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/\s+/g, ' ')
    .trim();
}

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? Number.NaN;
}

function markersLeft(text: string): number {
  return BOILERPLATE_MARKERS.filter((marker) => text.includes(marker)).length;
}

async function main(): Promise<void> {
  const pages = new Map<string, Buffer>();
  for (const size of SIZES) {
    for (let index = 0; index < size.pages; index += 1)
      pages.set(`/${size.bytes}/${index}`, Buffer.from(generatePage(size.bytes, index)));
  }
  const server = createServer((request, response) => {
    const body = pages.get(request.url ?? '');
    response.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    response.end(body ?? 'not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const origin = `http://127.0.0.1:${port}`;
  const tool = createVisitTool({ allowedHosts: [`127.0.0.1:${port}`] });
  const context: ToolContext = {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    workflowId: 'benchmark',
    callId: 'visit',
  };

  // Warm up both paths (module loading, JIT) on pages that are not measured.
  for (let index = 0; index < 3; index += 1) {
    await tool.run({ url: `${origin}/${10 * 1024}/0` }, context);
    await baselineVisit(`${origin}/${10 * 1024}/0`);
  }

  console.log(
    `visit extraction, ${PAGES_PER_SIZE} pages per size (1 MB: ${SIZES[2]?.pages}), loopback HTTP, node ${process.version}`,
  );
  console.log(
    'size    | ours p50 | ours p95 | baseline p50 | baseline p95 | ours chars | baseline chars | boilerplate markers left (ours / baseline, of 5)',
  );
  for (const size of SIZES) {
    const ours: number[] = [];
    const baseline: number[] = [];
    let oursCharacters = 0;
    let baselineCharacters = 0;
    let oursMarkers = 0;
    let baselineMarkers = 0;
    for (let index = 0; index < size.pages; index += 1) {
      const url = `${origin}/${size.bytes}/${index}`;
      let started = performance.now();
      const output = await tool.run({ url }, context);
      ours.push(performance.now() - started);
      started = performance.now();
      const stripped = await baselineVisit(url);
      baseline.push(performance.now() - started);
      oursCharacters += output.length;
      baselineCharacters += stripped.length;
      oursMarkers += markersLeft(output);
      baselineMarkers += markersLeft(stripped);
    }
    const format = (value: number) => `${value.toFixed(1).padStart(6)} ms`;
    console.log(
      `${size.label.padEnd(7)} | ${format(percentile(ours, 0.5))} | ${format(percentile(ours, 0.95))} | ${format(percentile(baseline, 0.5))}    | ${format(percentile(baseline, 0.95))}    | ` +
        `${Math.round(oursCharacters / size.pages)
          .toLocaleString('en-US')
          .padStart(10)} | ${Math.round(baselineCharacters / size.pages)
          .toLocaleString('en-US')
          .padStart(14)} | ` +
        `${(oursMarkers / size.pages).toFixed(1)} / ${(baselineMarkers / size.pages).toFixed(1)}`,
    );
  }
  server.closeAllConnections();
  server.close();
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
