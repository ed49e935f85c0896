import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { WorkflowHandle } from '@temporalio/client';
import { approveToolCallUpdate, progressQuery, type RunProgress } from '../../src/core/message-definitions';
import type { ChatMessage } from '../../src/core/messages';
import type { ToolListing } from '../../src/cli/tool-listing';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import { CliProcess } from './support/cli-process';
import { historyText, MCP_SERVER_ENTRIES, MCP_STDIO_TAP, tappedMessages } from './support/mcp-servers';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';

/**
 * Issue 18, against server-everything from npm over stdio (behind the tap that logs what reaches
 * it): calls of a server configured `requiresApproval: true` wait for the approval update, an
 * approved one reaches the server, a denied one never does; a run's tool list is fixed when it
 * starts (stored by reference): a worker whose server now lists other tools changes neither what
 * the model is shown nor what the run may call, and a call of a tool that has gone is answered
 * with a clear observation; `react-agent tools` lists what a worker would offer, and refuses a bad
 * configuration as the worker does.
 */
const scenarios = new Scenarios();
let environment: AgentEnvironment;
let tapLog: string;

function writeConfig(name: string, servers: Record<string, unknown>): string {
  const file = join(environment.directory, name);
  writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
  return file;
}

/** server-everything over stdio behind the tap, as the server "guarded" whose every call needs approval. */
function guardedServer(tools: string[], log = tapLog): Record<string, unknown> {
  return {
    command: process.execPath,
    args: [MCP_STDIO_TAP, log, process.execPath, MCP_SERVER_ENTRIES.everything, 'stdio'],
    tools,
    requiresApproval: true,
    timeoutSeconds: 30,
  };
}

const toolCalls = (name: string) =>
  tappedMessages(tapLog).filter((message) => message.method === 'tools/call' && message.params?.name === name);

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  tapLog = join(environment.directory, 'guarded-tap.log');
});

afterAll(async () => {
  await environment?.close();
});

/** Polls `progress` until a call waits for approval; returns the progress that shows it. */
async function awaitingApproval(handle: WorkflowHandle, timeoutMs = 60_000): Promise<RunProgress> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const progress = await handle.query(progressQuery).catch(() => undefined);
    if (progress && progress.awaitingApproval.length > 0) return progress;
    if (Date.now() > deadline)
      throw new Error(`no call awaited approval within ${timeoutMs} ms: ${JSON.stringify(progress)}`);
    await new Promise((done) => setTimeout(done, 200));
  }
}

/** The observations of a deep-research transcript, in order. */
function observations(messages: ChatMessage[]): string[] {
  return messages.filter((message, index) => index > 1 && message.role === 'user').map((message) => message.content);
}

test('requiresApproval: the run waits, an approved call reaches the MCP server and its result lands in the transcript; a denied one never reaches it', async () => {
  const worker = await environment.startWorker({
    REACT_AGENT_MCP_CONFIG: writeConfig('guarded.json', { guarded: guardedServer(['echo', 'get-sum']) }),
    REACT_AGENT_TOOLS: 'mcp:guarded',
  });
  try {
    assert.match(worker.log, /mcp guarded \(stdio: .*mcp-stdio-tap\.mjs.*\): echo, get-sum/);
    assert.match(worker.log, /react-agent worker: .*tools: .*echo \(mcp guarded\), get-sum \(mcp guarded\)/);

    // Approved: the call waits, then goes to the server.
    const approvedId = scenarios.add(runId('mcp-approved'), [toolCall('get-sum', { a: 19, b: 23 }), answer('42')]);
    const approvedRun = await environment.startRun({ question: 'What is 19 + 23?' }, approvedId);
    const waiting = await awaitingApproval(approvedRun);
    assert.equal(waiting.phase, 'running_tools');
    assert.equal(waiting.awaitingApproval.length, 1);
    assert.equal(waiting.awaitingApproval[0]?.tool, 'get-sum');
    assert.match(waiting.awaitingApproval[0]?.arguments ?? '', /"a":19,"b":23/);
    assert.deepEqual(waiting.openToolCalls, ['get-sum({"a":19,"b":23})']);
    // Three seconds on, still waiting, and nothing reached the server.
    await new Promise((done) => setTimeout(done, 3_000));
    assert.equal((await approvedRun.query(progressQuery)).awaitingApproval.length, 1);
    assert.equal(toolCalls('get-sum').length, 0, 'no call before the approval');
    const decided = await approvedRun.executeUpdate(approveToolCallUpdate, {
      args: [{ callId: waiting.awaitingApproval[0]?.callId as string, approved: true, reviewer: 'alice' }],
    });
    assert.deepEqual(decided, { callId: waiting.awaitingApproval[0]?.callId, approved: true });
    const approved = await approvedRun.result();
    assert.equal(approved.termination, 'answer');
    const approvedMessages = await environment.transcript(approved);
    assert.deepEqual(protocolProblems(approvedMessages), []);
    assert.match(observations(approvedMessages)[0] ?? '', /The sum of 19 and 23 is 42\./);
    assert.equal(toolCalls('get-sum').length, 1, 'the approved call reached the server once');
    assert.deepEqual(toolCalls('get-sum')[0]?.params?.arguments, { a: 19, b: 23 });

    // Denied: answered with the refusal, never sent.
    const deniedId = scenarios.add(runId('mcp-denied'), [
      toolCall('echo', { message: 'never sent 7c1f' }),
      answer('denied'),
    ]);
    const deniedRun = await environment.startRun({ question: 'Echo something.' }, deniedId);
    const asked = await awaitingApproval(deniedRun);
    assert.equal(asked.awaitingApproval[0]?.tool, 'echo');
    await deniedRun.executeUpdate(approveToolCallUpdate, {
      args: [
        {
          callId: asked.awaitingApproval[0]?.callId as string,
          approved: false,
          reviewer: 'bob',
          reason: 'not this one',
        },
      ],
    });
    const denied = await deniedRun.result();
    assert.equal(denied.termination, 'answer');
    const deniedMessages = await environment.transcript(denied);
    assert.deepEqual(protocolProblems(deniedMessages), []);
    assert.match(observations(deniedMessages)[0] ?? '', /Not run: the call of "echo" was denied by bob: not this one/);
    assert.ok(!readFileSync(tapLog, 'utf8').includes('never sent 7c1f'), 'the denied call never reached the server');
    // No `echo` activity was scheduled at all.
    const scheduled = ((await deniedRun.fetchHistory()).events ?? [])
      .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)
      .filter(Boolean);
    assert.ok(!scheduled.includes('echo'), `scheduled: ${scheduled.join(', ')}`);
  } finally {
    await worker.crash();
  }
});

test('the tool list is fixed when the run starts: a worker whose server lists other tools changes neither what the model is shown nor what the run may call; a call of a tool that has gone is a clear observation', async () => {
  const before = writeConfig('before.json', { guarded: guardedServer(['echo', 'get-sum']) });
  const after = writeConfig('after.json', { guarded: guardedServer(['echo', 'get-env']) });
  const sumCallsBefore = toolCalls('get-sum').length;
  const first = await environment.startWorker({ REACT_AGENT_MCP_CONFIG: before, REACT_AGENT_TOOLS: 'mcp:guarded' });
  const workflowId = scenarios.add(runId('mcp-tool-gone'), [
    { toolCalls: [{ id: 'call_sum', name: 'get-sum', arguments: '{"a": 1, "b": 2}' }] },
    { content: 'get-sum has gone.' },
  ]);
  const handle = await environment.startRun({ question: 'What is 1 + 2?', protocol: 'native' }, workflowId);
  const waiting = await awaitingApproval(handle);
  assert.equal(waiting.awaitingApproval[0]?.tool, 'get-sum');
  // The worker goes while the call waits; the one that takes over has the server's new tool list.
  await first.crash();
  const second = await environment.startWorker({ REACT_AGENT_MCP_CONFIG: after, REACT_AGENT_TOOLS: 'mcp:guarded' });
  assert.match(second.log, /mcp guarded \(stdio: .*\): echo, get-env/);
  try {
    await handle.executeUpdate(approveToolCallUpdate, {
      args: [{ callId: waiting.awaitingApproval[0]?.callId as string, approved: true }],
    });
    const result = await handle.result();
    assert.equal(result.termination, 'answer');
    assert.equal(result.prediction, 'get-sum has gone.');
    const messages = await environment.transcript(result);
    assert.deepEqual(
      messages.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool', 'assistant'],
    );
    const gone = messages[3]?.content ?? '';
    assert.match(
      gone,
      /^Error: the tool "get-sum" is no longer offered: it was available when this research started, but the worker that took the call does not have it now \(its MCP server may no longer list it/,
    );
    // The run's own tools (the test modules' and the server's echo), not the new worker's get-env.
    assert.match(gone, /this research's tools: lookup, .*, echo\) or answer with what you have\.$/);
    assert.doesNotMatch(gone, /get-env/);
    assert.equal(toolCalls('get-sum').length, sumCallsBefore, 'no get-sum call reached a server');

    // Both model calls, on either worker, were shown the tools the run started with: get-sum, not get-env.
    const requests = environment.requestsOf(workflowId);
    assert.equal(requests.length, 2);
    const shown = requests.map((request) =>
      (request.body.tools as Array<{ function: { name: string; description: string; parameters: unknown } }>).map(
        (tool) => tool.function,
      ),
    );
    // The test modules' tools first, then the server's: get-sum still there, get-env never.
    assert.deepEqual(
      shown.map((tools) => tools.map((tool) => tool.name).slice(-2)),
      [
        ['echo', 'get-sum'],
        ['echo', 'get-sum'],
      ],
    );
    assert.ok(shown.every((tools) => !tools.some((tool) => tool.name === 'get-env')));
    assert.deepEqual(shown[1], shown[0], 'the same descriptions and schemas');
    assert.match(shown[1]?.at(-1)?.description ?? '', /sum of two numbers/);

    // History holds the list's reference and what the workflow schedules with, not the descriptions and schemas.
    const history = await handle.fetchHistory();
    const text = historyText(history);
    // (Payloads decoded inside the history's JSON, so their quotes come escaped.)
    assert.ok(/toolSpecs\\":\\"sha256:[0-9a-f]{64}/.test(text), "the stored list's reference is in history");
    assert.ok(!text.includes('Returns the sum of two numbers'), 'no tool description in history');
    // The list by reference rides on the run's one patch marker, lean-activity-inputs, which implies
    // light-bookkeeping and so it (issue 34).
    assert.ok(text.includes('lean-activity-inputs'), 'the patch marker is recorded');
    const attempts = (history.events ?? []).flatMap((event) =>
      event.activityTaskStartedEventAttributes ? [event.activityTaskStartedEventAttributes.attempt ?? 1] : [],
    );
    assert.ok(
      Math.max(...attempts) > 1,
      'the missing tool was retried (another worker might have had it) before the run gave up on it',
    );
  } finally {
    await second.crash();
  }
});

test('react-agent tools lists the tools a worker would offer, each with its server, approval and description, and closes the servers it started', async () => {
  const listTap = join(environment.directory, 'list-tap.log');
  const config = writeConfig('list.json', {
    guarded: guardedServer(['echo', 'get-sum'], listTap),
    web: {
      command: process.execPath,
      args: [MCP_SERVER_ENTRIES.everything, 'stdio'],
      tools: ['echo'],
      toolPrefix: 'web_',
    },
  });
  const cliEnvironment = {
    ...environment.environment,
    REACT_AGENT_MCP_CONFIG: config,
    REACT_AGENT_TOOLS: 'search,mcp:guarded,mcp:web',
  };
  const table = await CliProcess.complete(['tools'], { environment: cliEnvironment });
  assert.equal(table.code, 0, table.stderr);
  const lines = table.stdout.trim().split('\n');
  assert.match(lines[0] ?? '', /^TOOL +SOURCE +APPROVAL +DESCRIPTION$/);
  assert.ok(
    lines.some((line) => /^search +built-in +- +Search /.test(line)),
    table.stdout,
  );
  assert.ok(
    lines.some((line) => /^lookup +module +- +Look up a fact\.$/.test(line)),
    table.stdout,
  );
  // The test modules' guarded_lookup, and the guarded server's two tools: 3 need approval.
  assert.ok(
    lines.some((line) => /^guarded_lookup +module +required /.test(line)),
    table.stdout,
  );
  assert.ok(
    lines.some((line) => /^echo +mcp guarded +required +Echoes back the input string$/.test(line)),
    table.stdout,
  );
  assert.ok(
    lines.some((line) => /^get-sum +mcp guarded +required +Returns the sum of two numbers$/.test(line)),
    table.stdout,
  );
  assert.ok(
    lines.some((line) => /^web_echo +mcp web, its echo +- +Echoes back the input string$/.test(line)),
    table.stdout,
  );
  assert.match(
    lines.at(-1) ?? '',
    /^\d+ tools: \d+ built-in or from modules, 3 from 2 MCP servers; 3 need approval\.$/,
  );

  const json = await CliProcess.complete(['tools', '--json'], { environment: cliEnvironment });
  assert.equal(json.code, 0, json.stderr);
  const listing = JSON.parse(json.stdout) as ToolListing;
  assert.deepEqual(
    listing.tools.filter((tool) => tool.source === 'mcp'),
    [
      {
        name: 'echo',
        source: 'mcp',
        server: 'guarded',
        requiresApproval: true,
        description: 'Echoes back the input string',
      },
      {
        name: 'get-sum',
        source: 'mcp',
        server: 'guarded',
        requiresApproval: true,
        description: 'Returns the sum of two numbers',
      },
      {
        name: 'web_echo',
        source: 'mcp',
        server: 'web',
        serverToolName: 'echo',
        requiresApproval: false,
        description: 'Echoes back the input string',
      },
    ],
  );
  assert.deepEqual(listing.skippedServers, []);
  // It connected as the worker does (initialize, tools/list) and stopped what it started.
  assert.ok(tappedMessages(listTap).some((message) => message.method === 'tools/list'));
  const servers = readFileSync(listTap, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{"tap"'))
    .map((line) => JSON.parse(line) as { tap: number; server: number });
  assert.equal(servers.length, 2, 'one server started per listing');
  for (const { tap, server } of servers) {
    for (const pid of [tap, server]) assert.throws(() => process.kill(pid, 0), /ESRCH/, `process ${pid} is gone`);
  }
});

test('react-agent tools refuses a bad configuration as the worker does, exit code 2', async () => {
  const cases: Array<[Record<string, unknown>, RegExp]> = [
    [{ old: { type: 'sse', url: 'http://127.0.0.1:9/sse' } }, /server "old", field "type": unknown transport "sse"/],
    [
      { broken: { command: process.execPath, args: ['-e', 'console.error("fatal: no graph here"); process.exit(3)'] } },
      /MCP server "broken" \(stdio: .*\) did not start: [\s\S]*fatal: no graph here[\s\S]*mark it "optional": true/,
    ],
    [
      {
        memory: {
          command: process.execPath,
          args: [MCP_SERVER_ENTRIES.memory],
          env: { TOKEN: '${MCP_UNSET_VARIABLE}' },
        },
      },
      /env\.TOKEN uses \$\{MCP_UNSET_VARIABLE\}, but MCP_UNSET_VARIABLE is not set/,
    ],
  ];
  for (const [index, [servers, message]] of cases.entries()) {
    const config = writeConfig(`bad-${index}.json`, servers);
    const listed = await CliProcess.complete(['tools'], {
      environment: { ...environment.environment, REACT_AGENT_MCP_CONFIG: config, REACT_AGENT_TOOLS: 'none' },
    });
    assert.equal(listed.code, 2, `${config}: ${listed.stderr}`);
    assert.match(listed.stderr, message);
    assert.match(listed.stderr, /^REACT_AGENT_MCP_CONFIG \(/);
    assert.equal(listed.stdout, '');
    // The worker refuses the same configuration with the same message.
    const refused = await environment.startWorker({ REACT_AGENT_MCP_CONFIG: config, REACT_AGENT_TOOLS: 'none' }).then(
      async (worker) => {
        await worker.crash();
        return 'the worker started';
      },
      (error: Error) => error.message,
    );
    assert.ok(
      refused.includes(listed.stderr.trim().split('\n')[0] as string),
      `worker: ${refused}\ntools: ${listed.stderr}`,
    );
  }
  const usage = await CliProcess.complete(['tools', '--jsn'], { environment: environment.environment });
  assert.equal(usage.code, 2);
  assert.match(usage.stderr, /unknown argument --jsn[\s\S]*Usage: react-agent tools \[--json\]/);
});
