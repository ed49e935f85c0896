// Sits between the worker and a real stdio MCP server: `node mcp-stdio-tap.mjs LOG COMMAND ARGS...`
// starts COMMAND, passes the worker's stdin to it and its stdout back unchanged, and appends each
// line the worker sends (JSON-RPC messages) to LOG, so a test sees what reached the server
// (a `notifications/cancelled`, say). It ends when the server ends, with its exit code.
import { spawn } from 'node:child_process';
import { appendFileSync } from 'node:fs';

const [log, command, ...args] = process.argv.slice(2);
const server = spawn(command, args, { stdio: ['pipe', 'inherit', 'inherit'] });
appendFileSync(log, `${JSON.stringify({ tap: process.pid, server: server.pid })}\n`);
let pending = '';
process.stdin.on('data', (chunk) => {
  pending += chunk.toString();
  const lines = pending.split('\n');
  pending = lines.pop() ?? '';
  for (const line of lines) if (line.trim()) appendFileSync(log, `${line}\n`);
  server.stdin.write(chunk);
});
process.stdin.on('end', () => server.stdin.end());
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
