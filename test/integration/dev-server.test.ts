import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, test } from '@jest/globals';
import { Connection } from '@temporalio/client';
import { temporal } from '@temporalio/proto';
import {
  DevServer,
  DevServerStartError,
  findFreePort,
  isServerReachable,
  PROJECT_SEARCH_ATTRIBUTES,
} from '../../src/processes/dev-server';

const directory = mkdtempSync(join(tmpdir(), 'react-agent-dev-server-'));
const servers: DevServer[] = [];

afterAll(async () => {
  await Promise.all(servers.map((server) => server.stop()));
  rmSync(directory, { recursive: true, force: true });
});

function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function customSearchAttributes(address: string): Promise<Record<string, unknown>> {
  const connection = await Connection.connect({ address });
  try {
    const response = await connection.operatorService.listSearchAttributes({ namespace: 'default' });
    return { ...(response.customAttributes ?? {}) };
  } finally {
    await connection.close();
  }
}

test('findFreePort returns distinct bindable ports', async () => {
  const ports = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
  assert.equal(new Set(ports).size, ports.length);
  for (const port of ports) assert.ok(port > 0 && port < 65536);
});

test('isServerReachable is false where nothing listens', async () => {
  const port = await findFreePort();
  assert.equal(await isServerReachable(`127.0.0.1:${port}`, 1000), false);
});

test('dev server: start, search attributes, SIGKILL, restart on the same file, stop', async () => {
  const databaseFile = join(directory, 'crash', 'temporal.sqlite');
  let started = Date.now();
  const server = await DevServer.start({ databaseFile, port: 0, uiPort: false });
  servers.push(server);
  console.log(`started in ${Date.now() - started} ms at ${server.address} (pid ${server.pid})`);

  assert.match(server.address, /^127\.0\.0\.1:\d+$/);
  assert.equal(server.uiUrl, undefined);
  assert.equal(server.databaseFile, databaseFile);
  assert.ok(existsSync(databaseFile), 'database file created');
  assert.ok(existsSync(join(directory, 'crash', 'temporal-server.log')), 'log file created');
  assert.equal(await isServerReachable(server.address), true);

  const attributes = await customSearchAttributes(server.address);
  for (const name of Object.keys(PROJECT_SEARCH_ATTRIBUTES)) assert.ok(name in attributes, `${name} registered`);
  // Text, so a word of the question finds the run (issue 22).
  assert.equal(attributes.ReactQuestion, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT);

  const firstPid = server.pid;
  await server.kill();
  assert.equal(server.running, false);
  assert.equal(processExists(firstPid), false, 'killed process is gone');
  assert.equal(await isServerReachable(server.address, 1000), false);

  started = Date.now();
  await server.restart();
  console.log(`restarted in ${Date.now() - started} ms (pid ${server.pid})`);
  assert.notEqual(server.pid, firstPid);
  assert.equal(await isServerReachable(server.address), true);
  const attributesAfterRestart = await customSearchAttributes(server.address);
  assert.ok('ReactTermination' in attributesAfterRestart && 'ReactIterations' in attributesAfterRestart);

  const secondPid = server.pid;
  started = Date.now();
  await server.stop();
  console.log(`stopped in ${Date.now() - started} ms`);
  await server.stop(); // idempotent
  assert.equal(server.running, false);
  assert.equal(processExists(secondPid), false, 'stopped process is gone');
  assert.equal(await isServerReachable(server.address, 1000), false);
}, 300_000);

test('a database from before an attribute was added gets it at the next start (start-dev registers attributes only in a new database)', async () => {
  const databaseFile = join(directory, 'upgrade', 'temporal.sqlite');
  const before = await DevServer.start({
    databaseFile,
    port: 0,
    uiPort: false,
    searchAttributes: { ReactTermination: 'Keyword', ReactIterations: 'Int' },
  });
  servers.push(before);
  assert.deepEqual(
    Object.keys(await customSearchAttributes(before.address))
      .filter((name) => name.startsWith('React'))
      .sort(),
    ['ReactIterations', 'ReactTermination'],
  );
  await before.stop();

  const after = await DevServer.start({ databaseFile, port: 0, uiPort: false });
  servers.push(after);
  const attributes = await customSearchAttributes(after.address);
  for (const name of Object.keys(PROJECT_SEARCH_ATTRIBUTES)) assert.ok(name in attributes, `${name} registered`);
  assert.equal(attributes.ReactQuestion, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_TEXT);
  assert.equal(attributes.ReactTokens, temporal.api.enums.v1.IndexedValueType.INDEXED_VALUE_TYPE_INT);
  await after.stop();
}, 300_000);

test('start fails clearly when the gRPC port is taken', async () => {
  const first = await DevServer.start({ databaseFile: join(directory, 'busy', 'a.sqlite'), port: 0, uiPort: false });
  servers.push(first);
  const port = Number(first.address.split(':')[1]);
  await assert.rejects(
    DevServer.start({ databaseFile: join(directory, 'busy', 'b.sqlite'), port, uiPort: false }),
    (error: unknown) => error instanceof DevServerStartError && /already in use/.test(error.message),
  );
  await first.stop();
}, 120_000);

test('start fails with the log tail when the server exits early', async () => {
  await assert.rejects(
    DevServer.start({
      databaseFile: join(directory, 'bad', 'temporal.sqlite'),
      port: 0,
      uiPort: false,
      searchAttributes: {},
      namespace: 'default',
      // An executable that exits at once with a message, standing in for a broken CLI.
      temporalCli: '/bin/false',
    }),
    (error: unknown) =>
      error instanceof DevServerStartError &&
      /exited with code 1/.test(error.message) &&
      /Last lines of/.test(error.message),
  );
}, 60_000);
