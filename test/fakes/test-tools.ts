import { appendFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { ToolDefinition } from '../../activities/tools/tool-definition';

/**
 * Tools for integration tests, loaded by a worker through REACT_AGENT_TOOL_MODULES. Each run
 * of `wait` appends `start` and `stop` lines (JSON) to the file in REACT_AGENT_TEST_TOOL_LOG,
 * so a test can see whether a tool was still running after a cancel.
 */
function log(event: Record<string, unknown>): void {
  const file = process.env.REACT_AGENT_TEST_TOOL_LOG;
  if (file) appendFileSync(file, `${JSON.stringify({ ...event, at: Date.now(), pid: process.pid })}\n`);
}

export const lookup: ToolDefinition = {
  name: 'lookup',
  description: 'Look up a fact. Returns a short text about the query.',
  parameters: { type: 'object', properties: { query: { type: 'string' } }, required: ['query'], additionalProperties: false },
  activity: { startToCloseSeconds: 30, heartbeatSeconds: 5 },
  async run(args, context) {
    log({ tool: 'lookup', event: 'start', callId: context.callId, workflowId: context.workflowId });
    const query = String(args.query);
    const result = `Facts about ${query}: BYD sold 4,272,145 vehicles in 2024; Tesla delivered 1,789,226.`;
    log({ tool: 'lookup', event: 'stop', callId: context.callId, workflowId: context.workflowId });
    return result;
  },
};

export const wait: ToolDefinition = {
  name: 'wait',
  description: 'Wait for a number of seconds, then report.',
  parameters: { type: 'object', properties: { seconds: { type: 'number' } }, required: ['seconds'] },
  activity: { startToCloseSeconds: 120, heartbeatSeconds: 2, maxAttempts: 5 },
  async run(args, context) {
    const seconds = Number(args.seconds);
    log({ tool: 'wait', event: 'start', callId: context.callId, workflowId: context.workflowId });
    try {
      await delay(seconds * 1000, undefined, { signal: context.signal });
      log({ tool: 'wait', event: 'stop', reason: 'done', callId: context.callId, workflowId: context.workflowId });
      return `Waited ${seconds} seconds.`;
    } catch (error) {
      log({ tool: 'wait', event: 'stop', reason: 'cancelled', callId: context.callId, workflowId: context.workflowId });
      throw error;
    }
  },
};

export const bigOutput: ToolDefinition = {
  name: 'big_output',
  description: 'Return a text of the given number of characters.',
  parameters: { type: 'object', properties: { characters: { type: 'integer' } }, required: ['characters'] },
  async run(args) {
    const characters = Number(args.characters);
    const line = 'The quick brown fox jumps over the lazy dog. ';
    return line.repeat(Math.ceil(characters / line.length)).slice(0, characters);
  },
};

export const broken: ToolDefinition = {
  name: 'broken',
  description: 'Always fails.',
  parameters: { type: 'object', properties: {} },
  activity: { maxAttempts: 2, initialRetrySeconds: 0.1 },
  async run() {
    throw new Error('the backend answered 503 Service Unavailable');
  },
};

export const guardedLookup: ToolDefinition = {
  ...lookup,
  name: 'guarded_lookup',
  description: 'Look up a fact in a sensitive source; every call needs approval.',
  requiresApproval: true,
};

export const tools: ToolDefinition[] = [lookup, wait, bigOutput, broken, guardedLookup];
