/**
 * Live text (issue 32): how long a model call's text takes from the model server to a watcher,
 * and what watching costs the runs. A dev server, one real worker process (its live text server on
 * loopback, as by default) and the scripted model server, whose reply streams `CHUNKS` chunks
 * `CHUNK_MS` apart, each stamped with the time the server sent it. Each watcher reads the run
 * through `watchRunText` (src/client/live-text.ts, the reader `react-agent follow` uses), in a
 * process of its own (benchmarks/stream-watchers.ts), and takes, for every stamp it reads,
 * now − stamp: chunk-to-screen latency.
 *
 * Rounds: 1 run with a watcher reading the heartbeat details only (the fallback, the baseline),
 * 1 run with a watcher reading directly, then, after a warm-up round, `REPEAT` pairs of rounds of
 * `RUNS` concurrent runs, one round without watchers and one with a watcher each (directly), the
 * order alternating pair by pair (none/direct, direct/none, …) so a drifting load falls on both
 * alike. Per pair: the runs' mean wall time with watchers over that without (what a user waits),
 * and the CPU each process took per model call; over the pairs: the median ratio and its spread.
 * Also latency p50/p95, describe requests and history long polls per second per watcher, bytes.
 *
 * `--flush-ms N` sets the worker's REACT_AGENT_LIVE_TEXT_FLUSH_MS (default: the worker's default,
 * 100; 0 writes each piece as it comes). `--pin` puts the dev server, the worker and this process
 * (scripted model server, client) on CPU 0 and the watchers' process on CPU 1 (`taskset`), as if
 * the watchers ran on another machine; without it every process shares every core.
 * `--history-pause-ms N` sets the watchers' `historyPollPauseMs` (default the iterator's, 250).
 * `--history-only`: in the paired rounds each watcher only long-polls its run's history, as the
 * iterator does (no describes, no live text), to tell that part of the cost from the rest.
 *
 * `--calls N`: model calls per run (default 2; see CALLS_PER_RUN).
 *
 * `npm run benchmark:stream -- [--runs 100] [--chunks 60] [--chunk-ms 50] [--calls 2] [--repeat 4] [--flush-ms N] [--pin] [--history-pause-ms N] [--history-only]`
 */
import { execFileSync, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { countAssistantMessages, SEND_TIME_PLACEHOLDER, type Script } from '../test/fakes/scripted-model-server';
import { startBenchmarkStack } from './benchmark-stack';
import type { Watched } from './stream-watchers';
import { cpuBetween, cpuSnapshot } from './process-cpu';
import { cpus } from 'node:os';
import { argument, describeLoad, percentile, startWorkerProcess, workerEnvironment } from './fleet-helpers';

const RUNS = Number(argument('runs', '100'));
const CHUNKS = Number(argument('chunks', '60'));
const CHUNK_MS = Number(argument('chunk-ms', '50'));
const REPEAT = Number(argument('repeat', '4'));
const FLUSH_MS = argument('flush-ms', '');
const PIN = process.argv.includes('--pin');
const HISTORY_PAUSE_MS = argument('history-pause-ms', '');
const HISTORY_ONLY = process.argv.includes('--history-only');
const THIS_PROCESS = 'this process (scripted model server, client)';
/**
 * Model calls per run: 2 by default (the script answers at once; `maxModelCalls` 2, as measured
 * before); with `--calls N` (N > 2), the first N − 1 replies stream the same text with no answer,
 * each of which the agent follows with another call, and the N-th answers (the run is checked to
 * have made N). At most 5: the agent ends a run with an error after 5 unreadable replies in a row.
 */
const CALLS_PER_RUN = Math.min(5, Math.max(2, Number(argument('calls', '2'))));

/** `pids` and every descendant of theirs, now (from `ps`). */
function withDescendants(pids: readonly number[]): number[] {
  const table = execFileSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((line) => line.trim().split(/\s+/).map(Number) as [number, number]);
  const all = new Set(pids);
  for (let grew = true; grew;) {
    grew = false;
    for (const [pid, parent] of table)
      if (all.has(parent) && !all.has(pid)) {
        all.add(pid);
        grew = true;
      }
  }
  return [...all];
}

/** Puts the processes (every thread, and the children they start later) on the given CPUs. */
function pin(pids: readonly number[], cpuList: string): void {
  for (const pid of withDescendants(pids))
    execFileSync('taskset', ['-a', '-p', '-c', cpuList, String(pid)], { stdio: 'ignore' });
}

/** Segments of one length, so the server's even split sends each stamp whole in one chunk. */
const SEGMENT = 40;
const content = [
  '<think>'.padEnd(SEGMENT),
  ...Array.from({ length: CHUNKS - 2 }, (_, index) => ` ⟨${SEND_TIME_PLACEHOLDER}⟩ piece ${index}`.padEnd(SEGMENT)),
  '</think><answer>streamed</answer>'.padEnd(SEGMENT),
].join('');

/** The same stamped text, without the answer: the agent calls the model again. */
const unanswered = content.replace('<answer>streamed</answer>', 'still thinking.'.padEnd(25));

const script: Script = (request) => ({
  content: CALLS_PER_RUN > 2 && countAssistantMessages(request.messages) + 1 < CALLS_PER_RUN ? unanswered : content,
  chunks: CHUNKS,
  delayBetweenChunksMs: CHUNK_MS,
  stampSendTime: true,
});

const ms = (values: number[]) =>
  values.length === 0
    ? `no chunk reached the watcher before the call completed (${CHUNKS - 2} stamped chunks sent)`
    : `p50 ${percentile(values, 0.5).toFixed(0)} ms, p95 ${percentile(values, 0.95).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms (${values.length} chunks)`;

async function main(): Promise<void> {
  console.log(
    `benchmark:stream — replies of ${CHUNKS} chunks ${CHUNK_MS} ms apart (${((CHUNKS * CHUNK_MS) / 1000).toFixed(1)} s); ${describeLoad()}`,
  );
  const stack = await startBenchmarkStack({ name: 'stream', script });
  try {
    const taskQueue = `benchmark-stream-${process.pid}`;
    const worker = await startWorkerProcess({
      ...(await workerEnvironment({
        temporalAddress: stack.server.address,
        modelBaseUrl: stack.model.baseUrl,
        directory: stack.directory,
        taskQueue,
      })),
      REACT_AGENT_MAX_CONCURRENT_ACTIVITIES: String(Math.max(20, RUNS * 2)),
      REACT_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS: '20',
      ...(FLUSH_MS ? { REACT_AGENT_LIVE_TEXT_FLUSH_MS: FLUSH_MS } : {}),
    });
    // The watchers in a process of their own (benchmarks/stream-watchers.ts), with their own
    // connection, as `follow` processes or a watching service would be: apart from the scripted
    // model server in this process, whose chunks they would otherwise hold up.
    const watcherCommand = [process.execPath, '--import', 'tsx', join(__dirname, 'stream-watchers.ts')];
    const watchers = spawn(
      PIN ? 'taskset' : (watcherCommand[0] as string),
      [...(PIN ? ['-c', '1', ...watcherCommand] : watcherCommand.slice(1))],
      {
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: stack.server.address,
          ...(HISTORY_PAUSE_MS ? { STREAM_HISTORY_PAUSE_MS: HISTORY_PAUSE_MS } : {}),
        },
        stdio: ['pipe', 'pipe', 'inherit'],
      },
    );
    const results = new Map<string, (watched: Watched) => void>();
    const lines = createInterface({ input: watchers.stdout });
    await new Promise<void>((resolve, reject) => {
      watchers.once('exit', (code) => reject(new Error(`the watcher process exited (${code}) before it was ready`)));
      lines.on('line', (line) => {
        if (line === 'ready') return resolve();
        const watched = JSON.parse(line) as Watched & { error?: string };
        if (watched.error) throw new Error(`watching ${watched.workflowId}: ${watched.error}`);
        results.get(watched.workflowId)?.(watched);
      });
    });
    const watch = (workflowId: string, direct: boolean, historyOnly: boolean) =>
      new Promise<Watched>((resolve) => {
        results.set(workflowId, resolve);
        watchers.stdin.write(`${JSON.stringify({ workflowId, direct, historyOnly })}\n`);
      });
    let sequence = 0;
    /** Runs `count` runs at once, each watched (or not); their durations and what the watchers saw. */
    const groups = {
      ...(await stack.server.processGroups()),
      worker: [worker.pid],
      [THIS_PROCESS]: [process.pid],
      watchers: [watchers.pid as number],
    };
    if (PIN) pin([...Object.values(await stack.server.processGroups()).flat(), worker.pid, process.pid], '0');
    console.log(
      PIN
        ? 'placement: dev server, worker, scripted model server and client on CPU 0 (taskset); the watchers on CPU 1'
        : `placement: every process on all ${cpus().length} cores`,
    );
    const round = async (count: number, watching: 'none' | 'direct' | 'heartbeat', historyOnly = false) => {
      const cpuBefore = cpuSnapshot(groups);
      const runs = await Promise.all(
        Array.from({ length: count }, async () => {
          const workflowId = `stream-benchmark-${watching}-${count}-${(sequence += 1)}-${Date.now()}`;
          const started = performance.now();
          const handle = await stack.client.workflow.start('researchAgent', {
            taskQueue,
            workflowId,
            args: [{ question: 'Stream, please.', limits: { maxModelCalls: CALLS_PER_RUN } }],
          });
          const watched = watching === 'none' ? undefined : watch(workflowId, watching === 'direct', historyOnly);
          const result = (await handle.result()) as { termination: string; iterations?: number };
          const seconds = (performance.now() - started) / 1000;
          if (result.termination !== 'answer' || (CALLS_PER_RUN > 2 && result.iterations !== CALLS_PER_RUN))
            throw new Error(`${workflowId}: ${JSON.stringify(result)}`);
          return { seconds, watched: await watched };
        }),
      );
      const watched = runs.flatMap((run) => (run.watched ? [run.watched] : []));
      const cpu = cpuBetween(cpuBefore, cpuSnapshot(groups));
      // A group counts its descendants: the watchers' process is this one's child, so taken out of it.
      cpu[THIS_PROCESS] = Math.max(0, (cpu[THIS_PROCESS] ?? 0) - (cpu.watchers ?? 0));
      return {
        cpuPerCallMs: Object.fromEntries(
          Object.entries(cpu).map(([name, seconds]) => [name, (seconds * 1000) / (count * CALLS_PER_RUN)]),
        ),
        cpu: Object.entries(cpu)
          .map(([name, seconds]) => `${name} ${seconds.toFixed(1)}`)
          .join(', '),
        durations: runs.map((run) => run.seconds),
        latencies: watched.flatMap((one) => one.latencies),
        describesPerSecond: watched.map((one) => one.describes / one.seconds),
        historyPollsPerSecond: watched.map((one) => one.historyPolls / one.seconds),
        bytes: watched.map((one) => one.bytes),
      };
    };
    type Round = Awaited<ReturnType<typeof round>>;
    const mean = (values: number[]) => values.reduce((total, value) => total + value, 0) / values.length;
    const median = (values: number[]) => {
      const sorted = [...values].sort((left, right) => left - right);
      const middle = sorted.length / 2;
      return sorted.length % 2 ? (sorted[Math.floor(middle)] as number) : mean(sorted.slice(middle - 1, middle + 1));
    };
    const percent = (ratio: number) => `${ratio >= 1 ? '+' : ''}${(100 * (ratio - 1)).toFixed(1)} %`;

    await round(2, 'direct'); // warm-up
    const fallback = await round(1, 'heartbeat');
    console.log(`1 run, heartbeat details (the fallback, baseline): ${ms(fallback.latencies)}  (${describeLoad()})`);
    const single = await round(1, 'direct');
    console.log(`1 run, direct from the worker:                     ${ms(single.latencies)}  (${describeLoad()})`);
    console.log(
      `  per watcher: ${mean(single.describesPerSecond).toFixed(2)} describe requests/s and ${mean(single.historyPollsPerSecond).toFixed(2)} history long polls/s over the run, ${single.bytes[0]} bytes of live text for ${content.length} characters`,
    );
    // Pairs of rounds without and with watchers, the order alternating pair by pair after a
    // warm-up round, so the machine's drifting load falls on both alike; each pair compared within itself.
    await round(RUNS, 'none');
    const pairs: Array<{ none: Round; direct: Round }> = [];
    for (let repeat = 0; repeat < REPEAT; repeat += 1) {
      const order: Array<'none' | 'direct'> = repeat % 2 === 0 ? ['none', 'direct'] : ['direct', 'none'];
      const pair: Partial<Record<'none' | 'direct', Round>> = {};
      for (const watching of order) {
        const measured = await round(RUNS, watching, HISTORY_ONLY);
        pair[watching] = measured;
        console.log(
          `${RUNS} runs at once, ${watching === 'none' ? 'no watchers:             ' : HISTORY_ONLY ? 'a history reader each:   ' : 'a watcher each, direct:  '} run duration mean ${mean(measured.durations).toFixed(2)} s, p95 ${percentile(measured.durations, 0.95).toFixed(2)} s${watching === 'direct' && !HISTORY_ONLY ? `; ${ms(measured.latencies)}` : ''}  (${describeLoad()})`,
        );
        console.log(`  CPU s: ${measured.cpu}`);
      }
      const done = pair as { none: Round; direct: Round };
      pairs.push(done);
      console.log(
        `  pair ${repeat + 1}: runs ${percent(mean(done.direct.durations) / mean(done.none.durations))} with watchers`,
      );
    }
    const watched = {
      latencies: pairs.flatMap((one) => one.direct.latencies),
      describesPerSecond: pairs.flatMap((one) => one.direct.describesPerSecond),
      historyPollsPerSecond: pairs.flatMap((one) => one.direct.historyPollsPerSecond),
      bytes: pairs.flatMap((one) => one.direct.bytes),
    };
    if (!HISTORY_ONLY) console.log(`all ${REPEAT} rounds of ${RUNS} watched runs: ${ms(watched.latencies)}`);
    const ratios = pairs.map((one) => mean(one.direct.durations) / mean(one.none.durations));
    console.log(
      `  run wall time with watchers over without, per pair: ${ratios.map(percent).join(', ')}; median ${percent(median(ratios))} (range ${percent(Math.min(...ratios))} to ${percent(Math.max(...ratios))})`,
    );
    console.log('  CPU per model call, median over the pairs, without → with watchers:');
    for (const name of Object.keys(groups)) {
      const without = median(pairs.map((one) => one.none.cpuPerCallMs[name] ?? 0));
      const withWatchers = median(pairs.map((one) => one.direct.cpuPerCallMs[name] ?? 0));
      const perPair = pairs.map((one) => (one.direct.cpuPerCallMs[name] ?? 0) - (one.none.cpuPerCallMs[name] ?? 0));
      console.log(
        `    ${name}: ${without.toFixed(1)} → ${withWatchers.toFixed(1)} ms (per pair ${perPair.map((value) => `${value >= 0 ? '+' : ''}${value.toFixed(1)}`).join(', ')} ms)`,
      );
    }
    console.log(
      `  per watcher: ${mean(watched.describesPerSecond).toFixed(2)} describe requests/s and ${mean(watched.historyPollsPerSecond).toFixed(2)} history long polls/s (all watchers: ${(mean(watched.describesPerSecond) * RUNS).toFixed(0)} and ${(mean(watched.historyPollsPerSecond) * RUNS).toFixed(0)}/s), ${mean(watched.bytes).toFixed(0)} bytes  (${describeLoad()})`,
    );
    await worker.stop();
    watchers.stdin.end();
    await new Promise((resolve) => watchers.once('exit', resolve));
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
