import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { temporal } from '@temporalio/proto';
import { describeResult, resultHeadline } from '../../src/cli/follow-run';
import { progressLines } from '../../src/cli/progress-lines';
import { RunEventReader, type HistoryEvent, type RunEvent } from '../../src/cli/run-events';
import { isSubRunEvent } from '../../src/cli/sub-run-events';
import { SubRunFollowers } from '../../src/cli/sub-run-follow';
import { subRunLabel, subRunSummaryLines } from '../../src/cli/sub-run-summary';
import type { ResearchRunResult } from '../../src/core/run-result';

const EventType = temporal.api.enums.v1.EventType;
const event = (fields: Record<string, unknown>): HistoryEvent =>
  temporal.api.history.v1.HistoryEvent.fromObject(fields);
const LEAD = 'research-lead';

function result(fields: Partial<ResearchRunResult> = {}): ResearchRunResult {
  return {
    question: 'q',
    answer: '',
    prediction: 'the answer',
    termination: 'answer',
    transcript: 'ref',
    iterations: 2,
    toolCalls: 1,
    usage: { promptTokens: 900, completionTokens: 300, totalTokens: 1200 },
    contextTokens: 500,
    durationMs: 4100,
    details: { protocol: 'deep-research', compressions: [], stuckNudges: 0, continuedAsNew: 0 },
    ...fields,
  };
}

/** A lead's history's child events for one sub-run: initiated, started, then closed as `closed`. */
function childEvents(workflowId: string, initiatedEventId: number, closed: 'completed' | 'terminated'): HistoryEvent[] {
  const execution = { workflowId, runId: 'r' };
  return [
    event({
      eventId: initiatedEventId,
      eventType: EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED,
      startChildWorkflowExecutionInitiatedEventAttributes: {
        workflowId,
        input: {
          payloads: [defaultPayloadConverter.toPayload({ question: `Part ${workflowId}\n\n(This is one part…)` })],
        },
      },
    }),
    event({
      eventId: initiatedEventId + 1,
      eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED,
      childWorkflowExecutionStartedEventAttributes: { initiatedEventId, workflowExecution: execution },
    }),
    closed === 'completed'
      ? event({
          eventId: initiatedEventId + 2,
          eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED,
          childWorkflowExecutionCompletedEventAttributes: { initiatedEventId, workflowExecution: execution },
        })
      : event({
          eventId: initiatedEventId + 2,
          eventType: EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_TERMINATED,
          childWorkflowExecutionTerminatedEventAttributes: { initiatedEventId, workflowExecution: execution },
        }),
  ];
}

describe("a run's sub-runs in its history (issue 30)", () => {
  test('are read as started (with their question), not started and closed, and print no line of their own', () => {
    const reader = new RunEventReader();
    const events: RunEvent[] = [
      ...childEvents(`${LEAD}/sub-1-1`, 10, 'completed'),
      ...childEvents(`${LEAD}/sub-1-2`, 20, 'terminated'),
      event({
        eventId: 30,
        eventType: EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_FAILED,
        startChildWorkflowExecutionFailedEventAttributes: {
          workflowId: `${LEAD}/sub-1-3`,
          cause:
            temporal.api.enums.v1.StartChildWorkflowExecutionFailedCause
              .START_CHILD_WORKFLOW_EXECUTION_FAILED_CAUSE_WORKFLOW_ALREADY_EXISTS,
        },
      }),
    ].flatMap((historyEvent) => reader.read(historyEvent));
    assert.deepEqual(events, [
      {
        kind: 'sub_run_started',
        workflowId: `${LEAD}/sub-1-1`,
        question: `Part ${LEAD}/sub-1-1\n\n(This is one part…)`,
      },
      { kind: 'sub_run_closed', workflowId: `${LEAD}/sub-1-1`, status: 'completed' },
      {
        kind: 'sub_run_started',
        workflowId: `${LEAD}/sub-1-2`,
        question: `Part ${LEAD}/sub-1-2\n\n(This is one part…)`,
      },
      { kind: 'sub_run_closed', workflowId: `${LEAD}/sub-1-2`, status: 'terminated' },
      { kind: 'sub_run_not_started', workflowId: `${LEAD}/sub-1-3`, cause: 'workflow_already_exists' },
    ]);
    assert.ok(events.every(isSubRunEvent));
    assert.deepEqual(events.flatMap(progressLines), []);
  });
});

describe('following sub-runs', () => {
  test('prints each one’s lines under its label, and the run’s next lines only once an ended one was shown', async () => {
    const printed: string[] = [];
    const print = (line: string) => printed.push(line);
    const finishes: Record<string, (value: ResearchRunResult) => void> = {};
    const followers = new SubRunFollowers(
      { rootId: LEAD, print },
      (workflowId, subRunPrint) => {
        subRunPrint('[call 1] calling the model');
        if (workflowId.endsWith('-2'))
          return Promise.reject(
            Object.assign(new Error('x'), { name: 'RunEndedWithoutResultError', status: 'terminated' }),
          );
        return new Promise((resolve) => (finishes[workflowId] = resolve));
      },
      resultHeadline,
    );
    await followers.read({ kind: 'sub_run_started', workflowId: `${LEAD}/sub-1-1`, question: 'First part\n\nmore' });
    await followers.read({ kind: 'sub_run_started', workflowId: `${LEAD}/sub-1-2`, question: 'Second part' });
    let closed = false;
    const closing = followers
      .read({ kind: 'sub_run_closed', workflowId: `${LEAD}/sub-1-1`, status: 'completed' })
      .then(() => (closed = true));
    await new Promise((resolve) => setImmediate(resolve));
    assert.equal(closed, false, 'the run waits for its sub-run’s lines');
    finishes[`${LEAD}/sub-1-1`]?.(result());
    await closing;
    await followers.read({ kind: 'sub_run_closed', workflowId: `${LEAD}/sub-1-2`, status: 'terminated' });
    await followers.read({ kind: 'sub_run_closed', workflowId: `${LEAD}/sub-9-9`, status: 'failed' });
    await followers.settled();
    assert.deepEqual(printed, [
      '  [sub-1-1] started: First part',
      '  [sub-1-1] [call 1] calling the model',
      '  [sub-1-2] started: Second part',
      '  [sub-1-2] [call 1] calling the model',
      '  [sub-1-2] ended without a result (terminated)',
      '  [sub-1-1] ended: answer after 2 model calls, 1 tool calls, 4.1 s, 1,200 tokens',
      '  [sub-9-9] ended: failed',
    ]);
  });

  test('labels a sub-run by its id below the followed run', () => {
    assert.equal(subRunLabel(`${LEAD}/sub-2-1`, LEAD), 'sub-2-1');
    assert.equal(subRunLabel(`${LEAD}/sub-2-1/sub-1-3`, LEAD), 'sub-2-1/sub-1-3');
    assert.equal(subRunLabel('elsewhere/sub-1-1', LEAD), 'elsewhere/sub-1-1');
  });
});

describe("a run's result with sub-runs", () => {
  const subRuns = {
    modelCalls: 5,
    runs: [
      {
        workflowId: `${LEAD}/sub-1-1`,
        question: 'First part',
        termination: 'answer' as const,
        modelCalls: 2,
        usage: { promptTokens: 900, completionTokens: 300, totalTokens: 1200, costUsd: 0.0012 },
        durationMs: 4100,
      },
      {
        workflowId: `${LEAD}/sub-1-2`,
        question: 'Second part',
        termination: 'error' as const,
        modelCalls: 3,
        usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
        durationMs: 0,
        error: 'not started: the research it belongs to is finishing',
      },
    ],
  };

  test('lists each sub-run’s id with how it ended', () => {
    assert.deepEqual(subRunSummaryLines(subRuns), [
      'Sub-runs: 2 (5 model calls; their tokens and cost are in the totals):',
      `  ${LEAD}/sub-1-1: answer, 2 model calls, 1,200 tokens, $0.001200, 4.1 s`,
      `  ${LEAD}/sub-1-2: error (not started: the research it belongs to is finishing), 3 model calls, 0 tokens, 0.0 s`,
    ]);
    assert.deepEqual(subRunSummaryLines(undefined), []);
    assert.deepEqual(subRunSummaryLines({ modelCalls: 0, runs: [] }), []);
  });

  test('run and follow close with them between the headline and the answer', () => {
    assert.equal(
      describeResult(result({ subRuns })),
      [
        'Ended: answer after 2 model calls, 1 tool calls, 4.1 s, 1,200 tokens.',
        ...subRunSummaryLines(subRuns),
        '',
        'Answer:',
        'the answer',
      ].join('\n'),
    );
    assert.equal(
      describeResult(result()),
      'Ended: answer after 2 model calls, 1 tool calls, 4.1 s, 1,200 tokens.\n\nAnswer:\nthe answer',
    );
  });
});
