/**
 * `npx tsx benchmarks/document-thread.ts [documents]` (default 20): what reading a normal
 * document in a worker thread (issue 28: `extractTextInThread`) costs beside reading it on the
 * calling thread (`extractTextFromBytes`), for a small .docx and a small PDF: the first call (a
 * thread started, the readers loaded) and p50/p95 of the next ones (a thread reused).
 */
import { extractTextFromBytes } from '../src/documents/extract-text';
import { extractTextInThread } from '../src/documents/extraction-thread';
import { makeDocx, makePdf } from '../test/fakes/documents';

function percentile(values: number[], fraction: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(fraction * sorted.length))] as number;
}

async function timed(action: () => Promise<unknown>): Promise<number> {
  const start = performance.now();
  await action();
  return performance.now() - start;
}

async function main(): Promise<void> {
  const count = Number(process.argv[2] ?? 20);
  const paragraphs = Array.from(
    { length: 50 },
    (_, index) => `Paragraph ${index + 1}: BYD sold 4,272,145 vehicles in 2024 and Tesla delivered 1,789,226.`,
  );
  const documents = [
    { name: 'report.docx', bytes: await makeDocx('Quarterly notes', paragraphs) },
    { name: 'report.pdf', bytes: await makePdf([paragraphs.slice(0, 40), paragraphs.slice(40)], 'EV report') },
  ];
  for (const { name, bytes } of documents) {
    await extractTextFromBytes(bytes, name); // the readers loaded on this thread too
    const inline: number[] = [];
    const threaded: number[] = [];
    const first = await timed(() => extractTextInThread({ bytes, name }));
    for (let index = 0; index < count; index += 1) {
      inline.push(await timed(() => extractTextFromBytes(bytes, name)));
      threaded.push(await timed(() => extractTextInThread({ bytes, name })));
    }
    const line = (label: string, values: number[]) =>
      `${label} p50 ${percentile(values, 0.5).toFixed(1)} ms, p95 ${percentile(values, 0.95).toFixed(1)} ms`;
    console.log(
      `${name} (${bytes.length} bytes): ${line('calling thread', inline)}; ${line('worker thread', threaded)}; first call in a new thread ${first.toFixed(0)} ms`,
    );
  }
}

void main();
