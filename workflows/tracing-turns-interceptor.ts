/**
 * The workflow interceptors a worker that does not trace bundles instead of
 * `@temporalio/interceptors-opentelemetry`'s (issue 34; src/config/workflow-interceptors.ts): no
 * span, no context, no sink, no OpenTelemetry — only the promise turns those interceptors put
 * around what they wrap, so a run's commands come out in the same order on a traced and on an
 * untraced worker, and either replays the other's histories.
 *
 * Why turns matter: a workflow task's commands come out in the order the workflow's promise chains
 * push them, and the tracing interceptors delay when the promises they return settle. An update's
 * completion is itself a command pushed when its wrapped handler settles (recorded histories order
 * it after a timer cancellation only with those turns: tool-specs-by-reference.json,
 * model-limiter.json); an activity's or a child's result reaches the workflow those turns later,
 * which orders what the workflow does next against a timer that fired in the same activation.
 * Signals' and queries' ends make no command but are mirrored for the same flags.
 *
 * The turns are those of `OpenTelemetryInboundInterceptor` and `OpenTelemetryOutboundInterceptor`
 * and `instrument` in @temporalio/interceptors-opentelemetry 1.24 (lib/workflow/index.js,
 * lib/instrumentation.js): the same async functions without the span calls (which take no turn),
 * gated by the same SDK flags asked at the same points, so a history recorded here carries the
 * flags a traced worker's would. `instrument` has two async levels more when a trace context is in
 * the headers (an update's, a signal's, the run's start). test/unit/tracing-turns-interceptor.test.ts
 * counts both in every case; a new release of that package is a new bundle (worker/workflow-bundle.ts
 * hashes its version) and must pass it.
 */
import type {
  ActivityInput,
  ContinueAsNewInput,
  LocalActivityInput,
  SignalInput,
  SignalWorkflowInput,
  StartChildWorkflowExecutionInput,
  UpdateInput,
  WorkflowExecuteInput,
  WorkflowInboundCallsInterceptor,
  WorkflowInterceptors,
  WorkflowOutboundCallsInterceptor,
} from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';

/** The header the tracing interceptors carry a trace context in (their `TRACE_HEADER`). */
const TRACE_HEADER = '_tracer-data';

type Flag = (typeof SdkFlags)[keyof typeof SdkFlags];
const hasFlag = (flag: Flag): boolean => getActivator().hasFlag(flag);
const carriesContext = (headers: Record<string, unknown>): boolean => headers[TRACE_HEADER] !== undefined;

/** `wrapWithSpan`'s turns: one await of `fn`'s promise (its try, catch and finally take none). */
async function wrapLikeSpan<T>(fn: () => Promise<T>): Promise<T> {
  const ret = await fn();
  return ret;
}

/** `instrument`'s turns; `startActiveSpan` and `context.with` call their callback synchronously. */
async function instrumentLikeTracing<T>(fn: () => Promise<T>, withContext = false): Promise<T> {
  if (withContext) {
    return await (async () => {
      return await (async () => await wrapLikeSpan(fn))();
    })();
  }
  return await (async () => await wrapLikeSpan(fn))();
}

/** The outbound methods' `fn`: a yield before `next` only in histories from before SDK 1.13.2. */
function startingLikeTracing<I, T>(next: (input: I) => Promise<T>, input: I): () => Promise<T> {
  return async () => {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return next(input);
  };
}

/** The turns of the tracing interceptors' inbound methods. */
export class TracingTurnsInboundInterceptor implements WorkflowInboundCallsInterceptor {
  async execute(
    input: WorkflowExecuteInput,
    next: (input: WorkflowExecuteInput) => Promise<unknown>,
  ): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await instrumentLikeTracing(() => next(input), carriesContext(input.headers));
  }

  async handleSignal(input: SignalInput, next: (input: SignalInput) => Promise<void>): Promise<void> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsTracesInboundSignals)) return next(input);
    if (!hasFlag(SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields)) await Promise.resolve();
    return await instrumentLikeTracing(() => next(input), carriesContext(input.headers));
  }

  async handleUpdate(input: UpdateInput, next: (input: UpdateInput) => Promise<unknown>): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    return await instrumentLikeTracing(() => next(input), carriesContext(input.headers));
  }
}

/** The turns of the tracing interceptors' outbound methods (the ones workflows/ uses). */
export class TracingTurnsOutboundInterceptor implements WorkflowOutboundCallsInterceptor {
  async scheduleActivity(input: ActivityInput, next: (input: ActivityInput) => Promise<unknown>): Promise<unknown> {
    return await instrumentLikeTracing(startingLikeTracing(next, input));
  }

  async scheduleLocalActivity(
    input: LocalActivityInput,
    next: (input: LocalActivityInput) => Promise<unknown>,
  ): Promise<unknown> {
    if (!hasFlag(SdkFlags.OpenTelemetryInterceptorsTracesLocalActivities)) return next(input);
    return await instrumentLikeTracing(startingLikeTracing(next, input));
  }

  async startChildWorkflowExecution(
    input: StartChildWorkflowExecutionInput,
    next: (input: StartChildWorkflowExecutionInput) => Promise<[Promise<string>, Promise<unknown>]>,
  ): Promise<[Promise<string>, Promise<unknown>]> {
    return await instrumentLikeTracing(startingLikeTracing(next, input));
  }

  async continueAsNew(input: ContinueAsNewInput, next: (input: ContinueAsNewInput) => Promise<never>): Promise<never> {
    return await instrumentLikeTracing(startingLikeTracing(next, input));
  }

  async signalWorkflow(input: SignalWorkflowInput, next: (input: SignalWorkflowInput) => Promise<void>): Promise<void> {
    return await instrumentLikeTracing(startingLikeTracing(next, input));
  }
}

export const interceptors = (): WorkflowInterceptors => ({
  inbound: [new TracingTurnsInboundInterceptor()],
  outbound: [new TracingTurnsOutboundInterceptor()],
});
