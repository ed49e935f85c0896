/**
 * Records histories of small `researchBatch`es into test/fixtures/histories/, for the replay tests
 * that guard deploys of workflows/research-batch.ts:
 *
 * - `3x2` (the default): 3 questions × 2 rollouts, 2 at a time, an answering scripted model:
 *   `research-batch-3x2.json`;
 * - `cancelled`: 4 questions, 2 at a time, each run waiting in a long tool call, the batch cancelled
 *   once both wait: no run started after it, the two running ones cancelled, their lines, the
 *   summary: `research-batch-cancelled.json`;
 * - `continued`: 3 questions, 2 at a time, 2 runs per continuation: the batch continues as new
 *   once, `research-batch-continued-run1.json` and `-run2.json`.
 *
 *   npx tsx scripts/record-batch-history.ts [3x2] [cancelled] [continued]
 *
 * Keep fixtures recorded from older code; re-record only for a change meant to be incompatible.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import type { WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ResearchBatchWorkflow } from '../src/core/workflow-types';
import type { ScriptedReply, ScriptedRequest } from '../test/fakes/scripted-model-server';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import {
  answerReply,
  pairOf,
  questions,
  startBatch,
  toolReply,
  turnOf,
  waitFor,
} from '../test/integration/support/batch-helpers';

/** Each batch's model behaviour, by batch id. */
const behaviours = new Map<string, (turn: number) => ScriptedReply>();

function reply(request: ScriptedRequest): ScriptedReply {
  const pair = pairOf(request);
  const behaviour = pair ? behaviours.get(pair.batchId) : undefined;
  return behaviour ? behaviour(turnOf(request)) : answerReply('recorded');
}

async function write(fixture: string, handle: WorkflowHandle, runId?: string): Promise<void> {
  const history = runId
    ? await handle.client.getHandle(handle.workflowId, runId).fetchHistory()
    : await handle.fetchHistory();
  writeFileSync(join(__dirname, '..', 'test', 'fixtures', 'histories', fixture), `${historyToJSON(history)}\n`);
  console.log(`recorded ${fixture}: ${history.events?.length} events`);
}

const recordings: Record<string, (environment: AgentEnvironment, output: string) => Promise<void>> = {
  async '3x2'(environment, output) {
    const handle = await startBatch(environment, 'replay-fixture-batch', questions(3, 'Replay fixture'), {
      rollouts: 2,
      concurrency: 2,
      output,
      name: 'replay fixture',
    });
    await handle.result();
    await write('research-batch-3x2.json', handle);
  },

  async cancelled(environment, output) {
    const id = 'replay-fixture-batch-cancelled';
    behaviours.set(id, (turn) => (turn === 1 ? toolReply('wait', { seconds: 120 }) : answerReply('too late')));
    const handle = await startBatch(environment, id, questions(4, 'Replay fixture'), {
      rollouts: 1,
      concurrency: 2,
      output,
    });
    const waiting = () =>
      environment.model.requests.filter((request) => request.completed && pairOf(request)?.batchId === id).length;
    await waitFor('both running runs in their tool', () => waiting() === 2);
    await handle.cancel();
    const summary: Awaited<ReturnType<ResearchBatchWorkflow>> = await handle.result();
    if (!summary.cancelled || summary.lines !== 2) throw new Error(`unexpected summary ${JSON.stringify(summary)}`);
    await write('research-batch-cancelled.json', handle);
  },

  async continued(environment, output) {
    const handle = await startBatch(environment, 'replay-fixture-batch-continued', questions(3, 'Replay fixture'), {
      rollouts: 1,
      concurrency: 2,
      runsPerContinuation: 2,
      output,
    });
    const summary: Awaited<ReturnType<ResearchBatchWorkflow>> = await handle.result();
    if (summary.continuedAsNew !== 1) throw new Error(`unexpected summary ${JSON.stringify(summary)}`);
    const last = await handle.fetchHistory();
    const first = last.events?.[0]?.workflowExecutionStartedEventAttributes?.continuedExecutionRunId ?? undefined;
    if (!first) throw new Error('the last run did not continue another');
    await write('research-batch-continued-run1.json', handle, first);
    await write('research-batch-continued-run2.json', handle);
  },
};

async function main(): Promise<void> {
  const names = process.argv.slice(2).length ? process.argv.slice(2) : ['3x2'];
  const unknown = names.filter((name) => !(name in recordings));
  if (unknown.length) throw new Error(`unknown fixture ${unknown.join(', ')}; known: ${Object.keys(recordings)}`);
  const environment = await AgentEnvironment.start({ script: reply });
  try {
    await environment.startWorker();
    for (const name of names) {
      // Inside the environment's directory: a worker writes only inside its data roots.
      const output = mkdtempSync(join(environment.directory, `batch-fixture-${name}-`));
      try {
        await recordings[name]?.(environment, output);
      } finally {
        rmSync(output, { recursive: true, force: true });
      }
    }
  } finally {
    await environment.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
