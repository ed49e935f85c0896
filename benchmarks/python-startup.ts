/**
 * Per-call overhead of the python tool: p50/p95 wall time of `print(1)` through the sandboxed
 * tool (every isolation level that works here) beside plain `<interpreter> -c 'print(1)'`
 * (the same resolved interpreter, no sandbox; once plain, once with the tool's -I -u -B flags),
 * measured in the same run.
 *
 *   npm run benchmark:python-startup          (30 calls per variant)
 *   npm run benchmark:python-startup -- 50    (calls per variant)
 *
 * Reads REACT_AGENT_PYTHON* like a worker does.
 */
import { spawn } from 'node:child_process';
import { IsolationUnavailableError } from '../activities/tools/python/isolation-unavailable-error';
import { createPythonTool, type PythonTool, type PythonToolOptions } from '../activities/tools/python/python-tool';
import { loadPythonConfig } from '../src/config/python-config';

const CALLS = Number(process.argv[2] ?? 30);

function percentile(sortedMilliseconds: number[], fraction: number): number {
  const index = Math.min(sortedMilliseconds.length - 1, Math.ceil(fraction * sortedMilliseconds.length) - 1);
  return sortedMilliseconds[Math.max(0, index)] ?? Number.NaN;
}

async function measure(label: string, call: () => Promise<void>): Promise<{ label: string; p50: number; p95: number }> {
  await call(); // warm-up (page cache, detection already done)
  const timings: number[] = [];
  for (let index = 0; index < CALLS; index += 1) {
    const started = performance.now();
    await call();
    timings.push(performance.now() - started);
  }
  timings.sort((a, b) => a - b);
  return { label, p50: percentile(timings, 0.5), p95: percentile(timings, 0.95) };
}

function plainPython(executable: string, flags: string[] = []): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(executable, [...flags, '-c', 'print(1)'], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 && output.trim() === '1' ? resolve() : reject(new Error(`plain python exited ${code}: ${output}`)),
    );
  });
}

async function main(): Promise<void> {
  const config = loadPythonConfig();
  const context = {
    signal: new AbortController().signal,
    heartbeat: () => undefined,
    workflowId: 'benchmark',
    callId: 'call',
  };
  const variants: Array<[string, PythonToolOptions]> = [
    ['auto', {}],
    ['unshare', { isolation: 'namespaces', bubblewrapExecutable: null }],
    ['rlimits-only', { isolation: 'rlimits-only' }],
  ];
  const tools: PythonTool[] = [];
  for (const [name, options] of variants) {
    try {
      const tool = createPythonTool({ ...config, ...options });
      if (!tools.some((known) => known.sandbox.level === tool.sandbox.level)) tools.push(tool);
    } catch (error) {
      if (!(error instanceof IsolationUnavailableError)) throw error;
      console.log(`${name}: not available here (${error.message.slice(0, 160)}...)`);
    }
  }
  const first = tools[0];
  if (!first) throw new Error('no isolation level works here');
  console.log(first.isolationDescription);
  console.log(`\n${CALLS} calls of print(1) per variant:`);

  const { executable, isolationFlags } = first.sandbox.python;
  const rows = [
    await measure(`plain ${executable} -c`, () => plainPython(executable)),
    // The tool's own flags: -I skips site-packages' .pth files, which can make it faster than plain.
    await measure(`plain ${executable} ${isolationFlags.join(' ')} -u -B -c`, () =>
      plainPython(executable, [...isolationFlags, '-u', '-B']),
    ),
  ];
  for (const tool of tools) {
    rows.push(
      await measure(`python tool, ${tool.sandbox.level}`, async () => {
        const observation = await tool.run({ code: 'print(1)' }, context);
        if (!observation.startsWith('[stdout]\n1\n')) throw new Error(`unexpected observation: ${observation}`);
      }),
    );
  }
  const baseline = rows[0]?.p50 ?? 0;
  for (const row of rows) {
    console.log(
      `${row.label.padEnd(60)} p50 ${row.p50.toFixed(1).padStart(7)} ms   p95 ${row.p95.toFixed(1).padStart(7)} ms   overhead p50 ${(row.p50 - baseline).toFixed(1).padStart(7)} ms`,
    );
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
