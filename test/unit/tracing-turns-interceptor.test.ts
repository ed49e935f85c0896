/**
 * workflows/tracing-turns-interceptor.ts takes the same promise turns as the OpenTelemetry workflow
 * interceptors it stands in for (issue 34), for every method they wrap that the workflows use and in
 * every case a recorded history can hold: each SDK flag they ask on or off, a trace context in the
 * headers or not, the wrapped call returning or failing, at once or after turns of its own. Both run
 * here, outside the workflow sandbox, on one stand-in activator; the turns are counted until each
 * returned promise settles, against a counter that advances one microtask at a time.
 */
import assert from 'node:assert/strict';
import { AsyncLocalStorage } from 'node:async_hooks';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import {
  OpenTelemetryInboundInterceptor,
  OpenTelemetryOutboundInterceptor,
} from '@temporalio/interceptors-opentelemetry/lib/workflow';
import * as tracingImports from '@temporalio/interceptors-opentelemetry/lib/workflow/workflow-imports';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import {
  TracingTurnsInboundInterceptor,
  TracingTurnsOutboundInterceptor,
} from '../../workflows/tracing-turns-interceptor';

type FlagName = keyof typeof SdkFlags;
let flagsOn = new Set<FlagName>();
const activator = {
  hasFlag: (flag: { id: number }) => [...flagsOn].some((name) => SdkFlags[name].id === flag.id),
};

type Method = (input: never, next: (input: unknown) => Promise<unknown>) => Promise<unknown>;
let traced: Record<string, Method>;
let untraced: Record<string, Method>;

beforeAll(() => {
  // What the sandbox gives both: the activator, and AsyncLocalStorage for the tracing interceptors' context manager.
  Object.assign(globalThis, { __TEMPORAL_ACTIVATOR__: activator, AsyncLocalStorage });
  // Outside a bundle the tracing interceptors import stubs that throw: point them at the same activator.
  Object.assign(tracingImports, {
    getActivator: () => activator,
    SdkFlags,
    workflowInfo: () => ({ workflowType: 'researchAgent' }),
  });
  const bind = (interceptor: object, names: string[]) =>
    Object.fromEntries(
      names.map((name) => [name, (interceptor as Record<string, Method>)[name]?.bind(interceptor) as Method]),
    );
  const names = [
    'execute',
    'handleSignal',
    'handleUpdate',
    'scheduleActivity',
    'scheduleLocalActivity',
    'startChildWorkflowExecution',
    'continueAsNew',
    'signalWorkflow',
  ];
  traced = {
    ...bind(new OpenTelemetryInboundInterceptor(), names.slice(0, 3)),
    ...bind(new OpenTelemetryOutboundInterceptor(), names.slice(3)),
  };
  untraced = {
    ...bind(new TracingTurnsInboundInterceptor(), names.slice(0, 3)),
    ...bind(new TracingTurnsOutboundInterceptor(), names.slice(3)),
  };
});

afterAll(() => {
  delete (globalThis as Record<string, unknown>).__TEMPORAL_ACTIVATOR__;
});

/** Microtask turns until `method`'s promise settles, the wrapped call settling after `callTurns` of its own. */
async function turnsUntilSettled(
  method: Method,
  input: unknown,
  { callTurns, fails }: { callTurns: number; fails: boolean },
): Promise<number> {
  const next = async (): Promise<string> => {
    for (let turn = 0; turn < callTurns; turn += 1) await null;
    if (fails) throw new Error('refused');
    return 'done';
  };
  let settled = false;
  method(input as never, next).then(
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

const traceContext = {
  '_tracer-data': defaultPayloadConverter.toPayload({
    traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
  }),
};

const inputOf = (method: string, headers: object): unknown => {
  switch (method) {
    case 'handleUpdate':
      return { updateId: 'u1', name: 'approveToolCall', args: [], headers };
    case 'handleSignal':
      return { signalName: 'finishFromParent', args: [], headers };
    case 'execute':
      return { args: [], headers };
    case 'scheduleActivity':
    case 'scheduleLocalActivity':
      return { activityType: 'callModel', args: [], headers, options: {}, seq: 1 };
    case 'startChildWorkflowExecution':
      return { workflowType: 'researchAgent', headers, options: {}, seq: 1 };
    case 'continueAsNew':
      return { args: [], headers, options: { workflowType: 'researchAgent' } };
    default:
      return { signalName: 'finishFromParent', args: [], headers, target: {}, seq: 1 };
  }
};

/** Each method with the flags it asks (all combinations are tried) and whether its headers matter. */
const METHODS: Array<[string, FlagName[], boolean]> = [
  ['handleUpdate', ['OpenTelemetryInterceptorsInstrumentsAllMethods'], true],
  [
    'handleSignal',
    ['OpenTelemetryInterceptorsTracesInboundSignals', 'OpenTelemetryInterceporsAvoidsExtraYields'],
    true,
  ],
  ['execute', ['OpenTelemetryInterceporsAvoidsExtraYields'], true],
  ['scheduleActivity', ['OpenTelemetryInterceporsAvoidsExtraYields'], false],
  [
    'scheduleLocalActivity',
    ['OpenTelemetryInterceptorsTracesLocalActivities', 'OpenTelemetryInterceporsAvoidsExtraYields'],
    false,
  ],
  ['startChildWorkflowExecution', ['OpenTelemetryInterceporsAvoidsExtraYields'], false],
  ['continueAsNew', ['OpenTelemetryInterceporsAvoidsExtraYields'], false],
  ['signalWorkflow', ['OpenTelemetryInterceporsAvoidsExtraYields'], false],
];

const subsets = <T>(items: T[]): T[][] =>
  items.reduce<T[][]>((all, item) => [...all, ...all.map((subset) => [...subset, item])], [[]]);

describe.each(METHODS)('%s', (method, flags, headersMatter) => {
  const cases = subsets(flags).flatMap((on) =>
    (headersMatter ? [{}, traceContext] : [{}]).map((headers) => ({ on, headers })),
  );
  test.each(
    cases.map(
      (one) =>
        [
          `flags on: ${one.on.join(', ') || 'none'}${Object.keys(one.headers).length ? ', a trace context in the headers' : ''}`,
          one,
        ] as const,
    ),
  )('%s: as many turns as the tracing interceptor, returning or failing', async (_name, { on, headers }) => {
    flagsOn = new Set(on);
    for (const fails of [false, true])
      for (const callTurns of [0, 3]) {
        const input = inputOf(method, headers);
        const withTracing = await turnsUntilSettled(traced[method] as Method, input, { callTurns, fails });
        const withTurnsOnly = await turnsUntilSettled(untraced[method] as Method, input, { callTurns, fails });
        assert.ok(withTracing > callTurns && withTracing < 1000, `${withTracing}`);
        assert.equal(withTurnsOnly, withTracing, `${fails ? 'failing' : 'returning'} after ${callTurns} turns`);
      }
  });
});

test('the flags and the headers change the turns, so the cases above are not all one', async () => {
  const counts = new Set<number>();
  for (const [on, headers] of [
    [[], {}],
    [['OpenTelemetryInterceptorsInstrumentsAllMethods'], {}],
    [['OpenTelemetryInterceptorsInstrumentsAllMethods'], traceContext],
  ] as Array<[FlagName[], object]>) {
    flagsOn = new Set(on);
    counts.add(
      await turnsUntilSettled(traced.handleUpdate as Method, inputOf('handleUpdate', headers), {
        callTurns: 0,
        fails: false,
      }),
    );
  }
  assert.equal(counts.size, 3, [...counts].join(', '));
});
