import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { characterEstimateCounter } from '../../activities/token-counter';
import { createToolActivity, STORE_RETRY_PAUSES_MS, truncateForModel } from '../../activities/tools/tool-activity';
import { FailureTypes } from '../../src/core/failure-types';
import { ToolInputError, type ToolContext, type ToolDefinition } from '../../activities/tools/tool-definition';
import { RESERVED_ACTIVITY_NAMES, ToolRegistry } from '../../activities/tools/tool-registry';
import { validateArguments } from '../../activities/tools/validate-arguments';
import type { ToolActivityInput } from '../../src/core/activity-contracts';
import { DEFAULT_TOOL_ACTIVITY_SETTINGS, type JsonSchema } from '../../src/core/tool-spec';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';
import { DEFAULT_LIMITS } from '../../src/core/run-limits';

/** `env.run` with the activity's own argument and result types. */
function runIn<A extends unknown[], R>(
  env: MockActivityEnvironment,
  activity: (...args: A) => Promise<R>,
  ...args: A
): Promise<R> {
  return env.run(activity, ...args) as Promise<R>;
}

const quietLogger = new DefaultLogger('ERROR', () => undefined);

function environment(heartbeatTimeoutMs = 30_000) {
  const env = new MockActivityEnvironment({ heartbeatTimeoutMs }, { logger: quietLogger });
  const heartbeats: unknown[] = [];
  env.on('heartbeat', (details: unknown) => heartbeats.push(details));
  return { env, heartbeats };
}

const LOOKUP_PARAMETERS: JsonSchema = {
  type: 'object',
  properties: { query: { type: 'string' }, limit: { type: 'integer' } },
  required: ['query'],
  additionalProperties: false,
};

interface RecordingTool extends ToolDefinition {
  runs: Array<{ args: Record<string, unknown>; context: ToolContext }>;
}

function tool(
  run: (args: Record<string, unknown>, context: ToolContext) => Promise<string>,
  name = 'lookup',
): RecordingTool {
  const runs: RecordingTool['runs'] = [];
  return {
    name,
    description: 'Looks things up.',
    parameters: LOOKUP_PARAMETERS,
    runs,
    run: (args, context) => {
      runs.push({ args, context });
      return run(args, context);
    },
  };
}

function input(overrides: Partial<ToolActivityInput> = {}): ToolActivityInput {
  return {
    workflowId: 'wf-tools',
    callId: 'call-1-1',
    arguments: { query: 'temporal' },
    maxObservationCharacters: 1_000,
    ...overrides,
  };
}

function deferred<T = void>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((done) => (resolve = done));
  return { promise, resolve };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A memory store whose first `downFor` puts fail as a store that is down fails in an activity (or with `failure`). */
class StoreDownFor extends MemoryTranscriptStore {
  refusals = 0;
  constructor(
    private readonly downFor: number,
    private readonly failure = ApplicationFailure.create({
      type: FailureTypes.transcriptUnavailable,
      message: 'The transcript store s3://b/t is unavailable (storing): connect ECONNREFUSED.',
    }),
  ) {
    super();
  }

  override async putText(text: string): Promise<string> {
    if (this.refusals < this.downFor) {
      this.refusals += 1;
      throw this.failure;
    }
    return super.putText(text);
  }
}

describe('createToolActivity', () => {
  test('stores the output and returns a reference, preview and token count', async () => {
    const store = new MemoryTranscriptStore();
    const lookup = tool(async (args) => `Result for ${String(args.query)}:\n  durable   execution`);
    const activity = createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter });
    const output = await runIn(environment().env, activity, input());
    const text = 'Result for temporal:\n  durable   execution';
    assert.equal(output.observation.ref, MemoryTranscriptStore.referenceOf(text));
    assert.equal(await store.getText(output.observation.ref), text);
    assert.equal(output.observation.preview, 'Result for temporal: durable execution');
    assert.equal(output.observation.characters, text.length);
    assert.equal(output.isError, false);
    assert.equal(output.fullOutput, undefined);
    assert.equal(output.tokens, Math.ceil(text.length / 4));
    assert.equal(lookup.runs.length, 1);
    assert.deepEqual(lookup.runs[0]?.args, { query: 'temporal' });
    assert.equal(lookup.runs[0]?.context.workflowId, 'wf-tools');
    assert.equal(lookup.runs[0]?.context.callId, 'call-1-1');
  });

  test("a call that does not carry its run's workflow id (issue 34's history trim) takes its own workflow's, and the default observation limit", async () => {
    const store = new MemoryTranscriptStore();
    const whole = 'x'.repeat(DEFAULT_LIMITS.maxObservationCharacters + 10);
    const lookup = tool(async () => whole);
    const env = new MockActivityEnvironment(
      { workflowExecution: { workflowId: 'wf-own', runId: 'run-1' } },
      { logger: quietLogger },
    );
    const output = await runIn(env, createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }), {
      callId: 'call-2-1',
      arguments: { query: 'temporal' },
    });
    assert.equal(lookup.runs[0]?.context.workflowId, 'wf-own');
    assert.ok(output.fullOutput, 'past the default limit, the whole output is referenced');
    assert.ok(
      (await store.getText(output.observation.ref)).startsWith(whole.slice(0, DEFAULT_LIMITS.maxObservationCharacters)),
    );
    assert.match(await store.getText(output.observation.ref), /showing 40,000 of 40,010 characters/);
  });

  test('the activity is named after the tool', () => {
    const activity = createToolActivity(
      tool(async () => '', 'web_search'),
      { store: new MemoryTranscriptStore(), tokenCounter: characterEstimateCounter },
    );
    assert.equal(activity.name, 'web_search');
  });

  test('a non-string result is stored as JSON', async () => {
    const store = new MemoryTranscriptStore();
    const lookup = tool(async () => ({ hits: [1, 2] }) as unknown as string);
    const output = await runIn(
      environment().env,
      createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }),
      input(),
    );
    assert.equal(await store.getText(output.observation.ref), '{"hits":[1,2]}');
  });

  test('an output longer than maxObservationCharacters is truncated with a note naming the full reference', async () => {
    const store = new MemoryTranscriptStore();
    const whole = Array.from({ length: 300 }, (_, index) => `line ${index}`).join('\n');
    assert.equal(whole.length, 2_589);
    const lookup = tool(async () => whole);
    const output = await runIn(
      environment().env,
      createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }),
      input({ maxObservationCharacters: 1_000 }),
    );

    assert.ok(output.fullOutput, 'the whole output is referenced');
    assert.equal(output.fullOutput.ref, MemoryTranscriptStore.referenceOf(whole));
    assert.equal(output.fullOutput.characters, whole.length);
    assert.equal(await store.getText(output.fullOutput.ref), whole);

    const seen = await store.getText(output.observation.ref);
    assert.notEqual(output.observation.ref, output.fullOutput.ref);
    assert.ok(seen.startsWith(whole.slice(0, 1_000)));
    assert.ok(!seen.includes(whole.slice(1_000, 1_010)), 'nothing past the limit is shown');
    assert.match(seen, /showing 1,000 of 2,589 characters/);
    assert.ok(seen.includes(output.fullOutput.ref), 'the note names the full reference');
    assert.equal(output.observation.characters, seen.length);
    assert.equal(output.tokens, Math.ceil(seen.length / 4), 'tokens count what the model sees');
    assert.equal(output.isError, false);
  });

  test('an output of exactly maxObservationCharacters is not truncated', async () => {
    const store = new MemoryTranscriptStore();
    const whole = 'x'.repeat(500);
    const output = await runIn(
      environment().env,
      createToolActivity(
        tool(async () => whole),
        { store, tokenCounter: characterEstimateCounter },
      ),
      input({ maxObservationCharacters: 500 }),
    );
    assert.equal(output.fullOutput, undefined);
    assert.equal(await store.getText(output.observation.ref), whole);
  });

  test('invalid arguments become an error observation without running the handler', async () => {
    const store = new MemoryTranscriptStore();
    const lookup = tool(async () => 'should not run');
    const output = await runIn(
      environment().env,
      createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }),
      input({ arguments: { limit: 'ten', verbose: true } }),
    );
    assert.equal(lookup.runs.length, 0);
    assert.equal(output.isError, true);
    const text = await store.getText(output.observation.ref);
    assert.match(text, /^Error: invalid arguments for tool "lookup": /);
    assert.match(text, /missing required argument "query"/);
    assert.match(text, /argument "limit" must be integer, got string/);
    assert.match(text, /unknown argument "verbose" \(expected: query, limit\)/);
  });

  test('missing arguments are checked as an empty object', async () => {
    const store = new MemoryTranscriptStore();
    const lookup = tool(async () => 'should not run');
    const output = await runIn(
      environment().env,
      createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }),
      input({ arguments: undefined as unknown as Record<string, unknown> }),
    );
    assert.equal(lookup.runs.length, 0);
    assert.equal(output.isError, true);
    assert.match(await store.getText(output.observation.ref), /missing required argument "query"/);
  });

  test('a ToolInputError becomes an error observation', async () => {
    const store = new MemoryTranscriptStore();
    const lookup = tool(async () => {
      throw new ToolInputError('No page at that URL; check the address.');
    });
    const output = await runIn(
      environment().env,
      createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }),
      input(),
    );
    assert.equal(output.isError, true);
    assert.equal(await store.getText(output.observation.ref), 'Error: No page at that URL; check the address.');
  });

  test('any other error is rethrown for Temporal to retry', async () => {
    const store = new MemoryTranscriptStore();
    const failure = new Error('search backend returned 502');
    const lookup = tool(async () => {
      throw failure;
    });
    await assert.rejects(
      runIn(environment().env, createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }), input()),
      (error) => error === failure,
    );
    assert.equal(store.blobs.size, 0, 'nothing is stored for a failed attempt');
  });

  test('a transcript store that is down when the output is stored: tried again within the attempt until it answers; the tool ran once', async () => {
    const store = new StoreDownFor(2);
    const lookup = tool(async () => 'Facts.');
    const env = new MockActivityEnvironment(
      { heartbeatTimeoutMs: 600, currentAttemptScheduledTimestampMs: Date.now(), startToCloseTimeoutMs: 30_000 },
      { logger: quietLogger },
    );
    const heartbeats: unknown[] = [];
    env.on('heartbeat', (details: unknown) => heartbeats.push(details));
    const started = Date.now();
    const output = await runIn(
      env,
      createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }),
      input(),
    );
    assert.equal(await store.getText(output.observation.ref), 'Facts.');
    assert.equal(store.refusals, 2);
    assert.equal(lookup.runs.length, 1);
    const paused = (STORE_RETRY_PAUSES_MS[0] ?? 0) + (STORE_RETRY_PAUSES_MS[1] ?? 0);
    assert.ok(Date.now() - started >= paused - 50, `paused ${paused} ms between tries`);
    // While it waited, the heartbeats said for what (the Web UI and `describe` show them).
    assert.ok(
      heartbeats.some((details) =>
        /is unavailable/.test(String((details as { waitingForStore?: string } | undefined)?.waitingForStore)),
      ),
      JSON.stringify(heartbeats),
    );
  });

  test('a store still down when the attempt would pass its start-to-close timeout: the store failure, for Temporal to retry; other store failures at once', async () => {
    const lookup = tool(async () => 'Facts.');
    const down = new StoreDownFor(10);
    const env = new MockActivityEnvironment(
      { currentAttemptScheduledTimestampMs: Date.now(), startToCloseTimeoutMs: 1_200 },
      { logger: quietLogger },
    );
    await assert.rejects(
      runIn(env, createToolActivity(lookup, { store: down, tokenCounter: characterEstimateCounter }), input()),
      (error) => (error as ApplicationFailure).type === FailureTypes.transcriptUnavailable,
    );
    assert.equal(down.refusals, 2, 'tried, paused 500 ms, tried; a 1 s pause would pass the timeout');
    const missing = new StoreDownFor(
      1,
      ApplicationFailure.create({ type: FailureTypes.transcriptMissing, message: 'gone', nonRetryable: true }),
    );
    const patient = new MockActivityEnvironment(
      { currentAttemptScheduledTimestampMs: Date.now(), startToCloseTimeoutMs: 30_000 },
      { logger: quietLogger },
    );
    await assert.rejects(
      runIn(patient, createToolActivity(lookup, { store: missing, tokenCounter: characterEstimateCounter }), input()),
      /gone/,
    );
    assert.equal(missing.refusals, 1);
  });

  test('the handler gets a signal that aborts on cancel, and the activity rejects with a cancellation', async () => {
    const store = new MemoryTranscriptStore();
    const started = deferred();
    let abortedInHandler = false;
    // Like fetch(): rejects with the signal's reason once aborted.
    const lookup = tool(
      (_args, context) =>
        new Promise<string>((_resolve, reject) => {
          context.signal.addEventListener('abort', () => {
            abortedInHandler = true;
            reject(context.signal.reason);
          });
          started.resolve();
        }),
    );
    const { env } = environment();
    const running = runIn(env, createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }), input());
    await started.promise;
    assert.equal(lookup.runs[0]?.context.signal.aborted, false);
    env.cancel();
    await assert.rejects(running, (error) => error instanceof CancelledFailure);
    assert.equal(abortedInHandler, true);
    assert.equal(lookup.runs[0]?.context.signal.aborted, true);
    assert.equal(store.blobs.size, 0, 'a cancelled call stores nothing');
  });

  test('a handler that returns early when aborted still leaves the activity cancelled', async () => {
    const store = new MemoryTranscriptStore();
    const started = deferred();
    const lookup = tool(
      (_args, context) =>
        new Promise<string>((resolve) => {
          context.signal.addEventListener('abort', () => resolve('partial output'));
          started.resolve();
        }),
    );
    const { env } = environment();
    const running = runIn(env, createToolActivity(lookup, { store, tokenCounter: characterEstimateCounter }), input());
    await started.promise;
    env.cancel();
    await assert.rejects(running, (error) => error instanceof CancelledFailure);
  });

  test('a handler that ignores the signal does not keep a cancelled activity running', async () => {
    const started = deferred();
    const lookup = tool(() => {
      started.resolve();
      return new Promise<string>(() => undefined);
    });
    const { env } = environment();
    const running = runIn(
      env,
      createToolActivity(lookup, { store: new MemoryTranscriptStore(), tokenCounter: characterEstimateCounter }),
      input(),
    );
    await started.promise;
    env.cancel();
    await assert.rejects(running, (error) => error instanceof CancelledFailure);
  });

  test('a quick tool call sends no heartbeat at all (each would be a write on Temporal)', async () => {
    const { env, heartbeats } = environment(600);
    await runIn(
      env,
      createToolActivity(
        tool(async () => 'quick'),
        { store: new MemoryTranscriptStore(), tokenCounter: characterEstimateCounter },
      ),
      input(),
    );
    assert.deepEqual(heartbeats, []);
  });

  test('heartbeats while a slow handler runs, and stops when it is done', async () => {
    const lookup = tool(async (_args, context) => {
      context.heartbeat({ progress: 'halfway' });
      await sleep(500);
      return 'done';
    });
    const { env, heartbeats } = environment(600); // ticks every heartbeatIntervalFor(600) = 600 / 3 = 200 ms
    await runIn(
      env,
      createToolActivity(lookup, { store: new MemoryTranscriptStore(), tokenCounter: characterEstimateCounter }),
      input({ callId: 'call-9-2' }),
    );
    assert.deepEqual(heartbeats[0], { progress: 'halfway' }, "none at the start; the handler's own pass through");
    const ticks = heartbeats.filter((details) => (details as { running?: boolean }).running === true);
    assert.ok(ticks.length >= 1 && ticks.length <= 3, `expected 1–3 timer heartbeats in 500 ms, got ${ticks.length}`);
    assert.deepEqual(ticks[0], { callId: 'call-9-2', running: true });
    const countAtEnd = heartbeats.length;
    await sleep(450);
    assert.equal(heartbeats.length, countAtEnd, 'no heartbeats after the activity finished');
  });
});

describe('truncateForModel', () => {
  test('leaves short output alone and cuts long output with a note', () => {
    assert.equal(truncateForModel('short', 5, 'sha256:ref'), 'short');
    const cut = truncateForModel('abcdefghij', 4, 'sha256:ref');
    assert.equal(
      cut,
      'abcd\n\n[Output truncated: showing 4 of 10 characters. The whole output is kept in the transcript store as sha256:ref.]',
    );
  });
});

describe('validateArguments', () => {
  const schema: JsonSchema = {
    type: 'object',
    properties: {
      query: { type: 'string' },
      count: { type: 'integer' },
      ratio: { type: 'number' },
      tags: { type: 'array' },
      filter: { type: 'object' },
      note: { type: ['string', 'null'] },
      mode: { type: 'string', enum: ['fast', 'deep'] },
      anything: {},
    },
    required: ['query'],
    additionalProperties: false,
  };

  test('valid arguments have no problems', () => {
    assert.deepEqual(validateArguments(schema, { query: 'q' }), []);
    assert.deepEqual(
      validateArguments(schema, {
        query: 'q',
        count: 3,
        ratio: 0.5,
        tags: ['a'],
        filter: { a: 1 },
        note: null,
        mode: 'deep',
        anything: [1],
      }),
      [],
    );
  });

  test('an integer is a number, a fraction is not an integer', () => {
    assert.deepEqual(validateArguments(schema, { query: 'q', ratio: 2 }), []);
    assert.deepEqual(validateArguments(schema, { query: 'q', count: 2.5 }), [
      'argument "count" must be integer, got number',
    ]);
  });

  test('missing required argument', () => {
    assert.deepEqual(validateArguments(schema, {}), ['missing required argument "query"']);
  });

  test('wrong types are named, including arrays and null', () => {
    assert.deepEqual(validateArguments(schema, { query: ['q'] }), ['argument "query" must be string, got array']);
    assert.deepEqual(validateArguments(schema, { query: null }), ['argument "query" must be string, got null']);
    assert.deepEqual(validateArguments(schema, { query: 'q', filter: [] }), [
      'argument "filter" must be object, got array',
    ]);
    assert.deepEqual(validateArguments(schema, { query: 'q', tags: 'a' }), [
      'argument "tags" must be array, got string',
    ]);
    assert.deepEqual(validateArguments(schema, { query: 'q', note: 3 }), [
      'argument "note" must be string or null, got integer',
    ]);
  });

  test('enum values', () => {
    assert.deepEqual(validateArguments(schema, { query: 'q', mode: 'slow' }), [
      'argument "mode" must be one of "fast", "deep"',
    ]);
  });

  test('unknown arguments are refused only when additionalProperties is false', () => {
    assert.deepEqual(validateArguments(schema, { query: 'q', extra: 1 }), [
      'unknown argument "extra" (expected: query, count, ratio, tags, filter, note, mode, anything)',
    ]);
    assert.deepEqual(validateArguments({ ...schema, additionalProperties: true }, { query: 'q', extra: 1 }), []);
    assert.deepEqual(validateArguments({ type: 'object' }, { extra: 1 }), []);
    assert.deepEqual(validateArguments({ type: 'object', additionalProperties: false }, { extra: 1 }), [
      'unknown argument "extra" (expected: none)',
    ]);
  });

  test('argument names that are Object.prototype members are not mistaken for declared properties', () => {
    assert.deepEqual(
      validateArguments({ type: 'object', properties: {}, additionalProperties: false }, { constructor: 'x' }),
      ['unknown argument "constructor" (expected: none)'],
    );
    assert.deepEqual(validateArguments({ type: 'object', properties: {}, required: ['toString'] }, {}), [
      'missing required argument "toString"',
    ]);
  });

  test('every problem is reported', () => {
    assert.equal(validateArguments(schema, { count: 'x', mode: 'slow', extra: true }).length, 4);
  });
});

describe('ToolRegistry', () => {
  const definition = (name: string, extra: Partial<ToolDefinition> = {}): ToolDefinition => ({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: {} },
    run: async () => '',
    ...extra,
  });

  test('accepts valid names and lists them in registration order', () => {
    const registry = new ToolRegistry([
      definition('search'),
      definition('_private'),
      definition('visit-page'),
      definition('a'.repeat(64)),
    ]);
    assert.deepEqual(registry.names(), ['search', '_private', 'visit-page', 'a'.repeat(64)]);
    assert.equal(registry.get('search')?.name, 'search');
    assert.equal(registry.get('missing'), undefined);
  });

  for (const name of ['', '1search', 'web search', 'search!', 'a'.repeat(65), 'ünï', '-dash']) {
    test(`rejects the invalid name ${JSON.stringify(name.length > 20 ? `${name.slice(0, 10)}…(${name.length})` : name)}`, () => {
      assert.throws(() => new ToolRegistry([definition(name)]), /is not valid/);
    });
  }

  for (const name of RESERVED_ACTIVITY_NAMES) {
    test(`rejects the reserved name ${name}`, () => {
      assert.throws(() => new ToolRegistry([definition(name)]), new RegExp(`"${name}" is reserved`));
    });
  }

  test('reserved names are the agent activities', () => {
    assert.deepEqual([...RESERVED_ACTIVITY_NAMES].sort(), [
      'callModel',
      'compressContext',
      'finishTranscript',
      'startConversation',
    ]);
  });

  test('rejects a duplicate', () => {
    const registry = new ToolRegistry([definition('search')]);
    assert.throws(() => registry.register(definition('search')), /"search" is registered twice/);
    assert.deepEqual(registry.names(), ['search']);
  });

  test('rejects parameters that are not an object schema', () => {
    assert.throws(
      () => new ToolRegistry([definition('search', { parameters: { type: 'array' } })]),
      /parameters must be a JSON schema of type "object"/,
    );
  });

  test('specs fill in activity defaults and keep overrides', () => {
    const registry = new ToolRegistry([
      definition('search'),
      definition('python', { activity: { heartbeatSeconds: 5, taskQueue: 'sandbox' } }),
    ]);
    const [search, python] = registry.specs();
    assert.equal(search?.name, 'search');
    assert.equal(search?.description, 'The search tool.');
    assert.deepEqual(search?.parameters, { type: 'object', properties: {} });
    assert.deepEqual(search?.activity, DEFAULT_TOOL_ACTIVITY_SETTINGS);
    assert.notEqual(search?.activity, DEFAULT_TOOL_ACTIVITY_SETTINGS, 'each spec gets its own settings object');
    assert.deepEqual(python?.activity, {
      ...DEFAULT_TOOL_ACTIVITY_SETTINGS,
      heartbeatSeconds: 5,
      taskQueue: 'sandbox',
    });
    assert.equal(DEFAULT_TOOL_ACTIVITY_SETTINGS.heartbeatSeconds, 30, 'the defaults object is not modified');
  });

  test('specs of selected tools, in the order asked', () => {
    const registry = new ToolRegistry([definition('search'), definition('visit'), definition('python')]);
    assert.deepEqual(
      registry.specs(['python', 'search']).map((spec) => spec.name),
      ['python', 'search'],
    );
    assert.deepEqual(registry.specs([]), []);
  });

  test('unknown tool names are an error listing the available tools', () => {
    const registry = new ToolRegistry([definition('search'), definition('visit')]);
    assert.throws(() => registry.specs(['search', 'browse']), {
      message: 'Unknown tool: browse. This worker has: search, visit.',
    });
    assert.throws(() => registry.specs(['browse', 'calc']), {
      message: 'Unknown tools: browse, calc. This worker has: search, visit.',
    });
    assert.throws(() => new ToolRegistry().specs(['search']), {
      message: 'Unknown tool: search. This worker has: no tools.',
    });
  });
});
