/**
 * The workflow interceptor a worker that does not trace bundles instead of
 * `@temporalio/interceptors-opentelemetry`'s (issue 34; src/config/workflow-interceptors.ts): no
 * span, no context, no sink — only the promise turns those interceptors put around an update's
 * handler, so a history recorded by a traced worker replays here, and one recorded here replays on
 * a traced worker.
 *
 * Why updates alone: an update is the one message whose handler's end is itself a command
 * (`completeUpdate`, pushed when the promise the interceptors return settles), so the turns they add
 * order it among the commands the workflow's other promise chains push in the same activation (an
 * approval's completion against its wait's timer cancellation: tool-specs-by-reference.json,
 * model-limiter.json). A signal's or a query's end makes no command; the interceptors' other methods
 * (`execute`, `scheduleActivity`, …) call `next` synchronously when the history carries the SDK flag
 * `OpenTelemetryInterceporsAvoidsExtraYields` (every history of SDK ≥ 1.13.2), and every recorded
 * history replays without them (test/integration/replay.test.ts).
 *
 * The turns are those of `OpenTelemetryInboundInterceptor.handleUpdate` and `instrument` in
 * @temporalio/interceptors-opentelemetry 1.24 (lib/workflow/index.js, lib/instrumentation.js), the
 * same async functions without the span calls, which take no turn: none unless the history carries
 * the SDK flag `OpenTelemetryInterceptorsInstrumentsAllMethods` (asked the same way, so a history
 * recorded here carries it where a traced worker's would), two more levels when the update's
 * headers carry a trace context. A new release of that package is a new bundle
 * (worker/workflow-bundle.ts hashes its version): check these turns against it.
 */
import type { UpdateInput, WorkflowInboundCallsInterceptor, WorkflowInterceptors } from '@temporalio/workflow';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import { getActivator } from '@temporalio/workflow/lib/global-attributes';

/** The header the tracing interceptors carry a trace context in (their `TRACE_HEADER`). */
const TRACE_HEADER = '_tracer-data';

type Next = (input: UpdateInput) => Promise<unknown>;

/** `wrapWithSpan`'s turns: one await of the handler's promise (its try, catch and finally take none). */
async function wrapLikeSpan(fn: () => Promise<unknown>): Promise<unknown> {
  const ret = await fn();
  return ret;
}

/** `instrument`'s turns; `startActiveSpan` and `context.with` call their callback synchronously. */
async function instrumentLikeTracing(fn: () => Promise<unknown>, withContext: boolean): Promise<unknown> {
  if (withContext) {
    return await (async () => {
      return await (async () => await wrapLikeSpan(fn))();
    })();
  }
  return await (async () => await wrapLikeSpan(fn))();
}

/** The turns of the tracing interceptors' `handleUpdate`, nothing else. */
export class TracingTurnsInboundInterceptor implements WorkflowInboundCallsInterceptor {
  async handleUpdate(input: UpdateInput, next: Next): Promise<unknown> {
    if (!getActivator().hasFlag(SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods)) return next(input);
    const withContext = input.headers[TRACE_HEADER] !== undefined;
    return await instrumentLikeTracing(() => next(input), withContext);
  }
}

export const interceptors = (): WorkflowInterceptors => ({ inbound: [new TracingTurnsInboundInterceptor()] });
