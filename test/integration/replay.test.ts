import assert from 'node:assert/strict';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { Worker } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '@jest/globals';
import { SdkFlags } from '@temporalio/workflow/lib/flags';
import {
  TRACING_WORKFLOW_INTERCEPTOR_MODULES,
  UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
} from '../../src/config/workflow-interceptors';
import { cachedWorkflowBundle } from './support/workflow-bundle';

/**
 * Deploy safety: histories recorded from earlier runs (test/fixtures/histories, made by
 * scripts/record-replay-histories.ts) must replay on the current workflow code. A change that
 * fails here would break runs in flight and needs `patched()`.
 */
const directory = join(__dirname, '..', 'fixtures', 'histories');
const fixtures = readdirSync(directory).filter((name) => name.endsWith('.json'));

const history = (name: string) => historyFromJSON(JSON.parse(readFileSync(join(directory, name), 'utf8')));

test('there are recorded histories to replay', () => {
  assert.ok(fixtures.length >= 5, `found ${fixtures.join(', ')}`);
});

/**
 * The two bundles a worker runs (src/config/workflow-interceptors.ts, issue 34): the traced one, with
 * the OpenTelemetry workflow interceptors, and the untraced one, with only the promise turns they put
 * around what they wrap (workflows/tracing-turns-interceptor.ts). Every fixture replays on both,
 * whichever kind recorded it (`*-untraced.json`: recorded on the untraced bundle), so a run can move
 * between traced and untraced workers.
 */
const bundles = {
  traced: () => cachedWorkflowBundle(undefined, TRACING_WORKFLOW_INTERCEPTOR_MODULES),
  untraced: () => cachedWorkflowBundle(undefined, UNTRACED_WORKFLOW_INTERCEPTOR_MODULES),
};

for (const [kind, bundle] of Object.entries(bundles))
  for (const fixture of fixtures) {
    test(`recorded history ${fixture} replays on the current workflow code, ${kind}`, async () => {
      const recorded = history(fixture);
      // Under its recorded workflow id: a batch derives its children's ids from it.
      const workflowId = recorded.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? fixture;
      await Worker.runReplayHistory({ workflowBundle: { codePath: await bundle() } }, recorded, workflowId);
    });
  }

/**
 * Histories whose update completed in an order set by the tracing interceptors' promise turns
 * (recorded before the `approvals-complete-after-their-effect` and
 * `reservations-complete-after-their-effect` patches): a bundle with no workflow interceptor at all
 * does not replay them, which is why the untraced bundle keeps those turns (docs/durability.md).
 */
const RECORDED_BEFORE_UPDATES_AWAITED_THEIR_EFFECT = ['tool-specs-by-reference.json', 'model-limiter.json'];

test("the histories recorded before updates awaited their effect need the interceptors' promise turns", async () => {
  const codePath = await cachedWorkflowBundle(undefined, []);
  for (const fixture of RECORDED_BEFORE_UPDATES_AWAITED_THEIR_EFFECT) {
    const recorded = history(fixture);
    const workflowId = recorded.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? fixture;
    await assert.rejects(
      Worker.runReplayHistory({ workflowBundle: { codePath } }, recorded, workflowId),
      (error: Error) => /TimerCanceled/.test(error.message),
      fixture,
    );
  }
});

test('a history recorded on the untraced bundle carries the SDK flags the tracing interceptors ask, where a traced one does', () => {
  // With them a traced worker replaying the history takes the turns the untraced one took, and the other way round.
  const asked = [
    SdkFlags.OpenTelemetryInterceptorsTracesInboundSignals,
    SdkFlags.OpenTelemetryInterceptorsTracesLocalActivities,
    SdkFlags.OpenTelemetryInterceporsAvoidsExtraYields,
    SdkFlags.OpenTelemetryInterceptorsInstrumentsAllMethods,
  ].map((flag) => flag.id);
  const flagsOf = (name: string) =>
    (history(name).events ?? [])
      .flatMap((event) =>
        (event.workflowTaskCompletedEventAttributes?.sdkMetadata?.langUsedFlags ?? [])
          .filter((flag) => asked.includes(flag))
          .map((flag) => `${flag} at event ${Number(event.eventId)}`),
      )
      .sort();
  for (const [untraced, traced] of [
    ['approvals-after-their-effect-untraced.json', 'approvals-after-their-effect.json'],
    ['model-limiter-untraced.json', 'model-limiter-after-their-effect.json'],
  ] as const) {
    assert.ok(flagsOf(traced).length > 0, traced);
    assert.deepEqual(flagsOf(untraced), flagsOf(traced), untraced);
  }
});

test('replay notices an incompatible change', async () => {
  await assert.rejects(
    Worker.runReplayHistory(
      { workflowsPath: require.resolve('../fixtures/incompatible-workflow') },
      history(fixtures[0] as string),
      'incompatible',
    ),
    (error: Error) => error instanceof DeterminismViolationError || /nondetermin/i.test(error.message),
  );
});
