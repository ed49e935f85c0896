import { ApplicationFailure } from '@temporalio/common';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { JsonSchema } from '../../../src/core/tool-spec';
import { ToolInputError, type ToolContext, type ToolDefinition } from '../tool-definition';
import { callResultText } from './mcp-call-result';
import { callFailure, McpCallError, McpFailureTypes } from './mcp-failures';
import { McpServerAnswerError, type McpServerConnection } from './mcp-server-connection';
import { coversTool } from './mcp-server-settings';

/** Seconds an MCP call's activity gets beyond the server's `timeoutSeconds`: a slot, a restart, storing the output. */
export const MCP_ACTIVITY_MARGIN_SECONDS = 30;

/** What a call heartbeats about its request, read by the next attempt. */
interface RequestState {
  mcpRequest: 'sending' | 'not-sent';
  callId: string;
}

/** An MCP tool as this worker offers it: the name the model sees, and where it came from. */
export interface McpToolDefinition extends ToolDefinition {
  server: string;
  /** The tool's own name on its server. */
  serverToolName: string;
}

/** The name the model sees: the prefix, then the server's name with anything but letters, digits, `_` and `-` made `_`. */
export function exposedToolName(serverToolName: string, prefix: string): string {
  return `${prefix}${serverToolName}`.replace(/[^A-Za-z0-9_-]/g, '_').slice(0, 64);
}

/** The tool's input schema as a tool's parameters: an object schema, without `$schema`. */
function parametersOf(tool: Tool): JsonSchema {
  const { $schema: _schema, ...schema } = (tool.inputSchema ?? {}) as Record<string, unknown>;
  return { ...schema, type: 'object', properties: (schema.properties as Record<string, unknown> | undefined) ?? {} };
}

/**
 * The server's listed tools (those its allow-list names, all without one) as ToolDefinitions:
 * each becomes an activity named as the model sees it, timed by the server's `timeoutSeconds`,
 * waiting for approval where `requiresApproval` says, and calling the tool through the
 * connection.
 * @throws Error naming the server and the tools its allow-list names that it does not list.
 */
export function mcpToolDefinitions(connection: McpServerConnection, listed: Tool[]): McpToolDefinition[] {
  const settings = connection.settings;
  const byName = new Map(listed.map((tool) => [tool.name, tool]));
  if (settings.tools) {
    const missing = settings.tools.filter((name) => !byName.has(name));
    if (missing.length) {
      throw new Error(
        `MCP server "${settings.name}": its "tools" list names ${missing.map((name) => `"${name}"`).join(', ')}, which the server does not offer. It offers: ${[...byName.keys()].join(', ') || 'no tools'}.`,
      );
    }
  }
  const chosen = settings.tools ? settings.tools.map((name) => byName.get(name) as Tool) : listed;
  return chosen.map((tool) => mcpToolDefinition(connection, tool));
}

/** Attempts of one call whose request stayed on this worker (retrying them is safe), by workflow and call id. */
const notSentHere = new Set<string>();
const NOT_SENT_REMEMBERED = 10_000;

function rememberNotSent(key: string): void {
  notSentHere.add(key);
  // Oldest first: a call whose last attempt failed this way is never read again.
  if (notSentHere.size > NOT_SENT_REMEMBERED) notSentHere.delete(notSentHere.values().next().value as string);
}

function mcpToolDefinition(connection: McpServerConnection, tool: Tool): McpToolDefinition {
  const settings = connection.settings;
  const idempotent = coversTool(settings.idempotentTools, tool.name);
  const name = exposedToolName(tool.name, settings.toolPrefix);
  return {
    name,
    server: settings.name,
    serverToolName: tool.name,
    // What the server lists reaches the model and the run's stored tool list: its secrets are taken out here too.
    description: connection.redact(
      (tool.description ?? tool.title ?? `The tool "${tool.name}" of the MCP server "${settings.name}".`).trim(),
    ),
    parameters: connection.redactValue(parametersOf(tool)),
    requiresApproval: coversTool(settings.requiresApproval, tool.name),
    activity: {
      startToCloseSeconds: Math.ceil(settings.timeoutSeconds) + MCP_ACTIVITY_MARGIN_SECONDS,
      heartbeatSeconds: 30,
      // A request that never left is always safe to send again; the rest are retried only when idempotent.
      maxAttempts: 5,
      initialRetrySeconds: 2,
    },
    async run(args: Record<string, unknown>, context: ToolContext): Promise<string> {
      const key = `${context.workflowId}/${context.callId}`;
      const previous = context.previousAttemptDetails as Partial<RequestState> | undefined;
      // A retry after an attempt that may have reached the server (its worker died, say) does not call a non-idempotent tool again.
      if (!idempotent && !notSentHere.has(key) && previous?.mcpRequest === 'sending') {
        throw ApplicationFailure.create({
          type: McpFailureTypes.notRepeated,
          message: `The previous attempt of this call of "${name}" (MCP server "${settings.name}") may have reached the server before it was interrupted; it is not repeated, since the tool is not marked idempotent ("idempotentTools").`,
          nonRetryable: true,
        });
      }
      notSentHere.delete(key);
      const heartbeat = (state: RequestState['mcpRequest']) => {
        const details = { mcpRequest: state, callId: context.callId } satisfies RequestState;
        if (context.recordAttemptState) context.recordAttemptState(details);
        else context.heartbeat(details);
      };
      let result;
      try {
        result = await connection.callTool(tool.name, args, {
          signal: context.signal,
          timeoutMs: settings.timeoutSeconds * 1000,
          onSending: () => heartbeat('sending'),
          onProgress: (progress) =>
            context.heartbeat({
              mcpRequest: 'sending',
              callId: context.callId,
              progress: progress.progress,
              ...(progress.total === undefined ? {} : { total: progress.total }),
            }),
        });
      } catch (error) {
        if (context.signal.aborted) throw error;
        if (error instanceof McpServerAnswerError)
          throw new ToolInputError(`the MCP server "${settings.name}" refused the call of "${name}": ${error.message}`);
        if (error instanceof McpCallError) {
          if (error.delivery === 'not-sent') {
            rememberNotSent(key);
            heartbeat('not-sent');
          }
          throw callFailure(error, { server: settings.name, tool: name, idempotent });
        }
        // Unforeseen: the request may have left, so only an idempotent tool is retried.
        throw ApplicationFailure.create({
          type: McpFailureTypes.connectionLost,
          message: connection.redact(`MCP tool "${name}" failed: ${(error as Error)?.message ?? String(error)}`),
          nonRetryable: !idempotent,
        });
      }
      const { text, isError } = callResultText(result);
      const observation = connection.redact(text);
      // The tool's own failure is the model's to read and act on, not a reason to call again.
      if (isError)
        throw new ToolInputError(
          `the tool "${name}" (MCP server "${settings.name}") reported an error: ${observation}`,
        );
      return observation;
    },
  };
}
