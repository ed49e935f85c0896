/**
 * Records the histories of an `evaluation` workflow (a gaia judge over 3 questions × 2 rollouts,
 * 2 runs per judge activity, 2 at a time, one verdict needing the reminder) and of a small
 * `researchBatch` with `evaluate` (2 questions × 1 rollout, evaluated by exact match at its end)
 * into test/fixtures/histories/, for the replay tests that guard workflows/evaluation.ts and the
 * batch's evaluate-at-end patch.
 *
 *   npx tsx scripts/record-evaluation-history.ts
 *
 * Keep fixtures recorded from older code; re-record only for a change meant to be incompatible.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { WorkflowTypes, type EvaluationWorkflow } from '../src/core/workflow-types';
import type { ScriptedRequest } from '../test/fakes/scripted-model-server';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import { answerReply, pairOf, questions, startBatch } from '../test/integration/support/batch-helpers';

const EVALUATION_FIXTURE = 'evaluation-gaia-3x2.json';
const BATCH_FIXTURE = 'research-batch-evaluate-2x1.json';

function reply(request: ScriptedRequest) {
  if (pairOf(request)) return answerReply('ref-0');
  const prompt = String(request.messages[0]?.content ?? '');
  if (prompt.includes('Predicted answer: hedge'))
    return { content: request.messages.length >= 3 ? 'Incorrect' : 'Maybe.' };
  return { content: /Reference answer: (.*)\nPredicted answer: \1\n/.test(prompt) ? 'Correct' : '**Incorrect**' };
}

async function main(): Promise<void> {
  const environment = await AgentEnvironment.start({ script: reply });
  const directory = mkdtempSync(join(tmpdir(), 'react-agent-evaluation-fixture-'));
  try {
    await environment.startWorker();
    const line = (question: string, answer: string, prediction: string) =>
      JSON.stringify({ question, answer, messages: [], prediction, termination: 'answer' });
    writeFileSync(
      join(directory, 'iter1.jsonl'),
      `${[line('Q1?', 'a', 'a'), line('Q2?', 'b', 'b'), line('Q3?', 'c', 'hedge')].join('\n')}\n`,
    );
    writeFileSync(
      join(directory, 'iter2.jsonl'),
      `${[line('Q1?', 'a', 'x'), line('Q2?', 'b', 'b'), line('Q3?', 'c', 'c')].join('\n')}\n`,
    );
    const evaluation = await environment.client.workflow.start<EvaluationWorkflow>(WorkflowTypes.evaluation, {
      taskQueue: environment.taskQueue,
      workflowId: 'replay-fixture-evaluation',
      args: [
        {
          paths: [directory],
          output: join(directory, 'evaluation'),
          judge: 'gaia',
          runsPerActivity: 2,
          concurrency: 2,
          judgeAttempts: 3,
        },
      ],
    });
    console.log(JSON.stringify((await evaluation.result()).headline));
    const evaluationHistory = await evaluation.fetchHistory();
    writeFileSync(
      join(__dirname, '..', 'test', 'fixtures', 'histories', EVALUATION_FIXTURE),
      `${historyToJSON(evaluationHistory)}\n`,
    );
    console.log(`recorded ${EVALUATION_FIXTURE}: ${evaluationHistory.events?.length} events`);

    const batch = await startBatch(environment, 'replay-fixture-batch-evaluate', questions(2, 'Replay evaluate'), {
      rollouts: 1,
      concurrency: 2,
      output: join(directory, 'batch'),
      evaluate: {},
    });
    console.log(JSON.stringify((await batch.result()).evaluation?.headline));
    const batchHistory = await batch.fetchHistory();
    writeFileSync(
      join(__dirname, '..', 'test', 'fixtures', 'histories', BATCH_FIXTURE),
      `${historyToJSON(batchHistory)}\n`,
    );
    console.log(`recorded ${BATCH_FIXTURE}: ${batchHistory.events?.length} events`);
  } finally {
    await environment.close();
    rmSync(directory, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
