import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { parseChaosArguments, resolveChaosOptions } from '../../scripts/chaos/chaos-options';
import { planChaos, plannedReply, type RunPlan } from '../../scripts/chaos/chaos-scenario';
import {
  checkAssistantCount,
  checkDeepResearchTranscript,
  checkModelCalls,
  checkNoToolLeftRunning,
  checkNativeTranscript,
  checkTermination,
  checkToolsStoppedAfterCancel,
  percentile,
  toolIntervals,
  type ModelRequestLogEntry,
  type ToolLogEntry,
  type TranscriptMessage,
} from '../../scripts/chaos/invariants';

const system: TranscriptMessage = {
  role: 'system',
  content: 'You are a deep research assistant. Use <tool_call> and read <tool_response>.',
};
const question: TranscriptMessage = { role: 'user', content: 'Who sold more cars in 2024?' };

const call = (name: string, tag: string) =>
  `<tool_call>\n${JSON.stringify({ name, arguments: { ms: 500, tag: `@@${tag}@@` } })}\n</tool_call>`;
const response = (text: string) => `<tool_response>\n${text}\n</tool_response>`;
const assistant = (content: string): TranscriptMessage => ({ role: 'assistant', content });
const user = (content: string): TranscriptMessage => ({ role: 'user', content });

/** A valid DeepResearch transcript: two calls, then one call, then the answer. */
function deepResearchTranscript(): TranscriptMessage[] {
  return [
    system,
    question,
    assistant(`<think>Step 1.</think>\n${call('sleepy', 'r1-t1-c1')}\n${call('flaky', 'r1-t1-c2')}`),
    user(`${response('Slept 500 ms. @@r1-t1-c1@@')}\n${response('Flaky backend answered on attempt 2. @@r1-t1-c2@@')}`),
    assistant(`<think>Step 2.</think>\n${call('lookup', 'r1-t2-c1')}`),
    user(response('Facts about BYD @@r1-t2-c1@@')),
    assistant('<think>Done.</think>\n<answer>BYD</answer>'),
  ];
}

/** A valid native transcript: two calls answered by two tool messages, then the answer. */
function nativeTranscript(): TranscriptMessage[] {
  return [
    system,
    question,
    {
      role: 'assistant',
      content: '<think>Step 1.</think>',
      toolCalls: [
        { id: 'call_a', name: 'sleepy', arguments: '{"ms":500,"tag":"@@r2-t1-c1@@"}' },
        { id: 'call_b', name: 'lookup', arguments: '{"query":"BYD @@r2-t1-c2@@"}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_a', content: 'Slept 500 ms. @@r2-t1-c1@@' },
    { role: 'tool', toolCallId: 'call_b', content: 'Facts about BYD @@r2-t1-c2@@' },
    { role: 'assistant', content: 'BYD sold more.' },
  ];
}

describe('DeepResearch transcript checker', () => {
  test('a valid transcript passes, also one ending with the responses of a cancelled turn', () => {
    assert.deepEqual(checkDeepResearchTranscript(deepResearchTranscript()), []);
    const cancelled = deepResearchTranscript().slice(0, 5);
    cancelled.push(user(response('Not completed: the run was cancelled while this tool call was open.')));
    assert.deepEqual(checkDeepResearchTranscript(cancelled), []);
  });

  test('a missing <tool_response> is caught', () => {
    const messages = deepResearchTranscript();
    messages[3] = user(response('Slept 500 ms. @@r1-t1-c1@@'));
    const problems = checkDeepResearchTranscript(messages);
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /message 2 has 2 <tool_call>s but message 3 has 1 <tool_response>s/);
  });

  test('tool calls with nothing after them are caught', () => {
    const problems = checkDeepResearchTranscript(deepResearchTranscript().slice(0, 5));
    assert.match(problems.join('\n'), /message 4 has 1 <tool_call>s and nothing answers them/);
  });

  test('a duplicated tool response is caught, as an extra response and as a repeated result', () => {
    const messages = deepResearchTranscript();
    messages[5] = user(`${response('Facts about BYD @@r1-t2-c1@@')}\n${response('Facts about BYD @@r1-t2-c1@@')}`);
    assert.match(
      checkDeepResearchTranscript(messages).join('\n'),
      /message 4 has 1 <tool_call>s but message 5 has 2 <tool_response>s/,
    );

    const swapped = deepResearchTranscript();
    swapped[3] = user(`${response('Slept 500 ms. @@r1-t1-c1@@')}\n${response('Slept 500 ms. @@r1-t1-c1@@')}`);
    const problems = checkDeepResearchTranscript(swapped).join('\n');
    assert.match(problems, /carries the result of @@r1-t1-c1@@ but answers call @@r1-t1-c2@@/);
    assert.match(problems, /the result of @@r1-t1-c1@@ appears twice/);
  });

  test('responses out of call order are caught', () => {
    const messages = deepResearchTranscript();
    messages[3] = user(
      `${response('Flaky backend answered. @@r1-t1-c2@@')}\n${response('Slept 500 ms. @@r1-t1-c1@@')}`,
    );
    assert.equal(checkDeepResearchTranscript(messages).filter((problem) => /out of order/.test(problem)).length, 2);
  });

  test('a repeated assistant message and broken role alternation are caught', () => {
    const messages = deepResearchTranscript();
    messages.splice(4, 0, messages[2] as TranscriptMessage, messages[3] as TranscriptMessage);
    const problems = checkDeepResearchTranscript(messages).join('\n');
    assert.match(problems, /assistant message 4 repeats assistant message 2/);
    assert.match(problems, /tool call @@r1-t1-c1@@ was issued twice/);

    const twoAssistants = deepResearchTranscript();
    twoAssistants.splice(3, 1);
    assert.match(checkDeepResearchTranscript(twoAssistants).join('\n'), /message 3 is assistant, expected user/);
  });
});

describe('native transcript checker', () => {
  test('a valid transcript passes', () => {
    assert.deepEqual(checkNativeTranscript(nativeTranscript()), []);
  });

  test('a missing tool message is caught', () => {
    const messages = nativeTranscript();
    messages.splice(4, 1);
    assert.match(
      checkNativeTranscript(messages).join('\n'),
      /call call_b \(2 of 2 in message 2\) has no tool message right after it/,
    );
  });

  test('a duplicated tool message is caught', () => {
    const messages = nativeTranscript();
    messages.splice(5, 0, { role: 'tool', toolCallId: 'call_b', content: 'Facts about BYD @@r2-t1-c2@@' });
    assert.match(
      checkNativeTranscript(messages).join('\n'),
      /message 5 is a tool message for "call_b" with no open call before it/,
    );
  });

  test('tool messages out of order are caught', () => {
    const messages = nativeTranscript();
    [messages[3], messages[4]] = [messages[4] as TranscriptMessage, messages[3] as TranscriptMessage];
    const problems = checkNativeTranscript(messages).join('\n');
    assert.match(problems, /message 3 answers "call_b", expected call_a/);
    assert.match(problems, /message 4 answers "call_a", expected call_b/);
  });

  test('a call id issued twice and two assistant messages in a row are caught', () => {
    const messages = nativeTranscript();
    messages.splice(
      5,
      0,
      { ...(messages[2] as TranscriptMessage), content: 'again' },
      { role: 'tool', toolCallId: 'call_a', content: 'x' },
      { role: 'tool', toolCallId: 'call_b', content: 'y' },
    );
    assert.match(checkNativeTranscript(messages).join('\n'), /tool call id call_a was issued twice/);
    const doubled = nativeTranscript();
    doubled.push({ role: 'assistant', content: 'Another answer.' });
    assert.match(checkNativeTranscript(doubled).join('\n'), /messages 5 and 6 are both assistant messages/);
  });
});

describe('model call checker', () => {
  const request = (
    modelCall: number,
    receivedAt: number,
    completed: boolean,
    completedAt?: number,
  ): ModelRequestLogEntry => ({
    workflowId: 'wf',
    modelCall,
    receivedAt,
    completed,
    ...(completedAt !== undefined ? { completedAt } : {}),
  });

  test('one completed request per call, retries of cut-off requests and summary requests pass', () => {
    const requests = [
      request(1, 1_000, true, 1_500),
      request(2, 2_000, false),
      request(2, 9_000, true, 9_400),
      { receivedAt: 9_500, completed: true },
      request(3, 10_000, true, 10_300),
    ];
    const recorded = new Map([
      [1, 1_600],
      [2, 9_500],
      [3, 10_400],
    ]);
    assert.deepEqual(checkModelCalls(requests, recorded, [2_500]), { violations: [], resentAfterCrash: 0, resent: [] });
  });

  test('a completed model call sent again is caught', () => {
    const requests = [request(1, 1_000, true, 1_500), request(1, 3_000, true, 3_500)];
    const { violations } = checkModelCalls(requests, new Map([[1, 3_600]]), []);
    assert.equal(violations.length, 1);
    assert.match(violations[0] ?? '', /model call 1 completed 2 times; no crash between/);
  });

  test('a request after history recorded the completion is caught, crash or not', () => {
    const requests = [request(1, 1_000, true, 1_500), request(1, 4_000, false)];
    const { violations } = checkModelCalls(requests, new Map([[1, 1_600]]), [2_000]);
    assert.match(violations.join('\n'), /model call 1 was sent again 2400 ms after history recorded its completion/);
  });

  test('a reply lost in a crash before history recorded it may be sent again', () => {
    const requests = [request(1, 1_000, true, 1_500), request(1, 8_000, true, 8_300)];
    assert.deepEqual(checkModelCalls(requests, new Map([[1, 8_400]]), [1_510]), {
      violations: [],
      resentAfterCrash: 1,
      resent: [{ modelCall: 1, crashAt: 1_510 }],
    });
  });

  test('a completion history recorded but the server never completed is caught', () => {
    assert.match(
      checkModelCalls([request(1, 1_000, false)], new Map([[1, 2_000]]), []).violations.join('\n'),
      /completed no request/,
    );
    assert.match(checkModelCalls([], new Map([[4, 2_000]]), []).violations.join('\n'), /never received it/);
  });
});

describe('tools after a cancel', () => {
  const entry = (event: 'start' | 'stop', at: number, pid = 100, attempt = 1, callId = 'c1'): ToolLogEntry => ({
    tool: 'sleepy',
    event,
    callId,
    workflowId: 'wf',
    at,
    pid,
    attempt,
    ...(event === 'stop' ? { reason: 'cancelled' } : {}),
  });

  test('tools that stop soon after the cancel pass', () => {
    assert.deepEqual(
      checkToolsStoppedAfterCancel([entry('start', 1_000), entry('stop', 5_500)], [], 5_000, 10_000, 60_000),
      [],
    );
  });

  test('a tool running past the cancel is caught', () => {
    const problems = checkToolsStoppedAfterCancel(
      [entry('start', 1_000), entry('stop', 16_000)],
      [],
      5_000,
      10_000,
      60_000,
    );
    assert.equal(problems.length, 1);
    assert.match(problems[0] ?? '', /ran until 11.0 s after the cancel request/);
    assert.match(
      checkToolsStoppedAfterCancel([entry('start', 1_000)], [], 5_000, 10_000, 60_000).join('\n'),
      /was still running 55.0 s after the cancel request/,
    );
  });

  test('a start without a stop ends when its worker was killed', () => {
    const entries = [entry('start', 1_000, 100), entry('start', 7_000, 200, 2), entry('stop', 7_200, 200, 2)];
    assert.deepEqual(checkToolsStoppedAfterCancel(entries, [{ pid: 100, at: 6_000 }], 5_000, 10_000, 60_000), []);
    assert.equal(
      checkToolsStoppedAfterCancel(entries, [{ pid: 300, at: 6_000 }], 5_000, 10_000, 60_000).length,
      1,
      'a kill of another worker does not count',
    );
    assert.deepEqual(checkNoToolLeftRunning(entries, [{ pid: 100, at: 6_000 }], 60_000), []);
    assert.match(
      checkNoToolLeftRunning(entries, [], 60_000).join('\n'),
      /tool sleepy \(call c1, attempt 1, pid 100\) is still running after the run ended/,
    );
    const intervals = toolIntervals(entries, [{ pid: 100, at: 6_000 }], 60_000);
    assert.deepEqual(
      intervals.map((interval) => [interval.pid, interval.end, interval.endedBy]),
      [
        [100, 6_000, 'kill'],
        [200, 7_200, 'stop'],
      ],
    );
  });
});

describe('terminations, counts, percentiles, options and the plan', () => {
  test('runs end answer, or cancelled only when cancelled', () => {
    assert.deepEqual(checkTermination('answer', false), []);
    assert.deepEqual(checkTermination('cancelled', true), []);
    assert.deepEqual(checkTermination('answer', true), []);
    assert.equal(checkTermination('cancelled', false).length, 1);
    assert.equal(checkTermination('error', false).length, 1);
  });

  test('one assistant message per model call', () => {
    const messages = deepResearchTranscript();
    assert.deepEqual(checkAssistantCount(messages, 3, false), []);
    assert.equal(checkAssistantCount(messages, 4, false).length, 1);
    assert.deepEqual(checkAssistantCount(messages, 4, true), [], 'cancelled during the fourth call');
    assert.equal(checkAssistantCount(messages, 2, true).length, 1);
  });

  test('percentiles by nearest rank', () => {
    assert.equal(percentile([], 50), undefined);
    assert.equal(percentile([5, 1, 3], 50), 3);
    assert.equal(
      percentile(
        Array.from({ length: 20 }, (_, index) => index + 1),
        95,
      ),
      19,
    );
  });

  test('flags parse into options; bad ones are refused', () => {
    const { options } = parseChaosArguments(['--runs', '6', '--worker-kills=3', '--seed', '9', '--keep']);
    assert.equal(options.runs, 6);
    assert.equal(options.workerKills, 3);
    assert.equal(options.seed, 9);
    assert.equal(options.keep, true);
    assert.equal(options.spreadSeconds, 18, '3 s per run');
    assert.throws(() => parseChaosArguments(['--runs', 'many']), /--runs needs a number/);
    assert.throws(() => parseChaosArguments(['--bogus']), /unknown option/);
    assert.throws(() => resolveChaosOptions({ runs: 2, cancels: 3 }), /cannot exceed/);
  });

  test('the plan is the same for the same seed, and its replies pass the checkers', () => {
    const options = resolveChaosOptions({ runs: 5, workerKills: 4, cancels: 2, seed: 3 });
    const first = planChaos(options, 'x');
    assert.deepEqual(planChaos(options, 'x'), first);
    assert.notDeepEqual(planChaos({ ...options, seed: 4 }, 'x'), first);
    assert.equal(first.workerKillsAtMs.length, 4);
    assert.deepEqual(
      first.cancels.map((cancel) => cancel.via),
      ['client', 'cli'],
    );
    for (const plan of first.runs) {
      const messages = simulateTranscript(plan);
      assert.deepEqual(
        plan.protocol === 'native' ? checkNativeTranscript(messages) : checkDeepResearchTranscript(messages),
        [],
        plan.workflowId,
      );
    }
  });
});

/** The transcript a run of `plan` would store if every tool succeeded (tools echo their tags). */
function simulateTranscript(plan: RunPlan): TranscriptMessage[] {
  const messages: TranscriptMessage[] = [system, question];
  for (let turn = 1; turn <= plan.turns.length + 1; turn += 1) {
    const reply = plannedReply(plan, turn);
    const calls = plan.turns[turn - 1] ?? [];
    if (plan.protocol === 'native') {
      messages.push({
        role: 'assistant',
        content: reply.content ?? '',
        ...(reply.toolCalls ? { toolCalls: reply.toolCalls } : {}),
      });
      for (const planned of calls)
        messages.push({ role: 'tool', toolCallId: planned.id, content: `done ${planned.tag}` });
    } else {
      messages.push(assistant(reply.content ?? ''));
      if (calls.length) messages.push(user(calls.map((planned) => response(`done ${planned.tag}`)).join('\n')));
    }
  }
  return messages;
}
