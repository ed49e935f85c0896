import { OwnedProcess } from '../../processes/owned-process';
import { printText } from '../standard-output';
import { formatToolListing, parseToolListing } from '../tool-listing';
import { projectEntryArguments } from '../../processes/typescript-process';
import { UsageError } from '../usage-error';

export const toolsHelp = `Usage: react-agent tools [--json]

Lists the tools a worker started with the current environment would offer: the built-ins
REACT_AGENT_TOOLS enables, the tools of REACT_AGENT_TOOL_MODULES, and the tools of the MCP
servers in REACT_AGENT_MCP_CONFIG (started, listed and closed again, as the worker starts them),
each with where it comes from (built-in, module, or its MCP server), whether its calls wait for
approval (react-agent approve), and the first sentence of its description.

Options:
  --json   one JSON object: {"tools": [{name, source, server?, serverToolName?, requiresApproval,
           description}], "skippedServers": [{server, reason}]}

Configuration the worker would refuse (a bad REACT_AGENT_MCP_CONFIG, a server that does not
start, two tools with one name) is printed as the worker prints it; the exit code is then 2.`;

/** Longest the listing may take: every MCP server started, listed and closed. */
const LISTING_TIMEOUT_MS = 180_000;

/**
 * Runs worker/list-tools.ts (compiled, or through tsx from a checkout) as a child process, since
 * src/cli does not import worker/ or activities/: it builds the tools as the worker does and
 * prints them as JSON, which this prints as a table or passes on with --json.
 */
export async function toolsCommand(argumentsList: string[]): Promise<number> {
  const unknown = argumentsList.filter((argument) => argument !== '--json');
  if (unknown.length)
    throw new UsageError(
      `react-agent tools: unknown argument${unknown.length > 1 ? 's' : ''} ${unknown.join(' ')}`,
      toolsHelp,
    );
  const json = argumentsList.includes('--json');
  const lister = OwnedProcess.spawn(process.execPath, projectEntryArguments('worker/list-tools.ts'), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: process.env,
  });
  let stdout = '';
  let stderr = '';
  lister.child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
  lister.child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  const timer = setTimeout(() => lister.signalGroup('SIGKILL'), LISTING_TIMEOUT_MS);
  const { code, signal, error } = await lister.exited.finally(() => clearTimeout(timer));
  if (error) throw new Error(`could not list the tools: ${error.message}`);
  if (code !== 0) {
    process.stderr.write(
      stderr.trim()
        ? `${stderr.trim()}\n`
        : `react-agent tools: listing the tools failed (${signal ? `killed by ${signal}` : `exit code ${code}`}).\n`,
    );
    // Configuration the worker refuses: 2, as for a wrong command line.
    return code === 2 ? 2 : 1;
  }
  const listing = parseToolListing(stdout);
  printText(json ? JSON.stringify(listing, null, 2) : formatToolListing(listing));
  return 0;
}
