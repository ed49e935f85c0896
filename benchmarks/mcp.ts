/**
 * An MCP tool call through the agent beside the same call made directly with the SDK, in one run:
 * server-everything's `echo` over stdio.
 *
 *   npm run benchmark:mcp                      (30 calls each)
 *   npm run benchmark:mcp -- --calls 50
 *
 * Direct: `@modelcontextprotocol/sdk`'s Client on a server-everything it started, `callTool`
 * one after another (after 3 warm-up calls). Through the agent: a real worker process
 * (worker/main.ts) started with REACT_AGENT_MCP_CONFIG naming the same server, a dev server and
 * the scripted model server asking for `echo` once per turn (after a 3-call warm-up run); the
 * durable call's times are read from history: scheduled → completed (what the run waits for a
 * tool call: dispatch, the activity, storing the output, reporting back) and started → completed
 * (the activity on the worker). Prints p50 / p95 / mean of each beside the machine's load.
 */
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client as McpClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { Client } from '@temporalio/client';
import { countAssistantMessages, type Script } from '../test/fakes/scripted-model-server';
import { startBenchmarkStack } from './benchmark-stack';
import { argument, describeLoad, percentile, startWorkerProcess, workerEnvironment } from './fleet-helpers';

const CALLS = Number(argument('calls', '30'));
const EVERYTHING = resolve(__dirname, '../node_modules/@modelcontextprotocol/server-everything/dist/index.js');

const script: Script = (request) => {
  const turn = countAssistantMessages(request.messages) + 1;
  const calls = Number(/calls=(\d+)/.exec(request.workflowId ?? '')?.[1] ?? CALLS);
  return turn > calls
    ? { content: '<think>Enough.</think>\n<answer>done</answer>' }
    : {
        content: `<think>Call ${turn}.</think>\n<tool_call>\n{"name": "echo", "arguments": {"message": "call ${turn}"}}\n</tool_call>`,
      };
};

function summary(values: number[]): string {
  const mean = values.reduce((total, value) => total + value, 0) / values.length;
  return `p50 ${percentile(values, 0.5).toFixed(1)} ms, p95 ${percentile(values, 0.95).toFixed(1)} ms, mean ${mean.toFixed(1)} ms`;
}

async function direct(calls: number): Promise<number[]> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [EVERYTHING, 'stdio'],
    stderr: 'pipe',
  });
  const client = new McpClient({ name: 'benchmark', version: '1' });
  await client.connect(transport);
  try {
    for (let warm = 0; warm < 3; warm += 1) await client.callTool({ name: 'echo', arguments: { message: 'warm-up' } });
    const times: number[] = [];
    for (let call = 1; call <= calls; call += 1) {
      const started = performance.now();
      const result = await client.callTool({ name: 'echo', arguments: { message: `call ${call}` } });
      times.push(performance.now() - started);
      if (!JSON.stringify(result).includes(`Echo: call ${call}`))
        throw new Error(`unexpected result ${JSON.stringify(result)}`);
    }
    return times;
  } finally {
    await client.close();
  }
}

/** Scheduled → completed and started → completed of each `echo` activity in a run, from its history. */
async function activityTimes(client: Client, workflowId: string): Promise<{ total: number[]; execution: number[] }> {
  const history = await client.workflow.getHandle(workflowId).fetchHistory();
  const millis = (time: { seconds?: unknown; nanos?: number | null } | null | undefined) =>
    Number(time?.seconds ?? 0) * 1000 + (time?.nanos ?? 0) / 1e6;
  const scheduled = new Map<string, number>();
  const started = new Map<string, number>();
  const total: number[] = [];
  const execution: number[] = [];
  for (const event of history.events ?? []) {
    const time = millis(event.eventTime);
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'echo')
      scheduled.set(String(event.eventId), time);
    const start = event.activityTaskStartedEventAttributes;
    if (start && scheduled.has(String(start.scheduledEventId))) started.set(String(start.scheduledEventId), time);
    const done = event.activityTaskCompletedEventAttributes;
    if (done && scheduled.has(String(done.scheduledEventId))) {
      total.push(time - (scheduled.get(String(done.scheduledEventId)) as number));
      execution.push(time - (started.get(String(done.scheduledEventId)) as number));
    }
  }
  return { total, execution };
}

async function main(): Promise<void> {
  console.log(`benchmark:mcp — ${CALLS} calls of server-everything's echo over stdio; ${describeLoad()}`);
  const directTimes = await direct(CALLS);
  console.log(`direct (SDK Client.callTool):               ${summary(directTimes)}  (${describeLoad()})`);

  const stack = await startBenchmarkStack({ name: 'mcp', script });
  try {
    const config = join(stack.directory, 'mcp.json');
    writeFileSync(
      config,
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, 'stdio'], tools: ['echo'] } },
      }),
    );
    const taskQueue = `benchmark-mcp-${process.pid}`;
    const worker = await startWorkerProcess({
      ...(await workerEnvironment({
        temporalAddress: stack.server.address,
        modelBaseUrl: stack.model.baseUrl,
        directory: stack.directory,
        taskQueue,
      })),
      REACT_AGENT_MCP_CONFIG: config,
      REACT_AGENT_TOOLS: 'mcp:everything',
    });
    try {
      const run = async (calls: number, label: string) => {
        const workflowId = `mcp-benchmark-${label}-calls=${calls}-${Date.now()}`;
        const started = performance.now();
        const handle = await stack.client.workflow.start('researchAgent', {
          taskQueue,
          workflowId,
          args: [{ question: 'Echo, please.', limits: { maxModelCalls: calls + 5 } }],
        });
        const result = (await handle.result()) as { termination: string; toolCalls: number };
        const wall = performance.now() - started;
        if (result.termination !== 'answer' || result.toolCalls !== calls)
          throw new Error(`run ${workflowId}: ${JSON.stringify(result)}`);
        return { workflowId, wall };
      };
      await run(3, 'warm-up');
      const measured = await run(CALLS, 'measured');
      const times = await activityTimes(stack.client, measured.workflowId);
      console.log(`through the agent, scheduled → completed:   ${summary(times.total)}  (${describeLoad()})`);
      console.log(`through the agent, started → completed:     ${summary(times.execution)}`);
      console.log(
        `the whole run: ${(measured.wall / 1000).toFixed(2)} s for ${CALLS} tool turns + the answer (${(measured.wall / (CALLS + 1)).toFixed(0)} ms per model call + tool call)`,
      );
      const overhead = percentile(times.total, 0.5) - percentile(directTimes, 0.5);
      console.log(
        `durability costs ${overhead.toFixed(1)} ms per call at the median (activity dispatch, heartbeat, storing the output, history), on top of the ${percentile(directTimes, 0.5).toFixed(1)} ms the call itself takes`,
      );
    } finally {
      await worker.stop();
    }
  } finally {
    await stack.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
