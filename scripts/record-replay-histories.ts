/**
 * Records workflow histories of representative runs into test/fixtures/histories/, for the
 * replay test that guards deploys: a change to workflows/ that would break runs already in
 * flight fails replay of these histories and needs `patched()`.
 *
 *   npx tsx scripts/record-replay-histories.ts               records every fixture
 *   npx tsx scripts/record-replay-histories.ts NAME [NAME…]  records only these, keeping the others
 *
 * Keep fixtures recorded from older code: they are what deployed runs look like. Record a new one
 * for a new path through the loop; re-record an old one only when a change is meant to be
 * incompatible. `unusable-replies-before-patch.json` was recorded with the code before the
 * `unusable-replies` patch (the `unusable-replies` scenario, renamed), so it replays the old way.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countConversationTokens, createTiktokenCounter } from '../activities/token-counter';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import { answer, runId, Scenarios, toolCall } from '../test/integration/support/scenarios';
import { waitForToolLog } from '../test/integration/support/tool-log';
import type { ResearchRunInput } from '../src/run-input';

const directory = join(__dirname, '..', 'test', 'fixtures', 'histories');
const only = process.argv.slice(2);
const counter = createTiktokenCounter();

async function main(): Promise<void> {
  const scenarios = new Scenarios();
  const environment = await AgentEnvironment.start({ script: scenarios.script });
  try {
    await environment.startWorker();
    const record = async (name: string, replies: Parameters<Scenarios['add']>[1], input: Partial<ResearchRunInput> = {}, during?: (workflowId: string) => Promise<void>) => {
      if (only.length && !only.includes(name)) return;
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
    // Four unparseable calls (format corrections, not stuck), an answer cut off at the output limit (asked for again), the answer.
    const unparseable = { content: '<tool_call>\n{"name": "lookup", "arguments": {"query": </tool_call>' };
    await record('unusable-replies', (turn) => (turn <= 4 ? unparseable : turn === 5 ? { content: '<answer>BYD sold more cars th', finishReason: 'length' } : answer('BYD')));
    // A server whose tokenizer counts 1.5 times our estimate: compression is calibrated with the reported ratio.
    await record(
      'calibrated-compression',
      (turn, request) => {
        if (request.body.stream === false) return { content: 'SUMMARY: BYD sold 4.27M vehicles in 2024.' };
        const call = request.modelCall ?? turn;
        const reply = call === 1 ? toolCall('lookup', { query: 'BYD' }, 'The quick brown fox jumps over the lazy dog. '.repeat(200)) : call <= 5 ? toolCall('lookup', { query: `step ${call}` }) : answer('BYD');
        const estimate = countConversationTokens(request.messages.map((message) => ({ role: 'user', content: String(message.content ?? '') })), counter);
        return { ...reply, promptTokens: Math.round(1.5 * estimate) };
      },
      { limits: { maxContextTokens: 8_000 }, loop: { compressAtFraction: 0.5, keepRecentTurns: 1, stuckDetection: false } },
    );
  } finally {
    await environment.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
