/**
 * Sub-runs (issue 30): a breadth question of 5 sub-questions, with a scripted model that takes
 * `--latency` ms (default 2,000) before each reply, answered two ways on the same dev server and
 * in-process worker:
 *
 * - the team: a lead started with `subruns: { maxParallel: 5 }` (what `react-agent run --subruns 5`
 *   sends) that delegates the 5 parts in one `delegate` call, each sub-run making `--steps` (default
 *   3) `lookup` calls and then answering its part, and the lead then answering (2 + 5 × 4 model calls);
 * - one researcher: the same 5 × 3 `lookup` calls, one after another, then the answer (15 + 1).
 *
 *   npm run benchmark:team                                 (2,000 ms per call, 3 steps, 1 repeat)
 *   npm run benchmark:team -- --latency 2000 --repeat 3 --steps 1
 *
 * Prints the wall time of each and the speed-up, beside the latency floor (model calls made one
 * after another × the latency: 6 for the team, 16 for the researcher with 3 steps, so at most 2.7×) and what
 * each took above it; their model calls, tokens and cost (at an illustrative price, `PRICE`); the
 * team lead's and the researcher's history (events and bytes: the sub-runs' steps are in their
 * own histories, so the lead's stays bounded); the machine's load before and after each repeat.
 */
import type { Client } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import { Worker } from '@temporalio/worker';
import { join } from 'node:path';
import { createActivities, LocalDirectoryTranscriptStore, ToolRegistry } from '../activities';
import { createOpenAIChatModel } from '../activities/model/openai-chat-model';
import { formatUsd } from '../src/core/cost-figures';
import type { ResearchRunResult } from '../src/core/run-result';
import { countAssistantMessages, type ScriptedReply, type ScriptedRequest } from '../test/fakes/scripted-model-server';
import { lookup } from '../test/fakes/test-tools';
import { startBenchmarkStack } from './benchmark-stack';
import { argument, describeLoad } from './fleet-helpers';

const LATENCY_MS = Number(argument('latency', '2000'));
const REPEAT = Number(argument('repeat', '1'));
/** Look-ups one part of the question takes, for the team's sub-run and the researcher alike. */
const STEPS = Number(argument('steps', '3'));
const TASK_QUEUE = 'team-benchmark';
const MODEL = 'scripted-model';
/** An illustrative price, USD per million tokens, so both ways have a cost to compare (it scales with tokens). */
const PRICE = { input: 0.15, output: 0.6 };
const PARTS = ['BYD', 'Tesla', 'Volkswagen', 'Toyota', 'Hyundai'].map((maker) => `${maker}'s car sales in 2024?`);
const QUESTION = `Which of BYD, Tesla, Volkswagen, Toyota and Hyundai sold the most cars in 2024, and how many did each sell?`;

/** The scripted delay before each reply: 0 while warming up, then LATENCY_MS. */
let latencyMs = 0;
const reply = (content: string): ScriptedReply => ({ content, delayBeforeFirstChunkMs: latencyMs });
const lookupCall = (query: string, thought: string) =>
  reply(
    `<think>${thought}</think>\n<tool_call>\n${JSON.stringify({ name: 'lookup', arguments: { query } })}\n</tool_call>`,
  );
const answer = (text: string) => reply(`<think>I have what I need.</think>\n<answer>${text}</answer>`);

/** The scripted model: the team's lead, its sub-runs (ids under the lead's) and the lone researcher, by workflow id. */
function script(request: ScriptedRequest): ScriptedReply {
  const workflowId = request.workflowId ?? '';
  const turn = countAssistantMessages(request.messages) + 1;
  const subRun = /\/sub-\d+-(\d+)$/.exec(workflowId);
  if (subRun) {
    const part = PARTS[Number(subRun[1]) - 1] ?? 'the part';
    return turn <= STEPS
      ? lookupCall(`${part} (source ${turn})`, `Look up ${part}, source ${turn} of ${STEPS}.`)
      : answer(`${part}: about two million.`);
  }
  if (workflowId.startsWith('team-'))
    return turn === 1
      ? reply(
          `<think>Five independent parts: delegate them.</think>\n<tool_call>\n${JSON.stringify({
            name: 'delegate',
            arguments: { tasks: PARTS.map((question) => ({ question })) },
          })}\n</tool_call>`,
        )
      : answer('BYD sold the most; the figures of each are in the reports.');
  // The lone researcher: the same look-ups, part after part, then the answer.
  const part = Math.floor((turn - 1) / STEPS);
  return part < PARTS.length
    ? lookupCall(
        `${PARTS[part] as string} (source ${((turn - 1) % STEPS) + 1})`,
        `Part ${part + 1} of ${PARTS.length}, source ${((turn - 1) % STEPS) + 1} of ${STEPS}.`,
      )
    : answer('BYD sold the most; the figures of each are above.');
}

/** A run's history: its events and their encoded size. */
async function historyOf(client: Client, workflowId: string): Promise<{ events: number; bytes: number }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  return {
    events: history.events?.length ?? 0,
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
  };
}

interface Measured {
  ms: number;
  result: ResearchRunResult;
  history: { events: number; bytes: number };
}

async function main(): Promise<void> {
  const stack = await startBenchmarkStack({ name: 'team', script });
  const { client, directory } = stack;
  const worker = await Worker.create({
    connection: stack.workerConnection,
    taskQueue: TASK_QUEUE,
    workflowsPath: require.resolve('../workflows'),
    activities: createActivities({
      chatModel: createOpenAIChatModel({ baseUrl: stack.model.baseUrl, apiKey: 'benchmark' }),
      store: new LocalDirectoryTranscriptStore(join(directory, 'transcripts')),
      tools: new ToolRegistry([lookup]),
      modelDefaults: { model: MODEL, temperature: 0.6, topP: 0.95, maxOutputTokens: 1000 },
      modelActivity: { startToCloseSeconds: 120, heartbeatSeconds: 30, maxAttempts: 3 },
      modelPrices: { [MODEL]: PRICE },
    }),
  });
  let sequence = 0;
  const measure = async (way: 'team' | 'solo'): Promise<Measured> => {
    const workflowId = `${way}-${Date.now()}-${(sequence += 1)}`;
    const started = performance.now();
    const result = (await client.workflow.execute('researchAgent', {
      taskQueue: TASK_QUEUE,
      workflowId,
      args: [
        {
          question: QUESTION,
          tools: ['lookup'],
          limits: { maxModelCalls: 20 + PARTS.length * (STEPS + 2) * 2 },
          loop: { stuckDetection: false },
          ...(way === 'team' ? { subruns: { maxParallel: PARTS.length } } : {}),
        },
      ],
    })) as ResearchRunResult;
    const ms = performance.now() - started;
    if (result.termination !== 'answer') throw new Error(`${way} ended ${result.termination}: ${result.error ?? ''}`);
    return { ms, result, history: await historyOf(client, workflowId) };
  };
  const calls = (result: ResearchRunResult) => result.iterations + (result.subRuns?.modelCalls ?? 0);
  const describe = (name: string, { ms, result, history }: Measured) =>
    `${name.padEnd(15)} ${`${(ms / 1000).toFixed(2)} s`.padStart(8)}  ${String(calls(result)).padStart(5)} model calls` +
    `  ${result.usage.totalTokens.toLocaleString('en-US').padStart(7)} tokens (${result.usage.promptTokens.toLocaleString('en-US')} prompt)` +
    `  ${formatUsd(result.usage.costUsd ?? 0)}` +
    `  history ${history.events} events, ${(history.bytes / 1024).toFixed(1)} KiB`;

  console.log(
    `Sub-runs benchmark: ${PARTS.length} parts of ${STEPS} look-ups each, ${LATENCY_MS} ms per model call, ${REPEAT} repeat(s); ` +
      `cost at $${PRICE.input}/$${PRICE.output} per million prompt/completion tokens`,
  );
  console.log(`Before: ${describeLoad()}`);
  try {
    await worker.runUntil(async () => {
      // Warm both ways (connections, the token counter, the worker's caches) at 0 ms before measuring.
      await measure('team');
      await measure('solo');
      latencyMs = LATENCY_MS;
      for (let repeat = 1; repeat <= REPEAT; repeat += 1) {
        const team = await measure('team');
        const solo = await measure('solo');
        console.log(describe(`team (${PARTS.length} sub-runs)`, team));
        console.log(describe('one researcher', solo));
        const subRuns = team.result.subRuns?.runs ?? [];
        console.log(
          `  speed-up ${(solo.ms / team.ms).toFixed(2)}× (${((solo.ms - team.ms) / 1000).toFixed(2)} s saved); ` +
            `the team spent ${calls(team.result)} model calls to the researcher's ${calls(solo.result)} ` +
            `(${(team.result.usage.totalTokens / solo.result.usage.totalTokens).toFixed(2)}× the tokens, ` +
            `${formatUsd(team.result.usage.costUsd ?? 0)} vs ${formatUsd(solo.result.usage.costUsd ?? 0)}): ` +
            `the team costs ${((team.result.usage.costUsd ?? 0) / (solo.result.usage.costUsd ?? 1)).toFixed(2)}× the researcher's`,
        );
        // Model calls one after another: the lead's and its longest sub-run's; the researcher's all.
        const inSequence = team.result.iterations + Math.max(0, ...subRuns.map((run) => run.modelCalls));
        const floors = { team: (inSequence * LATENCY_MS) / 1000, solo: (calls(solo.result) * LATENCY_MS) / 1000 };
        console.log(
          `  latency floor (model calls in sequence × ${LATENCY_MS} ms): team ${inSequence} = ${floors.team.toFixed(1)} s, ` +
            `researcher ${calls(solo.result)} = ${floors.solo.toFixed(1)} s, so at most ${(floors.solo / floors.team).toFixed(2)}×; ` +
            `above it: team +${(team.ms / 1000 - floors.team).toFixed(2)} s, researcher +${(solo.ms / 1000 - floors.solo).toFixed(2)} s`,
        );
        console.log(
          `  lead: ${team.result.iterations} model calls of its own; its ${subRuns.length} sub-runs ` +
            subRuns
              .map(
                (run) =>
                  `${run.modelCalls} calls/${run.usage.totalTokens} tokens/${(run.durationMs / 1000).toFixed(1)} s`,
              )
              .join(', '),
        );
        console.log(`  ${describeLoad()}`);
      }
    });
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
