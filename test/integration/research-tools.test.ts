import assert from 'node:assert/strict';
import { createServer, type AddressInfo } from 'node:net';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import { KnowledgeBase } from '../../src/knowledge-base/knowledge-base';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

/**
 * The research tools wired as the worker wires them (REACT_AGENT_TOOLS default: all), used by a
 * scripted run end to end through Temporal: search over a real knowledge base, parse_file in the
 * workspace, python in its sandbox.
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;
let workspace: string;

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  const knowledgeBase = join(environment.directory, 'knowledge-base.sqlite');
  const base = KnowledgeBase.open(knowledgeBase);
  await base.add([resolve(__dirname, '../../samples/knowledge-base')]);
  base.close();
  workspace = join(environment.directory, 'workspace');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'sales.csv'), 'company,vehicles_2024\nBYD,4272145\nTesla,1789226\n');
  await environment.startWorker({
    REACT_AGENT_TOOLS: 'search,visit,python,parse_file',
    REACT_AGENT_KNOWLEDGE_BASE: knowledgeBase,
    REACT_AGENT_WORKSPACE_DIRS: workspace,
  });
});

afterAll(async () => {
  await environment?.close();
});

test('a run uses search, parse_file and python as activities and answers from their results', async () => {
  const workflowId = scenarios.add(runId('research-tools'), [
    toolCall('search', { query: ['BYD 2024 sales', 'Tesla 2024 deliveries'] }),
    toolCall('parse_file', { files: ['sales.csv'] }),
    {
      content:
        '<think>Compute the gap.</think>\n<tool_call>\n{"name": "python", "arguments": {}}\n<code>\nprint(4272145 - 1789226)\n</code>\n</tool_call>',
    },
    answer('BYD sold 2,482,919 more vehicles than Tesla in 2024.'),
  ]);
  const handle = await environment.startRun(
    { question: 'Which company sold more cars in 2024, BYD or Tesla, and by how much?' },
    workflowId,
  );
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(
    messages[0]?.content ?? '',
    /"name":"search"[\s\S]*"name":"visit"[\s\S]*"name":"python"[\s\S]*"name":"parse_file"/,
  );
  assert.match(messages[3]?.content ?? '', /BYD 2024 sales[\s\S]*byd-2024-sales\.md/);
  assert.match(messages[5]?.content ?? '', /BYD,4272145/);
  assert.match(messages[7]?.content ?? '', /2482919/);
  const history = await handle.fetchHistory();
  const activityTypes = (history.events ?? [])
    .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter(Boolean);
  for (const tool of ['search', 'parse_file', 'python'])
    assert.ok(activityTypes.includes(tool), `${tool} ran as an activity named after it`);
});

test('the tools refuse what they must: a path outside the workspace, a private address, python reaching the network', async () => {
  let connections = 0;
  const listener = createServer((socket) => {
    connections += 1;
    socket.end('hello');
  });
  await new Promise<void>((done) => listener.listen(0, '127.0.0.1', done));
  const port = (listener.address() as AddressInfo).port;
  const workflowId = scenarios.add(runId('research-tools-refusals'), [
    toolCall('parse_file', { files: ['../../../etc/passwd'] }),
    toolCall('visit', { url: ['http://127.0.0.1:9/'] }),
    {
      content: `<tool_call>\n{"name": "python", "arguments": {}}\n<code>\nimport socket\nsocket.create_connection(("127.0.0.1", ${port}), timeout=2)\nprint("connected")\n</code>\n</tool_call>`,
    },
    answer('refused'),
  ]);
  const result = await (await environment.startRun({ question: 'Try to escape.' }, workflowId)).result();
  assert.equal(result.termination, 'answer');
  const messages = await environment.transcript(result);
  assert.doesNotMatch(messages[3]?.content ?? '', /root:x:0:0/);
  assert.match(messages[3]?.content ?? '', /outside the workspace/);
  assert.match(messages[5]?.content ?? '', /127\.0\.0\.1, a loopback address/);
  assert.match(messages[7]?.content ?? '', /Traceback/);
  assert.doesNotMatch(messages[7]?.content ?? '', /connected/);
  assert.equal(connections, 0, 'nothing reached the listener on the host loopback');
  listener.close();
});
