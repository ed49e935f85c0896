import type { ProtocolName } from '../../src/core/protocols/protocol';
import type { ResearchRunInput } from '../../src/core/run-input';
import {
  countAssistantMessages,
  type Script,
  type ScriptedReply,
  type ScriptedRequest,
} from '../../test/fakes/scripted-model-server';
import type { ChaosOptions } from './chaos-options';
export { tagsIn } from './invariants';
import { Random } from './random';

/** The tools the chaos runs call (test/fakes/chaos-tools.ts). */
export const CHAOS_TOOLS = ['lookup', 'sleepy', 'flaky'] as const;
export type ChaosToolName = (typeof CHAOS_TOOLS)[number];

/** One planned tool call. Its `tag` (`@@r7-t2-c1@@`) is in its arguments and comes back in its output. */
export interface PlannedToolCall {
  /** Native tool-call id (also unique per run). */
  id: string;
  tool: ChaosToolName;
  arguments: Record<string, unknown>;
  tag: string;
}

/** What the scripted model does in one run: a few turns of tool calls, then an answer. */
export interface RunPlan {
  index: number;
  workflowId: string;
  protocol: Extract<ProtocolName, 'deep-research' | 'native'>;
  question: string;
  /** When the run starts, in ms after the chaos began. */
  startAtMs: number;
  /** Tool calls of each turn (turn i of the model = turns[i - 1]). */
  turns: PlannedToolCall[][];
  answer: string;
}

export type CancelVia = 'client' | 'cli';

/** The runs and the moments of every chaos event, all in ms after the chaos began. */
export interface ChaosPlan {
  runs: RunPlan[];
  workerKillsAtMs: number[];
  serverRestartsAtMs: number[];
  cancels: Array<{ atMs: number; via: CancelVia }>;
}

/** `count` moments spread over [from, to): one random moment in each of `count` equal slices, sorted. */
export function stratifiedMoments(random: Random, count: number, from: number, to: number): number[] {
  const width = (to - from) / Math.max(1, count);
  return Array.from({ length: count }, (_, index) =>
    Math.round(from + width * index + random.between(0.1, 0.9) * width),
  );
}

function planToolCall(random: Random, run: number, turn: number, call: number): PlannedToolCall {
  const tag = `@@r${run}-t${turn}-c${call}@@`;
  const id = `call_r${run}_t${turn}_c${call}`;
  const roll = random.next();
  if (roll < 0.45) return { id, tool: 'sleepy', arguments: { ms: random.integer(200, 3_000), tag }, tag };
  if (roll < 0.75)
    return {
      id,
      tool: 'flaky',
      arguments: { failures: random.integer(1, 2), workMs: random.integer(50, 400), tag },
      tag,
    };
  const topics = ['BYD 2024 sales', 'Tesla 2024 deliveries', 'EV market share', 'battery prices', 'charging stations'];
  return { id, tool: 'lookup', arguments: { query: `${random.pick(topics)} ${tag}` }, tag };
}

/** Plans every run and every chaos moment from the seed. */
export function planChaos(options: ChaosOptions, workflowPrefix: string): ChaosPlan {
  const random = Random.derive(options.seed, 'plan');
  const spreadMs = options.spreadSeconds * 1_000;
  const starts = Array.from({ length: options.runs }, () => Math.round(random.between(0, spreadMs))).sort(
    (a, b) => a - b,
  );
  const runs: RunPlan[] = starts.map((startAtMs, index) => {
    const turnCount = random.integer(2, 4);
    const turns = Array.from({ length: turnCount }, (_, turn) =>
      Array.from({ length: random.integer(1, 3) }, (__, call) => planToolCall(random, index, turn + 1, call + 1)),
    );
    return {
      index,
      workflowId: `${workflowPrefix}-r${index}`,
      protocol: random.chance(options.nativeShare) ? 'native' : 'deep-research',
      question: `Chaos run r${index}: which company sold more cars in 2024, BYD or Tesla?`,
      startAtMs,
      turns,
      answer: `Run r${index}: BYD sold more cars in 2024 than Tesla.`,
    };
  });
  // Worker kills over the whole spread plus a tail (runs started last are still going); server
  // restarts and cancels inside the spread, while many runs are in flight.
  const workerKillsAtMs = stratifiedMoments(random, options.workerKills, 2_000, spreadMs + 10_000);
  const serverRestartsAtMs = stratifiedMoments(
    random,
    options.serverRestarts,
    spreadMs * 0.1 + 2_000,
    spreadMs * 0.9 + 2_000,
  );
  const cancels = stratifiedMoments(random, options.cancels, 3_000, spreadMs + 3_000).map((atMs, index) => ({
    atMs,
    via: (index % 2 === 0 ? 'client' : 'cli') as CancelVia,
  }));
  return { runs, workerKillsAtMs, serverRestartsAtMs, cancels };
}

/** The workflow input of a planned run. */
export function runInput(plan: RunPlan): ResearchRunInput {
  return { question: plan.question, protocol: plan.protocol, tools: [...CHAOS_TOOLS] };
}

/** The model's reply (content and tool calls, no latency) for the 1-based `turn` of a run. */
export function plannedReply(plan: RunPlan, turn: number): ScriptedReply {
  const calls = plan.turns[turn - 1];
  const thought = calls
    ? `Run r${plan.index}, step ${turn}: I still need facts, so I call ${calls.map((call) => call.tool).join(', ')}.`
    : `Run r${plan.index}: after ${plan.turns.length} steps I know enough.`;
  if (plan.protocol === 'native') {
    if (!calls) return { content: plan.answer };
    return {
      content: `<think>${thought}</think>`,
      toolCalls: calls.map((call) => ({ id: call.id, name: call.tool, arguments: JSON.stringify(call.arguments) })),
    };
  }
  if (!calls) return { content: `<think>${thought}</think>\n<answer>${plan.answer}</answer>` };
  const body = calls
    .map((call) => `<tool_call>\n${JSON.stringify({ name: call.tool, arguments: call.arguments })}\n</tool_call>`)
    .join('\n');
  return { content: `<think>${thought}</think>\n${body}` };
}

/** Random streaming latency for one request: 0-800 ms before the first chunk, 2-5 chunks 20-300 ms apart. */
export function randomLatency(
  random: Random,
): Pick<ScriptedReply, 'delayBeforeFirstChunkMs' | 'chunks' | 'delayBetweenChunksMs'> {
  return {
    delayBeforeFirstChunkMs: random.integer(0, 800),
    chunks: random.integer(2, 5),
    delayBetweenChunksMs: random.integer(20, 300),
  };
}

/**
 * The scripted model server's script: routes each request by its workflow-id header to the run's
 * plan, picks the turn by the number of assistant messages in the request (so a retried call
 * gets the same reply), and adds a random latency drawn from the seed and the request.
 * Requests without a model-call header (compression summaries) get a short summary.
 */
export function chaosScript(plans: ReadonlyMap<string, RunPlan>, seed: number): Script {
  return (request: ScriptedRequest) => {
    const latency = randomLatency(
      Random.derive(seed, `latency:${request.workflowId ?? ''}:${request.modelCall ?? 'summary'}:${request.sequence}`),
    );
    const plan = request.workflowId ? plans.get(request.workflowId) : undefined;
    if (!plan) return { status: 500, errorMessage: `no chaos plan for workflow ${String(request.workflowId)}` };
    if (request.modelCall === undefined)
      return { content: `Summary of run r${plan.index} so far: lookups, sleeps and flaky fetches.`, ...latency };
    return { ...plannedReply(plan, countAssistantMessages(request.messages) + 1), ...latency };
  };
}
