/**
 * Live text (issue 32): what serving watchers costs a worker's main thread, apart from Temporal
 * and the model server. One `LiveTextServer` in this process with `--calls` calls open at once,
 * each fed a piece of `--piece-characters` characters `--pieces-per-second` times a second for
 * `--seconds` (a model streaming tokens); watchers, one per call, in a child process of their own
 * (this file with `--read`), read each call's stream to its end. Rounds, alternating, `--repeat`
 * times: no watchers, watchers with every piece written as it comes (`flushMs` 0), watchers with
 * pieces written together within 100 ms (the default). Prints this process's CPU (user + system)
 * per call-second of streaming and the readers' CPU, both from `process.cpuUsage()`, and the bytes
 * and lines each watcher read.
 *
 * `npx tsx benchmarks/live-text-server.ts [--calls 100] [--pieces-per-second 50] [--piece-characters 5] [--seconds 3] [--repeat 3]`
 */
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { LiveTextServer } from '../activities/live-text/live-text-server';
import { argument, describeLoad } from './fleet-helpers';

const CALLS = Number(argument('calls', '100'));
const PIECES_PER_SECOND = Number(argument('pieces-per-second', '50'));
const PIECE_CHARACTERS = Number(argument('piece-characters', '5'));
const SECONDS = Number(argument('seconds', '3'));
const REPEAT = Number(argument('repeat', '3'));

/** The child: reads each URL given on stdin to its end; prints `{bytes, lines, cpuMs}` per round on an empty line. */
async function readers(): Promise<void> {
  let reading: Array<Promise<{ bytes: number; lines: number }>> = [];
  let cpuBefore = process.cpuUsage();
  process.stdout.write('ready\n');
  for await (const line of createInterface({ input: process.stdin })) {
    if (line === 'start') {
      cpuBefore = process.cpuUsage();
      continue;
    }
    if (line) {
      reading.push(
        fetch(line).then(async (response) => {
          const body = await response.text();
          return { bytes: Buffer.byteLength(body), lines: body.split('\n').length - 1 };
        }),
      );
      process.stdout.write('connected\n');
      continue;
    }
    const read = await Promise.all(reading);
    reading = [];
    const cpu = process.cpuUsage(cpuBefore);
    const total = (key: 'bytes' | 'lines') => read.reduce((sum, one) => sum + one[key], 0);
    process.stdout.write(
      `${JSON.stringify({ bytes: total('bytes'), lines: total('lines'), cpuMs: (cpu.user + cpu.system) / 1000 })}\n`,
    );
  }
}

async function main(): Promise<void> {
  console.log(
    `benchmark live-text-server — ${CALLS} calls at once, ${PIECES_PER_SECOND} pieces of ${PIECE_CHARACTERS} characters a second each for ${SECONDS} s; ${describeLoad()}`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', __filename, '--read'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const lines = createInterface({ input: child.stdout });
  const waiting: Array<(line: string) => void> = [];
  lines.on('line', (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  if ((await next()) !== 'ready') throw new Error('the readers did not start');

  const round = async (watching: 'none' | 'every piece' | 'within 100 ms') => {
    const server = await LiveTextServer.start({ flushMs: watching === 'every piece' ? 0 : 100 });
    const calls = Array.from({ length: CALLS }, (_, index) => server.open(index + 1));
    if (watching !== 'none') {
      child.stdin.write('start\n');
      for (const call of calls) {
        child.stdin.write(`${call.pointer.url}\n`);
        await next();
      }
      // Every reader connected before the text starts.
      while (server.watcherCount < CALLS) await new Promise((resolve) => setTimeout(resolve, 5));
    }
    const piece = 'word '.repeat(Math.ceil(PIECE_CHARACTERS / 5)).slice(0, PIECE_CHARACTERS);
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let pieces = 0;
    await new Promise<void>((resolve) => {
      const timer = setInterval(() => {
        // As many pieces as are due by now, so a late timer does not stream less.
        const due = Math.floor(((performance.now() - started) / 1000) * PIECES_PER_SECOND);
        for (; pieces < due && pieces < PIECES_PER_SECOND * SECONDS; pieces += 1)
          for (const call of calls) call.add('content', piece);
        if (pieces >= PIECES_PER_SECOND * SECONDS) {
          clearInterval(timer);
          resolve();
        }
      }, 1_000 / PIECES_PER_SECOND);
    });
    for (const call of calls) call.end('completed');
    const read =
      watching === 'none'
        ? undefined
        : await (async () => {
            child.stdin.write('\n');
            return JSON.parse(await next()) as { bytes: number; lines: number; cpuMs: number };
          })();
    const cpu = process.cpuUsage(cpuBefore);
    await server.close();
    return { serverMs: (cpu.user + cpu.system) / 1000, read };
  };

  await round('within 100 ms'); // warm-up
  const kinds = ['none', 'every piece', 'within 100 ms'] as const;
  const results = new Map<string, Array<Awaited<ReturnType<typeof round>>>>(kinds.map((kind) => [kind, []]));
  for (let repeat = 0; repeat < REPEAT; repeat += 1)
    for (const kind of repeat % 2 === 0 ? kinds : [...kinds].reverse()) results.get(kind)?.push(await round(kind));
  const callSeconds = CALLS * SECONDS;
  for (const kind of kinds) {
    const rounds = results.get(kind) ?? [];
    const perCallSecond = rounds.map((one) => (one.serverMs / callSeconds).toFixed(2)).join(', ');
    const read = rounds[0]?.read;
    console.log(
      `${kind === 'none' ? 'no watchers' : `a watcher each, ${kind}`}: this process ${perCallSecond} ms CPU per call-second` +
        (read
          ? `; readers ${rounds.map((one) => ((one.read?.cpuMs ?? 0) / callSeconds).toFixed(2)).join(', ')} ms per call-second; ${(read.lines / CALLS).toFixed(0)} lines, ${(read.bytes / CALLS).toFixed(0)} bytes per watcher`
          : ''),
    );
  }
  console.log(describeLoad());
  child.stdin.end();
}

(process.argv.includes('--read') ? readers() : main()).catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
