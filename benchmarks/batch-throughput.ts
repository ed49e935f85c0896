/**
 * A large batch with a fast scripted model (every run answers at its first call): our
 * `researchBatch` (counts in history, lines written by an activity, continue-as-new) beside a
 * naive batch that takes the questions in its input and keeps every result in its history,
 * against the same dev server, model and worker, in the same run.
 *
 *   npm run benchmark:batch                    (2,000 questions × 1 rollout, concurrency 8)
 *   npm run benchmark:batch -- 50 3 8          (questions, rollouts, concurrency)
 *   npm run benchmark:batch -- 2000 1 8 ours   (only ours; `naive` for only the naive one)
 *
 * Prints wall time, runs per minute, and the batch's history: bytes and events of each of its
 * runs (one per continue-as-new), their largest and their sum.
 */
import { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createOpenAIChatModel } from '../activities/model/openai-chat-model';
import { createActivities, LocalDirectoryTranscriptStore, ToolRegistry } from '../activities';
import type { BatchSummary, ResearchBatchInput } from '../src/core/batch-contract';
import type { BatchItem } from '../src/domain/batch-input';
import { storeBatchInput } from '../src/storage/batch-input-file';
import { startBenchmarkStack } from './benchmark-stack';

const QUESTIONS = Number(process.argv[2] ?? 2_000);
const ROLLOUTS = Number(process.argv[3] ?? 1);
const CONCURRENCY = Number(process.argv[4] ?? 8);
const ONLY = process.argv[5];
const MIB = 1024 * 1024;

interface ChainFigures {
  runs: number;
  bytes: number[];
  events: number[];
  /** Bytes by event type over all runs (BENCHMARK_BREAKDOWN=1 prints them). */
  byType: Map<string, { events: number; bytes: number }>;
}

/** Bytes (protobuf-encoded, as the server stores them) and events of every run of a workflow id. */
async function chainFigures(client: Client, workflowId: string): Promise<ChainFigures> {
  const runIds: string[] = [];
  for await (const execution of client.workflow.list({ query: `WorkflowId = '${workflowId}'` }))
    runIds.push(execution.runId);
  const figures: ChainFigures = { runs: runIds.length, bytes: [], events: [], byType: new Map() };
  for (const runId of runIds) {
    const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
    figures.bytes.push(temporal.api.history.v1.History.encode(history).finish().length);
    figures.events.push(history.events?.length ?? 0);
    for (const event of history.events ?? []) {
      const type = temporal.api.enums.v1.EventType[event.eventType ?? 0] ?? 'unknown';
      const entry = figures.byType.get(type) ?? { events: 0, bytes: 0 };
      entry.events += 1;
      entry.bytes += temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
      figures.byType.set(type, entry);
    }
  }
  return figures;
}

function row(label: string, seconds: number, runs: number, figures: ChainFigures): string {
  const sum = (values: number[]) => values.reduce((total, value) => total + value, 0);
  const max = (values: number[]) => Math.max(...values);
  return [
    label.padEnd(34),
    seconds.toFixed(1).padStart(8),
    ((runs / seconds) * 60).toFixed(0).padStart(9),
    String(figures.runs).padStart(6),
    `${(max(figures.bytes) / 1024).toFixed(0)} KiB`.padStart(11),
    String(max(figures.events)).padStart(8),
    `${(sum(figures.bytes) / MIB).toFixed(2)} MiB`.padStart(11),
    String(sum(figures.events)).padStart(8),
  ].join('  ');
}

/** Bytes per run by event type, largest first, when BENCHMARK_BREAKDOWN=1. */
function breakdown(figures: ChainFigures): string[] {
  if (process.env.BENCHMARK_BREAKDOWN !== '1') return [];
  return [...figures.byType.entries()]
    .sort((left, right) => right[1].bytes - left[1].bytes)
    .map(
      ([type, entry]) =>
        `    ${type.replace('EVENT_TYPE_', '').padEnd(48)} ${String(entry.events).padStart(7)} events ${(entry.bytes / 1024).toFixed(1).padStart(9)} KiB`,
    );
}

async function main(): Promise<void> {
  Runtime.install({ logger: new DefaultLogger('WARN') });
  const stack = await startBenchmarkStack({
    name: 'batch-benchmark',
    script: () => ({ content: '<think>Known.</think>\n<answer>42</answer>' }),
    maxReceiveMessageBytes: 256 * MIB,
  });
  const { directory, model, client, workerConnection } = stack;
  const chatModel = createOpenAIChatModel({ baseUrl: model.baseUrl, apiKey: 'benchmark' });
  const store = new LocalDirectoryTranscriptStore(join(directory, 'transcripts'));
  const worker = await Worker.create({
    connection: workerConnection,
    taskQueue: 'benchmark',
    workflowsPath: require.resolve('./batch-benchmark-workflows'),
    activities: createActivities({
      chatModel,
      store,
      tools: new ToolRegistry([]),
      modelDefaults: { model: 'scripted-model', temperature: 0.6, topP: 0.95, maxOutputTokens: 1000 },
      modelActivity: { startToCloseSeconds: 60, heartbeatSeconds: 30, maxAttempts: 3 },
    }),
    maxConcurrentWorkflowTaskExecutions: 20,
    maxConcurrentActivityTaskExecutions: 40,
  });
  const items: BatchItem[] = Array.from({ length: QUESTIONS }, (_, index) => ({
    question: `Benchmark question number ${index}: what is the answer?`,
    answer: '42',
  }));
  const runs = QUESTIONS * ROLLOUTS;

  try {
    const lines = await worker.runUntil(async () => {
      const printed: string[] = [];
      if (ONLY !== 'naive') {
        const id = `benchmark-batch-${Date.now()}`;
        const output = join(directory, 'out');
        const input: ResearchBatchInput = {
          input: await storeBatchInput(store, items),
          questions: QUESTIONS,
          rollouts: ROLLOUTS,
          concurrency: CONCURRENCY,
          output,
        };
        const started = Date.now();
        const summary = (await client.workflow.execute('researchBatch', {
          taskQueue: 'benchmark',
          workflowId: id,
          args: [input],
        })) as BatchSummary;
        const seconds = (Date.now() - started) / 1000;
        const written = Array.from(
          { length: ROLLOUTS },
          (_, rollout) =>
            readFileSync(join(output, `iter${rollout + 1}.jsonl`), 'utf8')
              .split('\n')
              .filter(Boolean).length,
        );
        if (summary.lines !== runs || written.some((count) => count !== QUESTIONS))
          throw new Error(`ours wrote ${written.join('+')} lines, expected ${QUESTIONS} per iter file`);
        const figures = await chainFigures(client, id);
        printed.push(row('ours: counts + lines by activity', seconds, runs, figures), ...breakdown(figures));
      }
      if (ONLY !== 'ours') {
        const id = `benchmark-naive-batch-${Date.now()}`;
        const started = Date.now();
        const result = (await client.workflow.execute('naiveResearchBatch', {
          taskQueue: 'benchmark',
          workflowId: id,
          args: [items, ROLLOUTS, CONCURRENCY],
        })) as { results: unknown[] };
        const seconds = (Date.now() - started) / 1000;
        if (result.results.length !== runs)
          throw new Error(`the naive batch returned ${result.results.length} results, expected ${runs}`);
        const figures = await chainFigures(client, id);
        printed.push(row('naive: results in history', seconds, runs, figures), ...breakdown(figures));
      }
      return printed;
    });
    console.log(
      `Batch of ${QUESTIONS.toLocaleString('en-US')} questions × ${ROLLOUTS} rollout${ROLLOUTS === 1 ? '' : 's'} (${runs.toLocaleString('en-US')} runs), concurrency ${CONCURRENCY}, scripted model answering at once`,
    );
    console.log('');
    console.log(
      [
        'design'.padEnd(34),
        'wall s'.padStart(8),
        'runs/min'.padStart(9),
        'runs'.padStart(6),
        'max/run'.padStart(11),
        'events'.padStart(8),
        'total'.padStart(11),
        'events'.padStart(8),
      ].join('  '),
    );
    for (const line of lines) console.log(line);
    console.log('');
    console.log(
      "runs = workflow runs of the batch (continue-as-new); max/run = the largest run's history; total = all runs together.",
    );
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
