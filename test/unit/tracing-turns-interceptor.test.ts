/**
 * workflows/tracing-turns-interceptor.ts takes the same promise turns around an update's handler
 * as the OpenTelemetry workflow interceptor it stands in for (issue 34), in every case a recorded
 * history can hold: without the SDK flag `OpenTelemetryInterceptorsInstrumentsAllMethods`, with
 * it, with a trace context in the update's headers, and when the handler fails. Both run here,
 * outside the workflow sandbox, on one stand-in activator; the turns are counted until each
 * returned promise settles, against a counter that advances one microtask at a time.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { OpenTelemetryInboundInterceptor } from '@temporalio/interceptors-opentelemetry/lib/workflow';
import * as tracingImports from '@temporalio/interceptors-opentelemetry/lib/workflow/workflow-imports';
import type { UpdateInput } from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { TracingTurnsInboundInterceptor } from '../../workflows/tracing-turns-interceptor';

type HandleUpdate = (input: UpdateInput, next: (input: UpdateInput) => Promise<unknown>) => Promise<unknown>;

let flagged = false;
const activator = {
  hasFlag: (flag: { id: number }) => flag.id === SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods.id && flagged,
};
let traced: HandleUpdate;
let untraced: HandleUpdate;

beforeAll(() => {
  // What the sandbox gives both: the activator, and AsyncLocalStorage for the tracing interceptors' context manager.
  Object.assign(globalThis, { __TEMPORAL_ACTIVATOR__: activator, AsyncLocalStorage });
  // Outside a bundle the tracing interceptors import stubs that throw: point them at the same activator.
  Object.assign(tracingImports, { getActivator: () => activator, SdkFlags });
  const tracingInbound = new OpenTelemetryInboundInterceptor();
  const turnsInbound = new TracingTurnsInboundInterceptor();
  traced = (input, next) => tracingInbound.handleUpdate(input, next as never);
  untraced = (input, next) => turnsInbound.handleUpdate(input, next);
});

afterAll(() => {
  delete (globalThis as Record<string, unknown>).__TEMPORAL_ACTIVATOR__;
});

/** Microtask turns until `handleUpdate`'s promise settles, the handler settling after `handlerTurns` of its own. */
async function turnsUntilSettled(
  handleUpdate: HandleUpdate,
  input: UpdateInput,
  { handlerTurns, fails }: { handlerTurns: number; fails: boolean },
): Promise<number> {
  const handler = async (): Promise<string> => {
    for (let turn = 0; turn < handlerTurns; turn += 1) await null;
    if (fails) throw new Error('refused');
    return 'done';
  };
  let settled = false;
  handleUpdate(input, handler).then(
    () => (settled = true),
    () => (settled = true),
  );
  let turns = 0;
  while (!settled && turns < 1000) {
    await null;
    turns += 1;
  }
  return turns;
}

const headersWithTraceContext = {
  '_tracer-data': defaultPayloadConverter.toPayload({
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  }),
};

describe.each([
  ['without the SDK flag', false, {}],
  ['with the SDK flag', true, {}],
  ['with the SDK flag and a trace context in the headers', true, headersWithTraceContext],
])('an update %s', (_case, flag, headers) => {
  for (const fails of [false, true])
    for (const handlerTurns of [0, 3])
      test(`${fails ? 'failing' : 'returning'} after ${handlerTurns} turns of its own: as many turns as the tracing interceptor`, async () => {
        flagged = flag;
        const input: UpdateInput = { updateId: 'u1', name: 'approveToolCall', args: [], headers };
        const withTracing = await turnsUntilSettled(traced, input, { handlerTurns, fails });
        const withTurnsOnly = await turnsUntilSettled(untraced, input, { handlerTurns, fails });
        assert.ok(withTracing > handlerTurns && withTracing < 1000, `${withTracing}`);
        assert.equal(withTurnsOnly, withTracing);
      });
});

test('the flag and the headers change the turns, so each case above is one of its own', async () => {
  const counts = [];
  for (const [flag, headers] of [
    [false, {}],
    [true, {}],
    [true, headersWithTraceContext],
  ] as const) {
    flagged = flag;
    counts.push(
      await turnsUntilSettled(
        traced,
        { updateId: 'u1', name: 'approveToolCall', args: [], headers },
        { handlerTurns: 0, fails: false },
      ),
    );
  }
  assert.equal(new Set(counts).size, 3, counts.join(', '));
});
