import assert from 'node:assert/strict';
import { createOpenAIChatModel } from '../../activities/model/openai-chat-model';
import { describe, test } from '@jest/globals';
import { defaultPayloadConverter } from '@temporalio/common';
import { historyFromJSON } from '@temporalio/common/lib/proto-utils';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { temporal } from '@temporalio/proto';
import { createAgentActivities } from '../../activities';
import { ToolRegistry } from '../../activities/tools/tool-registry';
import type { CallModelOutput, CompressContextOutput, ToolActivityOutput } from '../../src/core/activity-contracts';
import { AGENT_ACTIVITY_ROLES } from '../../src/cli/activity-roles';
import { progressLines } from '../../src/cli/progress-lines';
import { RunEventReader, type HistoryEvent, type RunEvent } from '../../src/cli/run-events';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const EventType = temporal.api.enums.v1.EventType;
const ref = (letter: string) => `sha256:${letter.repeat(64)}`;

/** A history built event by event, as the server would write it. */
class History {
  readonly events: HistoryEvent[] = [];

  /** Event fields as plain values (ids as numbers); `fromObject` turns them into a proto event as the client decodes it. */
  private add(event: Record<string, unknown>): number {
    const eventId = this.events.length + 1;
    this.events.push(temporal.api.history.v1.HistoryEvent.fromObject({ eventId, ...event }));
    return eventId;
  }

  scheduled(activity: string, input: unknown): number {
    return this.add({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED,
      activityTaskScheduledEventAttributes: {
        activityId: String(this.events.length + 1),
        activityType: { name: activity },
        input: { payloads: [defaultPayloadConverter.toPayload(input)] },
      },
    });
  }

  completed(scheduledEventId: number, result: unknown): void {
    this.add({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
      activityTaskCompletedEventAttributes: {
        scheduledEventId,
        result: { payloads: [defaultPayloadConverter.toPayload(result)] },
      },
    });
  }

  /** A completion whose payload no converter here can read (e.g. encrypted by a codec this CLI lacks). */
  completedUnreadable(scheduledEventId: number): void {
    this.add({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED,
      activityTaskCompletedEventAttributes: {
        scheduledEventId,
        result: {
          payloads: [
            { metadata: { encoding: new TextEncoder().encode('binary/encrypted') }, data: new Uint8Array([1, 2, 3]) },
          ],
        },
      },
    });
  }

  failed(scheduledEventId: number, message: string): void {
    this.add({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_FAILED,
      activityTaskFailedEventAttributes: {
        scheduledEventId,
        failure: { message, applicationFailureInfo: { type: 'Test' } },
      },
    });
  }

  cancelled(scheduledEventId: number): void {
    this.add({
      eventType: EventType.EVENT_TYPE_ACTIVITY_TASK_CANCELED,
      activityTaskCanceledEventAttributes: { scheduledEventId },
    });
  }

  /** The run's first event, with its input. */
  started(input: unknown): void {
    this.add({
      eventType: EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED,
      workflowExecutionStartedEventAttributes: { input: { payloads: [defaultPayloadConverter.toPayload(input)] } },
    });
  }

  read(): RunEvent[] {
    const reader = new RunEventReader();
    return this.events.flatMap((event) => reader.read(event));
  }
}

const modelOutput: CallModelOutput = {
  conversation: ref('c'),
  assistant: { ref: ref('a'), preview: '…', characters: 10 },
  turn: { thought: 'Search first.', toolCalls: [{ id: 'call-1-1', name: 'search', arguments: { query: ['BYD'] } }] },
  usage: { promptTokens: 900, completionTokens: 100, totalTokens: 1_000 },
  contextTokens: 1_000,
  finishReason: 'stop',
};
const toolOutput: ToolActivityOutput = {
  observation: { ref: ref('b'), preview: 'BYD sold 4.27 million', characters: 2_000 },
  isError: false,
  tokens: 500,
};
const compressed: CompressContextOutput = {
  conversation: ref('d'),
  contextTokens: 40_000,
  stubbedObservations: 3,
  summarizedTurns: 1,
};

describe('RunEventReader', () => {
  test('sums what the calls cost so far, from a continued run’s carried usage on, with the budget the run has (issue 19)', () => {
    const priced = (costUsd: number): CallModelOutput => ({ ...modelOutput, usage: { ...modelOutput.usage, costUsd } });
    const history = new History();
    history.started({
      question: 'q',
      limits: { maxModelCalls: 5 },
      resume: {
        limits: { maxModelCalls: 5, maxCostUsd: 0.5 },
        usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2, costUsd: 0.25 },
      },
    });
    history.completed(
      history.scheduled('callModel', { modelCall: 4, conversation: ref('c'), append: [] }),
      priced(0.125),
    );
    history.completed(
      history.scheduled('callModel', { modelCall: 5, conversation: ref('c'), append: [] }),
      priced(0.0625),
    );
    const spent = history.read().flatMap((event) => (event.kind === 'model_call_completed' ? [event.spent] : []));
    assert.deepEqual(spent, [
      { costUsd: 0.375, maxCostUsd: 0.5 },
      { costUsd: 0.4375, maxCostUsd: 0.5 },
    ]);
    const [line] = progressLines(history.read().find((event) => event.kind === 'model_call_completed') as RunEvent);
    assert.equal(line, '[call 4] 1,000 context tokens (+100, $0.1250; $0.3750 of $0.5000 spent)');

    const unpriced = new History();
    unpriced.started({ question: 'q' });
    unpriced.completed(
      unpriced.scheduled('callModel', { modelCall: 1, conversation: ref('c'), append: [] }),
      modelOutput,
    );
    const event = unpriced.read().find((each) => each.kind === 'model_call_completed');
    assert.ok(event?.kind === 'model_call_completed');
    assert.equal('spent' in event, false, 'no price: no cost, not $0');
    assert.equal(progressLines(event as RunEvent)[0], '[call 1] 1,000 context tokens (+100)');
  });

  test('reads a history with a context compression and an unknown activity without mistaking either for a tool', () => {
    const history = new History();
    history.completed(history.scheduled('startConversation', { question: 'q' }), {
      conversation: ref('c'),
      tools: [],
      contextTokens: 10,
    });
    history.completed(
      history.scheduled('callModel', { modelCall: 1, conversation: ref('c'), append: [] }),
      modelOutput,
    );
    history.completed(
      history.scheduled('search', {
        workflowId: 'w',
        callId: 'call-1-1',
        arguments: { query: ['BYD'] },
        maxObservationCharacters: 10_000,
      }),
      toolOutput,
    );
    history.completed(
      history.scheduled('compressContext', {
        workflowId: 'w',
        conversation: ref('c'),
        append: [],
        targetTokens: 66_000,
        summarize: true,
        keepRecentTurns: 3,
      }),
      compressed,
    );
    history.completed(history.scheduled('auditTrail', { anything: true }), { written: 1 });
    history.completed(history.scheduled('finishTranscript', { conversation: ref('d'), append: [] }), {
      conversation: ref('e'),
      messages: 6,
    });

    const events = history.read();
    assert.deepEqual(
      events.map((event) => event.kind),
      [
        'model_call_started',
        'model_call_completed',
        'tool_started',
        'tool_completed',
        'compression_started',
        'context_compressed',
        'activity_completed',
      ],
    );
    assert.deepEqual(events[4], { kind: 'compression_started', targetTokens: 66_000, summarize: true });
    assert.deepEqual(events[5], { kind: 'context_compressed', output: compressed });
    assert.deepEqual(events[6], { kind: 'activity_completed', activity: 'auditTrail' });
    assert.ok(
      !events.some((event) => event.kind === 'tool_completed' && event.tool !== 'search'),
      'only search is a tool',
    );

    const lines = events.flatMap((event) => progressLines(event));
    assert.ok(
      lines.includes('  context compressed: 3 observations stubbed, 1 turn summarised; now 40,000 tokens'),
      lines.join('\n'),
    );
    assert.ok(lines.includes('  auditTrail completed'), lines.join('\n'));
  });

  test('a result it cannot decode or does not recognise becomes a generic step, never an exception', () => {
    const history = new History();
    history.completedUnreadable(history.scheduled('callModel', { modelCall: 1 }));
    history.completedUnreadable(history.scheduled('lookup', { callId: 'call-1-1', arguments: {} }));
    history.completed(history.scheduled('compressContext', { targetTokens: 10 }), { somethingElse: true });
    history.completed(history.scheduled('lookup', { callId: 'call-2-1', arguments: {} }), 'a bare string');
    const events = history.read();
    assert.deepEqual(
      events.filter((event) => event.kind === 'activity_completed'),
      [
        { kind: 'activity_completed', activity: 'callModel' },
        { kind: 'activity_completed', activity: 'lookup' },
        { kind: 'activity_completed', activity: 'compressContext' },
        { kind: 'activity_completed', activity: 'lookup' },
      ],
    );
    for (const event of events) assert.doesNotThrow(() => progressLines(event));
  });

  test('a failed compression is reported under its own name', () => {
    const history = new History();
    history.failed(history.scheduled('compressContext', { targetTokens: 10 }), 'summary call refused');
    assert.deepEqual(history.read().at(-1), {
      kind: 'activity_failed',
      activity: 'compressContext',
      message: 'summary call refused',
    });
  });

  test('a cancelled tool is shown as cancelled', () => {
    const history = new History();
    history.cancelled(history.scheduled('wait', { callId: 'call-1-1', arguments: { seconds: 60 } }));
    const events = history.read();
    assert.deepEqual(events.at(-1), { kind: 'activity_cancelled', activity: 'wait' });
    assert.deepEqual(progressLines(events.at(-1) as RunEvent), ['  wait cancelled']);
  });

  test("knows every one of the agent's own activities (activities/index.ts), and nothing else", () => {
    const registered = createAgentActivities({
      chatModel: createOpenAIChatModel({ apiKey: 'unused', baseUrl: 'http://127.0.0.1:9/v1' }),
      store: new MemoryTranscriptStore(),
      tools: new ToolRegistry([]),
      modelDefaults: { model: 'm', temperature: 0, topP: 1, maxOutputTokens: 10 },
      modelActivity: { startToCloseSeconds: 1, heartbeatSeconds: 1, maxAttempts: 1 },
      tokenCounter: { count: (text) => text.length },
    });
    assert.deepEqual(Object.keys(AGENT_ACTIVITY_ROLES).sort(), Object.keys(registered).sort());
  });
});

describe('a run with light bookkeeping (issue 34): its transcript opened in a local activity', () => {
  const recorded = (name: string): HistoryEvent[] =>
    historyFromJSON(JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'histories', name), 'utf8'))).events ??
    [];
  const read = (events: HistoryEvent[]) => {
    const reader = new RunEventReader();
    return events.flatMap((event) => reader.read(event));
  };

  test('follow still prints the context window startConversation learned, and every call and tool, nothing for the bookkeeping', () => {
    const events = read(recorded('light-bookkeeping-run1.json'));
    assert.deepEqual(events[0], { kind: 'context_window_learned', output: { maxOutputTokens: 10_000 } });
    assert.equal(events.filter((event) => event.kind === 'context_window_learned').length, 1);
    assert.equal(events.filter((event) => event.kind === 'model_call_completed').length, 11);
    assert.equal(events.filter((event) => event.kind === 'tool_completed').length, 11);
    assert.equal(events.at(-1)?.kind, 'continued_as_new');
    assert.deepEqual(
      events.filter((event) => event.kind === 'activity_completed'),
      [],
    );
  });

  test('a finishTranscript run locally adds nothing; the run ends with its result', () => {
    const events = read(recorded('light-bookkeeping-max-calls.json'));
    assert.deepEqual(
      events.map((event) => event.kind),
      [
        'context_window_learned',
        'model_call_started',
        'model_call_completed',
        'tool_started',
        'tool_completed',
        'model_call_started',
        'model_call_completed',
        'tool_started',
        'tool_completed',
        'run_completed',
      ],
    );
  });

  test('an unreadable or failed local activity marker, or a patch marker, is skipped', () => {
    const marker = (attributes: Record<string, unknown>) =>
      temporal.api.history.v1.HistoryEvent.fromObject({
        eventId: 1,
        eventType: EventType.EVENT_TYPE_MARKER_RECORDED,
        markerRecordedEventAttributes: attributes,
      });
    const payloads = (value: unknown) => ({ payloads: [defaultPayloadConverter.toPayload(value)] });
    const window = { contextWindow: { maxOutputTokens: 10 } };
    assert.deepEqual(
      read([
        marker({ markerName: 'core_patch', details: { 'patch-data': payloads({ id: 'x' }) } }),
        marker({
          markerName: 'core_local_activity',
          details: { data: payloads('nonsense'), result: payloads(window) },
        }),
        marker({
          markerName: 'core_local_activity',
          details: { data: payloads({ activity_type: 'startConversation' }) },
          failure: { message: 'store down' },
        }),
        marker({
          markerName: 'core_local_activity',
          details: { data: payloads({ activity_type: 'finishTranscript' }), result: payloads(window) },
        }),
      ]),
      [],
    );
  });
});
