/**
 * `npm run benchmark:limits [-- --runs 200 --calls 3 --tpm 120000 --asks 300]` (issue 33): N runs
 * of a few model calls on two real worker processes against the scripted provider enforcing a
 * tokens-per-minute limit (429 with retry-after when a request does not fit), without the shared
 * limiter (each call meets the limit alone and Temporal retries it after the retry-after) and then
 * with it (REACT_AGENT_MODEL_LIMITS): runs answered, 429s, retried calls, wall time, tokens per
 * minute served and the share of what the limit allowed over the busy period. Then the limiter's
 * own cost: `--asks` reservations, 10 at a time, through the same client code the model activity
 * uses (one update-with-start, one settle signal) against a limit that is never exhausted:
 * p50/p95 from asking to being granted.
 */
import { Client } from '@temporalio/client';
import type { ResearchRunResult } from '../src/core/run-result';
import { SharedModelLimits } from '../activities/model-limits/shared-model-limits';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import { answer, runId, Scenarios, toolCall } from '../test/integration/support/scenarios';
import { argument, describeLoad } from './fleet-helpers';

const RUNS = Number(argument('runs', '200'));
const CALLS = Number(argument('calls', '3'));
const TPM = Number(argument('tpm', '120000'));
const ASKS = Number(argument('asks', '300'));

interface Outcome {
  label: string;
  answered: number;
  requests: number;
  refused: number;
  retried: number;
  seconds: number;
  tokens: number;
  perMinute: number;
  ofAllowed: number;
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] as number;

async function phase(environment: AgentEnvironment, scenarios: Scenarios, label: string, limited: boolean) {
  environment.model.setTokensPerMinute(TPM);
  const extra: Record<string, string> = {
    REACT_AGENT_TASK_QUEUE: `${environment.taskQueue}-${label}`,
    // Enough attempts that a run without the limiter is not failed by its 429s.
    REACT_AGENT_MODEL_MAX_ATTEMPTS: '50',
    ...(limited
      ? {
          REACT_AGENT_MODEL_LIMITS: JSON.stringify({
            'scripted-model': { tokensPerMinute: TPM, reservedOutputTokens: 40 },
          }),
        }
      : {}),
  };
  const workers = await Promise.all([environment.startWorker(extra), environment.startWorker(extra)]);
  const ids = Array.from({ length: RUNS }, (_, run) =>
    scenarios.add(runId(`${label}-${run}`), [
      ...Array.from({ length: CALLS - 1 }, (_, call) => toolCall('lookup', { query: `run ${run} step ${call}` })),
      answer(`Answer ${run}.`),
    ]),
  );
  const started = Date.now();
  const handles = await Promise.all(
    ids.map((id) =>
      environment.client.workflow.start('researchAgent', {
        taskQueue: `${environment.taskQueue}-${label}`,
        workflowId: id,
        args: [{ question: `Benchmark question ${id}?` }],
      }),
    ),
  );
  const results = await Promise.all(
    handles.map((handle) => (handle.result() as Promise<ResearchRunResult>).catch(() => undefined)),
  );
  const seconds = (Date.now() - started) / 1000;
  await Promise.all(workers.map((worker) => worker.stop()));
  const idSet = new Set(ids);
  const records = environment.model.requests.filter((request) => idSet.has(request.workflowId ?? ''));
  const served = records.filter((request) => request.status === 200);
  const tokens = served.reduce((sum, request) => sum + (request.tokens ?? 0), 0);
  const times = records.map((request) => request.receivedAt);
  const minutes = (Math.max(...times) - Math.min(...times)) / 60_000;
  const outcome: Outcome = {
    label,
    answered: results.filter((result) => result?.termination === 'answer').length,
    requests: records.length,
    refused: records.filter((request) => request.status === 429).length,
    retried: records.length - RUNS * CALLS,
    seconds,
    tokens,
    perMinute: tokens / minutes,
    ofAllowed: tokens / (TPM * (1 + minutes)),
  };
  console.log(
    `${label}: ${outcome.answered}/${RUNS} runs answered, ${outcome.requests} requests for ${RUNS * CALLS} calls ` +
      `(${outcome.refused} saw a 429, ${outcome.retried} retried), wall ${seconds.toFixed(1)} s, ` +
      `${Math.round(outcome.perMinute)} tokens/min served (${(100 * outcome.ofAllowed).toFixed(1)} % of what ${TPM}/min allowed) — ${describeLoad()}`,
  );
  return outcome;
}

/** The limiter's own latency: reservations through the model activity's client code, never exhausted. */
async function askLatency(environment: AgentEnvironment): Promise<void> {
  const worker = await environment.startWorker({ REACT_AGENT_TASK_QUEUE: `${environment.taskQueue}-asks` });
  const client: Client = environment.client;
  const limits = new SharedModelLimits(
    { 'latency-model': { tokensPerMinute: 1e11, requestsPerMinute: 1e9 } },
    `${environment.taskQueue}-asks`,
    () => client,
  );
  await limits.reserve({ model: 'latency-model', promptTokens: 1 }); // starts the limiter
  const asked: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: 10 }, async () => {
      while (next < ASKS) {
        next += 1;
        const ticket = await limits.reserve({ model: 'latency-model', promptTokens: 500 });
        if (!ticket) throw new Error('latency-model has no limit');
        asked.push(ticket.askedMs);
        await limits.settle(ticket, 520, 500);
      }
    }),
  );
  await worker.stop();
  asked.sort((a, b) => a - b);
  console.log(
    `limiter latency: ${ASKS} reservations, 10 at a time, each followed by its settle signal: ` +
      `asked → granted p50 ${percentile(asked, 50).toFixed(1)} ms, p95 ${percentile(asked, 95).toFixed(1)} ms, ` +
      `max ${(asked.at(-1) as number).toFixed(1)} ms — ${describeLoad()}`,
  );
}

async function main(): Promise<void> {
  const scenarios = new Scenarios();
  const environment = await AgentEnvironment.start({ script: scenarios.script });
  try {
    console.log(
      `${RUNS} runs x ${CALLS} model calls on 2 workers; scripted provider limit ${TPM} tokens/min — ${describeLoad()}`,
    );
    const without = await phase(environment, scenarios, 'no-limiter', false);
    const withLimiter = await phase(environment, scenarios, 'shared-limiter', true);
    await askLatency(environment);
    console.log(
      `with the shared limiter: ${withLimiter.refused} 429s beside ${without.refused}, wall ${withLimiter.seconds.toFixed(1)} s beside ${without.seconds.toFixed(1)} s`,
    );
    if (withLimiter.answered !== RUNS) process.exitCode = 1;
  } finally {
    await environment.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
