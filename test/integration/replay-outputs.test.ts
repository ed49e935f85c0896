import assert from 'node:assert/strict';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import type { temporal } from '@temporalio/proto';
import { bundleWorkflowCode, Worker } from '@temporalio/worker';
import { TRACING_WORKFLOW_INTERCEPTOR_MODULES } from '../../src/config/workflow-interceptors';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, test } from '@jest/globals';

/**
 * Replay checks commands, not what goes into them: these replays also compare, for every recorded
 * history, the input of each activity the workflow schedules (exactly), and its continue-as-new
 * input and result (every recorded field kept: newer code may add fields, as `details` gained
 * `truncatedReplies` and `malformedReplies` after the oldest fixtures were recorded). So a change
 * of workflow code that keeps the command sequence but sends a model call other messages, or
 * returns another result, fails here.
 */
const directory = join(__dirname, '..', 'fixtures', 'histories');
/** The researchAgent histories (a batch's history holds child runs, not the activities this compares). */
const fixtures = readdirSync(directory)
  .filter((name) => name.endsWith('.json'))
  .filter((name) =>
    /"workflowType":\s*\{\s*"name":\s*"researchAgent"/.test(
      readFileSync(join(directory, name), 'utf8').slice(0, 4_000),
    ),
  );

type History = temporal.api.history.v1.IHistory;
type Payloads = temporal.api.common.v1.IPayloads | null | undefined;

interface Outputs {
  activities: Array<{ type: string; input: unknown }>;
  continuedAsNew?: unknown;
  result?: unknown;
}

const decode = (payloads: Payloads): unknown[] =>
  (payloads?.payloads ?? []).map((payload) => defaultPayloadConverter.fromPayload(payload));
/** A value as it crosses a payload: JSON, so undefined fields are gone. */
const asJson = (value: unknown): unknown => JSON.parse(JSON.stringify(value ?? null));

function recorded(history: History): Outputs {
  const outputs: Outputs = { activities: [] };
  for (const event of history.events ?? []) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled)
      outputs.activities.push({ type: scheduled.activityType?.name ?? '', input: asJson(decode(scheduled.input)) });
    const continued = event.workflowExecutionContinuedAsNewEventAttributes;
    if (continued) outputs.continuedAsNew = asJson(decode(continued.input));
    const completed = event.workflowExecutionCompletedEventAttributes;
    if (completed) outputs.result = asJson(decode(completed.result)[0]);
  }
  return outputs;
}

/** Where `actual` differs from `expected` in a field `expected` has (fields only `actual` has are allowed). */
function changedFields(actual: unknown, expected: unknown, path = '$'): string[] {
  if (expected !== null && typeof expected === 'object') {
    if (actual === null || typeof actual !== 'object' || Array.isArray(actual) !== Array.isArray(expected))
      return [`${path}: ${JSON.stringify(actual)} instead of ${JSON.stringify(expected)}`];
    if (Array.isArray(expected) && (actual as unknown[]).length !== expected.length)
      return [`${path}: ${(actual as unknown[]).length} items instead of ${expected.length}`];
    return Object.entries(expected).flatMap(([key, value]) =>
      changedFields((actual as Record<string, unknown>)[key], value, `${path}.${key}`),
    );
  }
  return Object.is(actual, expected)
    ? []
    : [`${path}: ${JSON.stringify(actual)} instead of ${JSON.stringify(expected)}`];
}

let bundle: string;
const replayed = new Map<string, Outputs>();
const outputsOf = (runId: string): Outputs => {
  let outputs = replayed.get(runId);
  if (!outputs) replayed.set(runId, (outputs = { activities: [] }));
  return outputs;
};

beforeAll(async () => {
  const { code } = await bundleWorkflowCode({
    workflowsPath: require.resolve('../../workflows'),
    workflowInterceptorModules: [
      ...TRACING_WORKFLOW_INTERCEPTOR_MODULES,
      require.resolve('../fixtures/replay-recorder'),
    ],
    logger: { info() {}, warn() {}, error: console.error, debug() {}, trace() {}, log() {} } as never,
  });
  bundle = code;
}, 180_000);

for (const fixture of fixtures) {
  test(`${fixture}: replaying schedules the recorded activity inputs and returns the recorded result`, async () => {
    const history = historyFromJSON(JSON.parse(readFileSync(join(directory, fixture), 'utf8'))) as History;
    // Replayed under its own workflow id: the activities' inputs carry it.
    const workflowId = history.events?.[0]?.workflowExecutionStartedEventAttributes?.workflowId ?? fixture;
    const runId = fixture;
    await Worker.runReplayHistory(
      {
        workflowBundle: { code: bundle },
        sinks: {
          replayRecorder: {
            activity: {
              fn: (_info, type: string, input: string) => {
                outputsOf(runId).activities.push({ type, input: JSON.parse(input) });
              },
              callDuringReplay: true,
            },
            continuedAsNew: {
              fn: (_info, input: string) => {
                outputsOf(runId).continuedAsNew = JSON.parse(input);
              },
              callDuringReplay: true,
            },
            result: {
              fn: (_info, value: string) => {
                outputsOf(runId).result = JSON.parse(value);
              },
              callDuringReplay: true,
            },
          },
        },
      },
      history,
      workflowId,
    );
    const expected = recorded(history);
    const actual = outputsOf(runId);
    assert.ok(expected.activities.length > 0, 'the history schedules activities');
    assert.deepEqual(
      actual.activities.map((activity) => activity.type),
      expected.activities.map((activity) => activity.type),
    );
    expected.activities.forEach((activity, index) =>
      assert.deepEqual(
        actual.activities[index]?.input,
        activity.input,
        `input of activity ${index + 1} (${activity.type})`,
      ),
    );
    assert.equal(
      actual.continuedAsNew === undefined,
      expected.continuedAsNew === undefined,
      'continues as new when the history did',
    );
    assert.deepEqual(changedFields(actual.continuedAsNew, expected.continuedAsNew), [], 'continue-as-new input');
    assert.equal(actual.result === undefined, expected.result === undefined, 'returns a result when the history did');
    assert.deepEqual(changedFields(actual.result, expected.result), [], 'result');
  }, 60_000);
}
