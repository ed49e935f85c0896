import { Context } from '@temporalio/activity';
import { appendFileSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import type { ToolDefinition } from '../../activities/tools/tool-definition';

/**
 * Tools for integration tests, loaded by a worker through REACT_AGENT_TOOL_MODULES. Each run
 * of `lookup`, `wait`, `sleepy` and `flaky` appends `start` and `stop` lines (JSON, with the time
 * and the worker's pid) to the file in REACT_AGENT_TEST_TOOL_LOG, so a test can see whether a
 * tool was still running after a cancel.
 */
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
  // Six attempts, not the default three: while a worker machine is cut off, the server still hands
  // tasks to the polls it had open, and each such attempt is lost to its 5 s heartbeat timeout; the
  // chaos test (a 90 s cut, test/cluster/production-stack.test.ts) once saw all three go that way.
  activity: { startToCloseSeconds: 30, heartbeatSeconds: 5, maxAttempts: 6 },
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

/** The attempt number of the activity the tool runs in (1 outside an activity). */
function currentAttempt(): number {
  try {
    return Context.current().info.attempt;
  } catch {
    return 1;
  }
}

/**
 * Fails transiently: attempts 1..`failures` of a call throw (a retryable error), the next one
 * succeeds after `workMs`. Logs start/stop (reason `failed`, `done` or `cancelled`) with the
 * attempt. The output repeats `tag`, so a checker can match each response to its call.
 */
export const flaky: ToolDefinition = {
  name: 'flaky',
  description: 'Fetch a fact from a flaky backend that sometimes fails and must be retried.',
  parameters: {
    type: 'object',
    properties: { failures: { type: 'integer' }, workMs: { type: 'integer' }, tag: { type: 'string' } },
    required: ['failures'],
  },
  activity: { startToCloseSeconds: 30, heartbeatSeconds: 2, maxAttempts: 8, initialRetrySeconds: 0.2 },
  async run(args, context) {
    const attempt = currentAttempt();
    const failures = Number(args.failures);
    const tag = String(args.tag ?? '');
    const entry = { tool: 'flaky', callId: context.callId, workflowId: context.workflowId, attempt };
    log({ ...entry, event: 'start' });
    if (attempt <= failures) {
      log({ ...entry, event: 'stop', reason: 'failed' });
      throw new Error(`transient failure ${attempt} of ${failures} (the backend answered 503)`);
    }
    try {
      await delay(Number(args.workMs ?? 50), undefined, { signal: context.signal });
    } catch (error) {
      log({ ...entry, event: 'stop', reason: 'cancelled' });
      throw error;
    }
    log({ ...entry, event: 'stop', reason: 'done' });
    return `Flaky backend answered on attempt ${attempt} after ${failures} transient failures. ${tag}`.trim();
  },
};

/**
 * Sleeps `ms` milliseconds (the chaos harness picks 200-3000), stopping at once when cancelled.
 * Logs start/stop with the attempt; the output repeats `tag`.
 */
export const sleepy: ToolDefinition = {
  name: 'sleepy',
  description: 'Work for the given number of milliseconds, then report.',
  parameters: { type: 'object', properties: { ms: { type: 'integer' }, tag: { type: 'string' } }, required: ['ms'] },
  activity: { startToCloseSeconds: 30, heartbeatSeconds: 2, maxAttempts: 8, initialRetrySeconds: 0.2 },
  async run(args, context) {
    const ms = Number(args.ms);
    const tag = String(args.tag ?? '');
    const entry = { tool: 'sleepy', callId: context.callId, workflowId: context.workflowId, attempt: currentAttempt() };
    log({ ...entry, event: 'start' });
    try {
      await delay(ms, undefined, { signal: context.signal });
    } catch (error) {
      log({ ...entry, event: 'stop', reason: 'cancelled' });
      throw error;
    }
    log({ ...entry, event: 'stop', reason: 'done' });
    return `Slept ${ms} ms. ${tag}`.trim();
  },
};

export const hang: ToolDefinition = {
  name: 'hang',
  description: 'Never returns (ignores cancellation too); its 2-second start-to-close timeout cuts it.',
  parameters: { type: 'object', properties: {} },
  activity: { startToCloseSeconds: 2, heartbeatSeconds: 30, maxAttempts: 1 },
  run() {
    return new Promise<string>(() => undefined);
  },
};

export const tools: ToolDefinition[] = [lookup, wait, bigOutput, broken, guardedLookup, hang];

/**
 * The chaos harness's tools (`scripts/chaos/`), loaded from `test/fakes/chaos-tools.ts`; kept out
 * of `tools` so the other tests see the tool list they expect.
 */
export const chaosTools: ToolDefinition[] = [lookup, sleepy, flaky];
