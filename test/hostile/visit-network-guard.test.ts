import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { AgentEnvironment } from '../integration/support/agent-environment';
import { historyText } from '../integration/support/mcp-servers';
import { answer, runId, Scenarios, toolCall } from '../integration/support/scenarios';

/*
 * Issue 28 #7: the visit tool's SSRF guard against a model that aims at the worker's own
 * machine. Two HTTP servers run in this test: the "allowed" one on 127.0.0.1 (the operator
 * listed it with its port) and a "neighbour" on every interface (0.0.0.0), standing in for the
 * Temporal Web UI or a metrics port on the worker's machine. The model visits the neighbour
 * through loopback on another port, through the machine's own interface address (on this CI
 * machine a TEST-NET-1 address, 192.0.2.2), and through IPv6 forms that carry an internal IPv4
 * address (IPv4-mapped, -translated, NAT64 /96 and the local-use /48, 6to4, Teredo). Only the
 * allowed server may answer; the worker stays alive; the neighbour's secret never reaches the
 * model, the history or the result.
 */

const NEIGHBOUR_SECRET = 'NEIGHBOUR-WEB-UI-SECRET-8f3a';
const ALLOWED_TEXT = 'The allowed intranet page says 42.';

const scenarios = new Scenarios();
let environment: AgentEnvironment;
let allowedServer: Server;
let neighbour: Server;
let neighbourRequests = 0;

function listen(server: Server, host: string): Promise<number> {
  return new Promise((resolve) => server.listen(0, host, () => resolve((server.address() as AddressInfo).port)));
}

/** The first IPv4 address of a non-loopback interface of this machine. */
function ownInterfaceAddress(): string {
  const address = Object.values(networkInterfaces())
    .flatMap((entries) => entries ?? [])
    .find((entry) => entry.family === 'IPv4' && !entry.internal)?.address;
  assert.ok(address, 'this test needs a machine with a non-loopback IPv4 interface');
  return address;
}

let allowedPort = 0;
let neighbourPort = 0;

beforeAll(async () => {
  allowedServer = createServer((_request, response) =>
    response
      .writeHead(200, { 'content-type': 'text/html' })
      .end(`<html><head><title>Intranet</title></head><body><p>${ALLOWED_TEXT}</p></body></html>`),
  );
  neighbour = createServer((_request, response) => {
    neighbourRequests += 1;
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ namespaces: [NEIGHBOUR_SECRET] }));
  });
  allowedPort = await listen(allowedServer, '127.0.0.1');
  neighbourPort = await listen(neighbour, '0.0.0.0');
  environment = await AgentEnvironment.start({ script: scenarios.script });
  await environment.startWorker({
    REACT_AGENT_TOOLS: 'visit',
    REACT_AGENT_VISIT_ALLOWED_HOSTS: `127.0.0.1:${allowedPort}`,
    REACT_AGENT_VISIT_TIMEOUT_SECONDS: '3',
  });
}, 180_000);

afterAll(async () => {
  await environment?.close();
  await Promise.all([allowedServer, neighbour].map((server) => new Promise((resolve) => server.close(resolve))));
});

describe('visit: own addresses, TEST-NETs, IPv6 forms carrying IPv4, allowed host ports', () => {
  test('only the allowed host and port is read; every other form is refused by the guard; the worker lives', async () => {
    const own = ownInterfaceAddress();
    const [a, b, c, d] = own.split('.').map(Number) as [number, number, number, number];
    const hex = (x: number, y: number) => ((x << 8) | y).toString(16);
    const refused = [
      // the allowed host, on a port the operator did not list
      `http://127.0.0.1:${neighbourPort}/api/v1/namespaces`,
      // the machine's own interface address (a real connection would reach the neighbour)
      `http://${own}:${neighbourPort}/api/v1/namespaces`,
      // IPv4-mapped form of the own address (Node connects to the IPv4 inside: the neighbour)
      `http://[::ffff:${own}]:${neighbourPort}/`,
      // IPv4-translated, NAT64 (well-known /96 and local-use /48), 6to4, Teredo
      `http://[::ffff:0:7f00:1]:${neighbourPort}/`,
      `http://[64:ff9b::${hex(a, b)}:${hex(c, d)}]:${neighbourPort}/`,
      `http://[64:ff9b:1::7f00:1]:${neighbourPort}/`,
      `http://[2002:${hex(a, b)}:${hex(c, d)}::1]:${neighbourPort}/`,
      `http://[2001:0:7f00:1::1]:${neighbourPort}/`,
    ];
    const workflowId = scenarios.add(runId('hostile-visit'), [
      toolCall('visit', { url: [`http://127.0.0.1:${allowedPort}/`, ...refused] }),
      answer('done'),
    ]);
    const result = await (await environment.startRun({ question: 'Read the intranet page.' }, workflowId)).result();

    assert.equal(result.termination, 'answer');
    const requests = environment.requestsOf(workflowId);
    const observation = String(requests[1]?.messages.at(-1)?.content ?? '');
    assert.match(observation, new RegExp(ALLOWED_TEXT.replace('.', '\\.')));
    for (const url of refused) {
      const line = observation.split('\n').find((text) => text.startsWith(`could not visit ${url}`));
      assert.ok(line, `no line for ${url} in:\n${observation}`);
      assert.match(
        line,
        /is blocked: it is .*(loopback|private|documentation|special-purpose|own network interfaces|reserved)/,
        line,
      );
    }
    assert.match(observation, /127\.0\.0\.1:\d+ would allow this one/);
    const ownPattern = own.replace(/\./g, '\\.');
    assert.match(
      observation,
      new RegExp(`it is ${ownPattern}, (an address of this machine's own network interfaces|a .+? address)`),
    );

    // nothing reached the neighbour, and nothing of it reached the run
    assert.equal(neighbourRequests, 0);
    const history = historyText(await environment.client.workflow.getHandle(workflowId).fetchHistory());
    assert.match(history, /The allowed intranet page says 42/, 'the decoded history holds the observations');
    assert.ok(!history.includes(NEIGHBOUR_SECRET), 'the neighbour secret is not in the history');
    assert.ok(!JSON.stringify(result).includes(NEIGHBOUR_SECRET), 'nor in the result');
    for (const worker of environment.workers)
      assert.doesNotThrow(() => process.kill(worker.pid, 0), 'the worker is alive');
  }, 180_000);
});
