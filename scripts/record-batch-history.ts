/**
 * Records the history of a small `researchBatch` (3 questions × 2 rollouts, 2 at a time, with a
 * cancelled-free, answering scripted model) into test/fixtures/histories/, for the replay tests
 * that guard deploys of workflows/research-batch.ts.
 *
 *   npx tsx scripts/record-batch-history.ts
 *
 * Keep fixtures recorded from older code; re-record only for a change meant to be incompatible.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import { answerReply, questions, startBatch } from '../test/integration/support/batch-helpers';

const FIXTURE = 'research-batch-3x2.json';

async function main(): Promise<void> {
  const environment = await AgentEnvironment.start({ script: () => answerReply('recorded') });
  const output = mkdtempSync(join(tmpdir(), 'react-agent-batch-fixture-'));
  try {
    await environment.startWorker();
    const handle = await startBatch(environment, 'replay-fixture-batch', questions(3, 'Replay fixture'), {
      rollouts: 2,
      concurrency: 2,
      output,
      name: 'replay fixture',
    });
    await handle.result();
    const history = await handle.fetchHistory();
    writeFileSync(join(__dirname, '..', 'test', 'fixtures', 'histories', FIXTURE), `${historyToJSON(history)}\n`);
    console.log(`recorded ${FIXTURE}: ${history.events?.length} events`);
  } finally {
    await environment.close();
    rmSync(output, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
