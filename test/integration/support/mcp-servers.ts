import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';

const root = resolve(__dirname, '../../..');

/** Entry files of the real MCP servers installed from npm (devDependencies). */
export const MCP_SERVER_ENTRIES = {
  everything: join(root, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js'),
  filesystem: join(root, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js'),
  memory: join(root, 'node_modules/@modelcontextprotocol/server-memory/dist/index.js'),
};

/** The relay that logs what the worker sends a stdio server (test/integration/support/mcp-stdio-tap.mjs). */
export const MCP_STDIO_TAP = join(__dirname, 'mcp-stdio-tap.mjs');

/** The JSON-RPC messages a tapped server received, in order (the first line, the tap's pids, left out). */
export function tappedMessages(log: string): Array<{ id?: number; method?: string; params?: Record<string, unknown> }> {
  if (!existsSync(log)) return [];
  return readFileSync(log, 'utf8')
    .split('\n')
    .filter((line) => line.startsWith('{"jsonrpc"') || line.includes('"jsonrpc"'))
    .map((line) => JSON.parse(line) as { id?: number; method?: string; params?: Record<string, unknown> });
}

export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((done) => server.close(() => done()));
  return port;
}

/** server-everything over Streamable HTTP (`index.js streamableHttp`, PORT), as a process of its own. */
export class EverythingHttpServer {
  private constructor(
    private child: ChildProcess,
    readonly port: number,
    public output: string,
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}/mcp`;
  }

  static async start(port?: number): Promise<EverythingHttpServer> {
    const chosen = port ?? (await freePort());
    const child = spawn(process.execPath, [MCP_SERVER_ENTRIES.everything, 'streamableHttp'], {
      env: { ...process.env, PORT: String(chosen) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const server = new EverythingHttpServer(child, chosen, '');
    child.stdout?.on('data', (data: Buffer) => (server.output += data.toString()));
    child.stderr?.on('data', (data: Buffer) => (server.output += data.toString()));
    const deadline = Date.now() + 20_000;
    while (!server.output.includes('listening on port')) {
      if (child.exitCode !== null || Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`server-everything (streamableHttp) did not start:\n${server.output}`);
      }
      await new Promise((done) => setTimeout(done, 50));
    }
    return server;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((done) => this.child.once('exit', done));
    this.child.kill('SIGKILL');
    await exited;
  }
}

/**
 * A history as text with every payload decoded, so a secret in any payload would show
 * (JSON.stringify alone leaves payloads base64-encoded).
 */
export function historyText(history: unknown): string {
  return JSON.stringify(history, (key, value: unknown) => {
    // Payloads come base64-encoded in `data` (the history as JSON), or as bytes.
    if (key === 'data' && typeof value === 'string') return Buffer.from(value, 'base64').toString('utf8');
    if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
    if (
      value &&
      typeof value === 'object' &&
      (value as { type?: unknown }).type === 'Buffer' &&
      Array.isArray((value as { data?: unknown }).data)
    ) {
      return Buffer.from((value as { data: number[] }).data).toString('utf8');
    }
    return value;
  });
}
