/**
 * Records workflow histories of representative runs into test/fixtures/histories/, for the
 * replay test that guards deploys: a change to workflows/ that would break runs already in
 * flight fails replay of these histories and needs `patched()`.
 *
 *   npx tsx scripts/record-replay-histories.ts     (re-record only when a change is meant to be incompatible)
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import { answer, runId, Scenarios, toolCall } from '../test/integration/support/scenarios';
import { waitForToolLog } from '../test/integration/support/tool-log';
import type { ResearchRunInput } from '../src/run-input';

const directory = join(__dirname, '..', 'test', 'fixtures', 'histories');

async function main(): Promise<void> {
  const scenarios = new Scenarios();
  const environment = await AgentEnvironment.start({ script: scenarios.script });
  try {
    await environment.startWorker();
    const record = async (name: string, replies: Parameters<Scenarios['add']>[1], input: Partial<ResearchRunInput> = {}, during?: (workflowId: string) => Promise<void>) => {
      const workflowId = scenarios.add(runId(name), replies);
      const handle = await environment.startRun({ question: `Replay fixture: ${name}`, ...input }, workflowId);
      if (during) await during(workflowId);
      await handle.result().catch(() => undefined);
      const history = await handle.fetchHistory();
      writeFileSync(join(directory, `${name}.json`), `${historyToJSON(history)}\n`);
      console.log(`recorded ${name}: ${history.events?.length} events`);
    };
    await record('deep-research-answer', [toolCall('lookup', { query: 'BYD' }), { content: '<tool_call>{"name": "nope"}</tool_call>' }, answer('BYD')]);
    await record(
      'native-parallel',
      [{ content: '', toolCalls: [{ id: 'a', name: 'lookup', arguments: '{"query":"x"}' }, { id: 'b', name: 'broken', arguments: '{}' }] }, { content: 'done' }],
      { protocol: 'native' },
    );
    await record('max-calls-final-answer', (turn) => toolCall('lookup', { query: `step ${turn}` }), { limits: { maxModelCalls: 2 } });
    await record('cancelled-during-tool', [toolCall('wait', { seconds: 60 })], {}, async (workflowId) => {
      await waitForToolLog(environment.toolLog, workflowId, (entries) => entries.some((entry) => entry.event === 'start'));
      await environment.client.workflow.getHandle(workflowId).cancel();
    });
    await record('structured-answer', [answer('no json'), answer('{"winner": "BYD"}')], { answerSchema: { type: 'object', required: ['winner'] } });
  } finally {
    await environment.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
