import { appendFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { ToolDefinition } from '../../../activities/tools/tool-definition';

/**
 * The tiny model always calls `lookup` (see the habits in test/real-server/README.md), so a real-server test
 * that needs a long observation or a tool call that stays open changes what `lookup` does, not
 * which tool is called. Loaded by a worker through REACT_AGENT_TOOL_MODULES (see
 * {@link realServerToolsEnvironment}); it reads, from the worker's environment:
 *
 * - `REACT_AGENT_TEST_LOOKUP_CHARACTERS`: the observation is padded with more facts to this many
 *   characters (default: the plain sentence of test/fakes/test-tools.ts, about 80 characters); a
 *   comma-separated list gives a run's first call the first size, its second the second, and so
 *   on, the last for every call after (counted per run in the worker process);
 * - `REACT_AGENT_TEST_LOOKUP_DELAY_MS`: the call works this long first, stopping at once when
 *   cancelled (default 0).
 *
 * Each call logs `start` and `stop` (with `reason` `done` or `cancelled`) to
 * REACT_AGENT_TEST_TOOL_LOG in the format test/integration/support/tool-log.ts reads.
 */

const MODULE_PATH = __filename;

/** Worker environment that loads this module's `lookup` with the given size and delay. */
export function realServerToolsEnvironment(
  options: { lookupCharacters?: number | number[]; lookupDelayMs?: number } = {},
): Record<string, string> {
  return {
    REACT_AGENT_TOOL_MODULES: MODULE_PATH,
    ...(options.lookupCharacters !== undefined
      ? { REACT_AGENT_TEST_LOOKUP_CHARACTERS: [options.lookupCharacters].flat().join(',') }
      : {}),
    ...(options.lookupDelayMs !== undefined ? { REACT_AGENT_TEST_LOOKUP_DELAY_MS: String(options.lookupDelayMs) } : {}),
  };
}

/** The observation of `lookup` for `query`, `characters` long at least (the worker's REACT_AGENT_TEST_LOOKUP_CHARACTERS). */
export function lookupObservation(query: string, characters = 0): string {
  let text = `Facts about ${query}: BYD sold 4,272,145 vehicles in 2024; Tesla delivered 1,789,226.`;
  for (let year = 2023; text.length < characters; year -= 1) {
    text += ` In ${year} BYD sold about ${(3 + (year % 7) * 0.1).toFixed(1)} million vehicles and Tesla about ${(1.8 - (year % 5) * 0.1).toFixed(1)} million.`;
  }
  return text;
}

/** Lookups each run made so far in this worker process. */
const lookupsByRun = new Map<string, number>();

/** The size of this run's next lookup: REACT_AGENT_TEST_LOOKUP_CHARACTERS, or its nth entry for the run's nth call. */
function lookupCharactersOfCall(workflowId: string): number {
  const sizes = (process.env.REACT_AGENT_TEST_LOOKUP_CHARACTERS ?? '0').split(',').map(Number);
  const call = lookupsByRun.get(workflowId) ?? 0;
  lookupsByRun.set(workflowId, call + 1);
  return sizes[Math.min(call, sizes.length - 1)] ?? 0;
}

function log(event: Record<string, unknown>): void {
  const file = process.env.REACT_AGENT_TEST_TOOL_LOG;
  if (file) appendFileSync(file, `${JSON.stringify({ ...event, at: Date.now(), pid: process.pid })}\n`);
}

export const lookup: ToolDefinition = {
  name: 'lookup',
  description: 'Look up a fact. Returns a short text about the query.',
  parameters: {
    type: 'object',
    properties: { query: { type: 'string' } },
    required: ['query'],
    additionalProperties: false,
  },
  activity: { startToCloseSeconds: 120, heartbeatSeconds: 2, maxAttempts: 3 },
  async run(args, context) {
    const entry = { tool: 'lookup', callId: context.callId, workflowId: context.workflowId };
    log({ ...entry, event: 'start' });
    const delayMs = Number(process.env.REACT_AGENT_TEST_LOOKUP_DELAY_MS ?? 0);
    if (delayMs > 0) {
      try {
        await delay(delayMs, undefined, { signal: context.signal });
      } catch (error) {
        log({ ...entry, event: 'stop', reason: 'cancelled' });
        throw error;
      }
    }
    const result = lookupObservation(String(args.query), lookupCharactersOfCall(context.workflowId));
    log({ ...entry, event: 'stop', reason: 'done' });
    return result;
  },
};

export const tools: ToolDefinition[] = [lookup];
