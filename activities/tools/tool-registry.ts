import { DEFAULT_TOOL_ACTIVITY_SETTINGS, type ToolSpec } from '../../src/core/tool-spec';
import type { ToolDefinition } from './tool-definition';

/** Activity names the agent itself uses; a tool may not take them. */
export const RESERVED_ACTIVITY_NAMES = [
  'startConversation',
  'callModel',
  'compressContext',
  'finishTranscript',
] as const;

/** The tools a worker offers, checked once when the worker starts. */
export class ToolRegistry {
  private readonly tools = new Map<string, ToolDefinition>();

  constructor(tools: ToolDefinition[] = []) {
    for (const tool of tools) this.register(tool);
  }

  register(tool: ToolDefinition): void {
    if (!/^[A-Za-z_][A-Za-z0-9_-]{0,63}$/.test(tool.name)) {
      throw new Error(
        `Tool name ${JSON.stringify(tool.name)} is not valid: use letters, digits, '_' and '-', starting with a letter or '_'.`,
      );
    }
    if ((RESERVED_ACTIVITY_NAMES as readonly string[]).includes(tool.name)) {
      throw new Error(`Tool name "${tool.name}" is reserved for the agent's own activities.`);
    }
    if (this.tools.has(tool.name)) throw new Error(`Tool "${tool.name}" is registered twice.`);
    if (tool.parameters.type !== 'object')
      throw new Error(`Tool "${tool.name}": parameters must be a JSON schema of type "object".`);
    this.tools.set(tool.name, tool);
  }

  get(name: string): ToolDefinition | undefined {
    return this.tools.get(name);
  }

  names(): string[] {
    return [...this.tools.keys()];
  }

  /** Specs of the named tools (all when `names` is undefined); throws naming any unknown tool. */
  specs(names?: string[]): ToolSpec[] {
    const selected = names ?? this.names();
    const unknown = selected.filter((name) => !this.tools.has(name));
    if (unknown.length) {
      throw new Error(
        `Unknown tool${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}. This worker has: ${this.names().join(', ') || 'no tools'}.`,
      );
    }
    return selected.map((name) => {
      const tool = this.tools.get(name) as ToolDefinition;
      return {
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        activity: { ...DEFAULT_TOOL_ACTIVITY_SETTINGS, ...(tool.activity ?? {}) },
        requiresApproval: tool.requiresApproval ?? false,
      };
    });
  }
}
