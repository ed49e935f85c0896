import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, test } from '@jest/globals';
import type { ChatMessage } from '../../src/core/messages';
import { AgentEnvironment, protocolProblems } from './support/agent-environment';
import {
  EverythingHttpServer,
  historyText,
  MCP_SERVER_ENTRIES,
  MCP_STDIO_TAP,
  tappedMessages,
} from './support/mcp-servers';
import { answer, runId, Scenarios, toolCall } from './support/scenarios';
import type { WorkerProcess } from './support/worker-process';

/**
 * MCP servers from npm, as a user configures them (REACT_AGENT_MCP_CONFIG), used by scripted
 * runs end to end: server-everything over stdio (behind a tap that logs what reaches it) and
 * over Streamable HTTP, server-filesystem and server-memory. Each tool call is an activity named
 * as the model sees the tool; results, errors, cancellation, a crashed server, an HTTP server
 * that was down, bad configuration and secrets.
 */
const SECRET = 'mcp-secret-token-5f2b9c71d0';
const scenarios = new Scenarios();
let environment: AgentEnvironment;
let http: EverythingHttpServer;
let worker: WorkerProcess;
let tapLog: string;
let workspace: string;
let configFile: string;

function writeConfig(name: string, servers: Record<string, unknown>): string {
  const file = join(environment.directory, name);
  writeFileSync(file, JSON.stringify({ mcpServers: servers }, null, 2));
  return file;
}

beforeAll(async () => {
  environment = await AgentEnvironment.start({ script: scenarios.script });
  http = await EverythingHttpServer.start();
  tapLog = join(environment.directory, 'everything-tap.log');
  workspace = join(environment.directory, 'files');
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'sales.csv'), 'company,vehicles_2024\nBYD,4272145\nTesla,1789226\n');
  configFile = writeConfig('mcp.json', {
    everything: {
      command: process.execPath,
      args: [MCP_STDIO_TAP, tapLog, process.execPath, MCP_SERVER_ENTRIES.everything, 'stdio'],
      env: { EVERYTHING_API_TOKEN: '${MCP_TEST_SECRET}' },
      tools: [
        'echo',
        'get-sum',
        'get-env',
        'get-tiny-image',
        'get-resource-reference',
        'trigger-long-running-operation',
      ],
      timeoutSeconds: 60,
    },
    web: {
      url: http.url,
      headers: { Authorization: 'Bearer ${MCP_TEST_SECRET}' },
      toolPrefix: 'web_',
      tools: ['echo', 'get-sum', 'trigger-long-running-operation'],
      idempotentTools: ['trigger-long-running-operation'],
      timeoutSeconds: 30,
    },
    files: {
      command: process.execPath,
      args: [MCP_SERVER_ENTRIES.filesystem, workspace],
      tools: ['read_text_file', 'list_directory'],
    },
    memory: {
      command: process.execPath,
      args: [MCP_SERVER_ENTRIES.memory],
      env: { MEMORY_FILE_PATH: join(environment.directory, 'memory.jsonl') },
    },
  });
  worker = await environment.startWorker({
    REACT_AGENT_MCP_CONFIG: configFile,
    REACT_AGENT_TOOLS: 'mcp:everything,mcp:web,mcp:files,mcp:memory',
    MCP_TEST_SECRET: SECRET,
  });
});

afterAll(async () => {
  await environment?.close();
  await http?.stop();
});

/** The observations of a deep-research transcript, in order. */
function observations(messages: ChatMessage[]): string[] {
  return messages.filter((message, index) => index > 1 && message.role === 'user').map((message) => message.content);
}

test('the worker lists each MCP tool with its server when it starts', () => {
  assert.match(
    worker.log,
    /mcp everything \(stdio: .*mcp-stdio-tap\.mjs.*, pid \d+\): echo, get-sum, get-env, get-tiny-image, get-resource-reference, trigger-long-running-operation/,
  );
  assert.match(
    worker.log,
    /mcp web \(Streamable HTTP: http:\/\/127\.0\.0\.1:\d+\/mcp\): web_echo \(its echo\), web_get-sum \(its get-sum\), web_trigger-long-running-operation/,
  );
  assert.match(worker.log, /mcp files \(stdio: .*\): read_text_file, list_directory/);
  assert.match(
    worker.log,
    /mcp memory \(stdio: .*\): create_entities, create_relations, add_observations, .*search_nodes/,
  );
  assert.match(
    worker.log,
    /react-agent worker: .*tools: lookup, .*echo \(mcp everything\), .*web_echo \(mcp web\), .*read_text_file \(mcp files\), .*create_entities \(mcp memory\)/,
  );
});

test('deep-research: a run calls tools of four MCP servers (stdio and Streamable HTTP) and gets their real results; no secret anywhere', async () => {
  const workflowId = scenarios.add(runId('mcp-deep-research'), [
    toolCall('echo', { message: 'hello over stdio' }),
    toolCall('web_get-sum', { a: 4272145, b: -1789226 }),
    toolCall('read_text_file', { path: join(workspace, 'sales.csv') }),
    toolCall('create_entities', {
      entities: [{ name: 'BYD', entityType: 'company', observations: ['sold 4,272,145 vehicles in 2024'] }],
    }),
    toolCall('search_nodes', { query: 'BYD' }),
    toolCall('get-tiny-image', {}),
    toolCall('get-resource-reference', {}),
    toolCall('get-env', {}),
    toolCall('read_text_file', { path: '/etc/passwd' }),
    answer('BYD sold 2,482,919 more vehicles than Tesla in 2024.'),
  ]);
  const handle = await environment.startRun(
    { question: 'Which company sold more cars in 2024, BYD or Tesla?' },
    workflowId,
  );
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  assert.match(
    messages[0]?.content ?? '',
    /"name":"echo"[\s\S]*"name":"web_get-sum"[\s\S]*"name":"read_text_file"[\s\S]*"name":"search_nodes"/,
  );
  const seen = observations(messages);
  assert.match(seen[0] ?? '', /Echo: hello over stdio/);
  assert.match(seen[1] ?? '', /The sum of 4272145 and -1789226 is 2482919\./);
  assert.match(seen[2] ?? '', /BYD,4272145/);
  assert.match(seen[3] ?? '', /"name": "BYD"/);
  assert.match(seen[4] ?? '', /sold 4,272,145 vehicles in 2024/);
  assert.match(
    seen[5] ?? '',
    /Here's the image you requested:[\s\S]*\[image: image\/png, [\d.]+ KB, not shown: this agent passes text only\][\s\S]*MCP logo/,
  );
  assert.match(
    seen[6] ?? '',
    /\[resource demo:\/\/resource\/dynamic\/text\/1, text\/plain\]\nResource 1: This is a plaintext resource/,
  );
  // The server was given the secret in its environment and prints it: the observation has it redacted.
  assert.match(seen[7] ?? '', /"EVERYTHING_API_TOKEN": "\[redacted\]"/);
  // The tool's own error (isError) is an observation the model can act on.
  assert.match(
    seen[8] ?? '',
    /^<tool_response>\nError: the tool "read_text_file" \(MCP server "files"\) reported an error: .*Access denied - path outside allowed directories/,
  );

  const history = await handle.fetchHistory();
  const scheduled = (history.events ?? [])
    .map((event) => event.activityTaskScheduledEventAttributes?.activityType?.name)
    .filter(Boolean);
  for (const tool of ['echo', 'web_get-sum', 'read_text_file', 'create_entities', 'search_nodes', 'get-env'])
    assert.ok(scheduled.includes(tool), `${tool} ran as an activity named after it`);
  const failedAttempts = (history.events ?? []).filter((event) => event.activityTaskFailedEventAttributes).length;
  assert.equal(failedAttempts, 0, 'the tool error was an observation, not a failed attempt');
  const text = historyText(history);
  assert.ok(text.includes('Echo: hello over stdio'), 'the history was decoded');
  assert.ok(!text.includes(SECRET), 'no secret in history');
  assert.ok(!worker.log.includes(SECRET), 'no secret in the worker log');
  assert.ok(!JSON.stringify(result).includes(SECRET), 'no secret in the result');
  const transcripts = join(environment.directory, 'transcripts');
  for (const folder of readdirSync(transcripts)) {
    for (const file of readdirSync(join(transcripts, folder))) {
      const path = join(transcripts, folder, file);
      if (statSync(path).isFile()) assert.ok(!readFileSync(path, 'utf8').includes(SECRET), `transcript blob ${file}`);
    }
  }
});

test('native and classic protocols call MCP tools too', async () => {
  const nativeId = scenarios.add(runId('mcp-native'), [
    {
      toolCalls: [
        { id: 'call_echo', name: 'web_echo', arguments: '{"message": "native over HTTP"}' },
        { id: 'call_dir', name: 'list_directory', arguments: JSON.stringify({ path: workspace }) },
      ],
    },
    { content: 'Done natively.' },
  ]);
  const native = await (await environment.startRun({ question: 'Native?', protocol: 'native' }, nativeId)).result();
  assert.equal(native.termination, 'answer');
  const nativeMessages = await environment.transcript(native);
  assert.deepEqual(
    nativeMessages.map((message) => message.role),
    ['system', 'user', 'assistant', 'tool', 'tool', 'assistant'],
  );
  assert.equal(nativeMessages[3]?.content, 'Echo: native over HTTP');
  assert.match(nativeMessages[4]?.content ?? '', /\[FILE\] sales\.csv/);

  const classicId = scenarios.add(runId('mcp-classic'), [
    { content: 'Thought: I will add.\nAction: get-sum\nAction Input: {"a": 2, "b": 40}' },
    { content: 'Thought: Done.\nFinal Answer: 42' },
  ]);
  const classic = await (await environment.startRun({ question: 'Classic?', protocol: 'classic' }, classicId)).result();
  assert.equal(classic.termination, 'answer');
  const classicMessages = await environment.transcript(classic);
  assert.match(classicMessages[3]?.content ?? '', /^Observation: The sum of 2 and 40 is 42\./);
});

test('a cancelled run cancels the long-running MCP call: the server receives notifications/cancelled for it', async () => {
  const workflowId = scenarios.add(runId('mcp-cancel'), [
    toolCall('trigger-long-running-operation', { duration: 60, steps: 60 }),
    answer('never'),
  ]);
  const handle = await environment.startRun({ question: 'Wait for a long operation.' }, workflowId);
  const deadline = Date.now() + 30_000;
  let request: { id?: number } | undefined;
  while (!request && Date.now() < deadline) {
    request = tappedMessages(tapLog).find(
      (message) => message.method === 'tools/call' && message.params?.name === 'trigger-long-running-operation',
    );
    if (!request) await new Promise((done) => setTimeout(done, 100));
  }
  assert.ok(request, 'the call reached the server');
  const cancelledAt = Date.now();
  await handle.cancel();
  const result = await handle.result();
  assert.equal(result.termination, 'cancelled');
  assert.ok(Date.now() - cancelledAt < 15_000, 'the run ended soon after the cancel');
  const cancellation = tappedMessages(tapLog).find(
    (message) => message.method === 'notifications/cancelled' && message.params?.requestId === request?.id,
  );
  assert.ok(cancellation, `the server received notifications/cancelled for request ${request?.id}`);
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), [], 'the cancelled call is still answered in the transcript');
});

test('a stdio server killed mid-call: that call is not repeated (not idempotent), the server is restarted and the next call works', async () => {
  const before = tappedMessages(tapLog).filter((message) => message.method === 'tools/call').length;
  const workflowId = scenarios.add(runId('mcp-crash'), [
    toolCall('trigger-long-running-operation', { duration: 20, steps: 20 }),
    toolCall('echo', { message: 'after the crash' }),
    answer('recovered'),
  ]);
  const handle = await environment.startRun({ question: 'Survive a crash.' }, workflowId);
  const deadline = Date.now() + 30_000;
  while (
    tappedMessages(tapLog).filter((message) => message.method === 'tools/call').length === before &&
    Date.now() < deadline
  )
    await new Promise((done) => setTimeout(done, 100));
  const taps = readFileSync(tapLog, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{"tap"'));
  // The server itself (the tap then exits with it, closing the worker's pipes).
  const { server } = JSON.parse(taps.at(-1) as string) as { server: number };
  process.kill(server, 'SIGKILL');
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  const seen = observations(await environment.transcript(result));
  assert.match(
    seen[0] ?? '',
    /The connection to MCP server "everything" closed while "trigger-long-running-operation" ran.*not retried/,
  );
  assert.match(seen[1] ?? '', /Echo: after the crash/);
  assert.match(worker.log, /mcp everything: the server exited; restarting it in [\d.]+ s/);
  assert.match(worker.log, /mcp everything: restarted \(pid \d+\)/);
  const calls = tappedMessages(tapLog).filter(
    (message) => message.method === 'tools/call' && message.params?.name === 'trigger-long-running-operation',
  );
  assert.equal(
    calls.filter((call) => (call.params?.arguments as { duration?: number })?.duration === 20).length,
    1,
    'the interrupted call was sent once',
  );
});

test('a Streamable HTTP server that is down: the call is retried (it never reached the server) and succeeds once the server is back', async () => {
  const port = http.port;
  await http.stop();
  const workflowId = scenarios.add(runId('mcp-http-down'), [
    toolCall('web_echo', { message: 'are you back?' }),
    answer('it was back'),
  ]);
  const handle = await environment.startRun({ question: 'Reach a server that restarts.' }, workflowId);
  await new Promise((done) => setTimeout(done, 2_500));
  http = await EverythingHttpServer.start(port);
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  assert.match(observations(await environment.transcript(result))[0] ?? '', /Echo: are you back\?/);
  const history = await handle.fetchHistory();
  const failures = (history.events ?? []).flatMap((event) =>
    event.activityTaskStartedEventAttributes ? [event.activityTaskStartedEventAttributes.attempt ?? 1] : [],
  );
  assert.ok(Math.max(...failures) > 1, `the call took more than one attempt (${failures.join(', ')})`);
  assert.match(historyText(history), /ReactAgent\.Mcp\.Unavailable|did not reach the server/);
});

/** Starts a worker that must refuse to start; returns what it printed. */
async function refusedStart(config: string, extra: Record<string, string> = {}): Promise<string> {
  try {
    const started = await environment.startWorker({
      REACT_AGENT_MCP_CONFIG: config,
      REACT_AGENT_TOOLS: 'none',
      ...extra,
    });
    await started.crash();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the worker started');
}

test('bad configuration is refused at worker start with a message naming the problem; an optional server is left out', async () => {
  const exits = writeConfig('exits.json', {
    broken: {
      command: process.execPath,
      args: ['-e', 'console.error("fatal: cannot open /data/graph.db"); process.exit(3)'],
    },
  });
  assert.match(
    await refusedStart(exits),
    /MCP server "broken" \(stdio: .*\) did not start: [\s\S]*its stderr ended with:[\s\S]*fatal: cannot open \/data\/graph\.db[\s\S]*mark it "optional": true/,
  );

  const unresolved = writeConfig('unresolved.json', {
    memory: { command: process.execPath, args: [MCP_SERVER_ENTRIES.memory], env: { TOKEN: '${MCP_UNSET_VARIABLE}' } },
  });
  assert.match(
    await refusedStart(unresolved),
    /server "memory", env\.TOKEN uses \$\{MCP_UNSET_VARIABLE\}, but MCP_UNSET_VARIABLE is not set/,
  );

  const transport = writeConfig('sse.json', { old: { type: 'sse', url: 'http://127.0.0.1:9/sse' } });
  assert.match(await refusedStart(transport), /server "old", field "type": unknown transport "sse"/);

  const missing = writeConfig('missing.json', { empty: { args: ['x'] } });
  assert.match(await refusedStart(missing), /server "empty": missing "command"/);

  const duplicate = writeConfig('duplicate.json', {
    one: { command: process.execPath, args: [MCP_SERVER_ENTRIES.everything, 'stdio'], tools: ['echo'] },
    two: { url: http.url, tools: ['echo'] },
  });
  assert.match(
    await refusedStart(duplicate, { REACT_AGENT_TOOLS: 'mcp:one,mcp:two' }),
    /Two tools are named "echo": the tool "echo" of MCP server "two" and the tool "echo" of MCP server "one"/,
  );

  const optional = writeConfig('optional.json', {
    broken: { command: process.execPath, args: ['-e', 'process.exit(3)'], optional: true },
    memory: {
      command: process.execPath,
      args: [MCP_SERVER_ENTRIES.memory],
      env: { MEMORY_FILE_PATH: join(environment.directory, 'memory-2.jsonl') },
      tools: ['read_graph'],
    },
  });
  const started = await environment.startWorker({
    REACT_AGENT_MCP_CONFIG: optional,
    REACT_AGENT_TOOLS: 'mcp:memory,mcp:broken',
    REACT_AGENT_TASK_QUEUE: `${environment.taskQueue}-optional`,
  });
  assert.match(started.log, /mcp broken: left out \(optional\): MCP server "broken" .* did not start/);
  assert.match(started.log, /tools: .*read_graph \(mcp memory\)/);
  await started.crash();
});

test('a worker SIGKILLed mid-call: another worker completes the idempotent call and does not repeat the other', async () => {
  // This test takes the queue's workers over: the first one goes, two fresh ones take its place.
  await worker.crash();
  const workerEnvironment = {
    REACT_AGENT_MCP_CONFIG: configFile,
    REACT_AGENT_TOOLS: 'mcp:everything,mcp:web,mcp:files,mcp:memory',
    MCP_TEST_SECRET: SECRET,
    // Heartbeats leave at least every second (default 5 s), so the wait below is short.
    REACT_AGENT_HEARTBEAT_THROTTLE_SECONDS: '1',
  };
  const first = await environment.startWorker(workerEnvironment);
  const before = tappedMessages(tapLog).filter((message) => message.method === 'tools/call').length;
  const workflowId = scenarios.add(runId('mcp-worker-killed'), [
    {
      content:
        '<think>Two long operations.</think>\n<tool_call>\n{"name": "trigger-long-running-operation", "arguments": {"duration": 40, "steps": 40}}\n</tool_call>\n' +
        '<tool_call>\n{"name": "web_trigger-long-running-operation", "arguments": {"duration": 15, "steps": 15}}\n</tool_call>',
    },
    answer('survived'),
  ]);
  const handle = await environment.startRun({ question: 'Survive a lost worker.' }, workflowId);
  const deadline = Date.now() + 30_000;
  while (
    tappedMessages(tapLog).filter((message) => message.method === 'tools/call').length === before &&
    Date.now() < deadline
  )
    await new Promise((done) => setTimeout(done, 100));
  // Past the heartbeat throttle (1 s here), so the server has each attempt's record that its request left.
  await new Promise((done) => setTimeout(done, 2_000));
  await first.crash();
  // The retries wait for the heartbeat timeout (30 s): time enough for a fresh worker to start.
  const second = await environment.startWorker(workerEnvironment);
  const result = await handle.result();
  assert.equal(result.termination, 'answer');
  const messages = await environment.transcript(result);
  assert.deepEqual(protocolProblems(messages), []);
  const [stdioCall, httpCall] = (messages[3]?.content ?? '').split('</tool_response>');
  assert.match(
    stdioCall ?? '',
    /may have reached the server before it was interrupted; it is not repeated, since the tool is not marked idempotent/,
  );
  assert.match(httpCall ?? '', /Long running operation completed\. Duration: 15 seconds/);
  const history = await handle.fetchHistory();
  const webScheduled = (history.events ?? []).find(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'web_trigger-long-running-operation',
  )?.eventId;
  const webStarted = (history.events ?? []).find(
    (event) =>
      event.activityTaskStartedEventAttributes &&
      String(event.activityTaskStartedEventAttributes.scheduledEventId) === String(webScheduled),
  );
  assert.equal(
    webStarted?.activityTaskStartedEventAttributes?.attempt,
    2,
    'the idempotent call was made again by the second worker',
  );
  const identities = new Set(
    (history.events ?? []).flatMap((event) =>
      event.activityTaskStartedEventAttributes?.identity ? [event.activityTaskStartedEventAttributes.identity] : [],
    ),
  );
  assert.ok(
    [...identities].some((identity) => identity.startsWith(`${second.pid}@`)),
    'the second worker ran the retries',
  );
  assert.equal(
    tappedMessages(tapLog).filter(
      (message) =>
        message.method === 'tools/call' && (message.params?.arguments as { duration?: number })?.duration === 40,
    ).length,
    1,
    'the non-idempotent call reached a server once',
  );
});
