/**
 * Records workflow histories of representative runs into test/fixtures/histories/, for the
 * replay test that guards deploys: a change to workflows/ that would break runs already in
 * flight fails replay of these histories and needs `patched()`.
 *
 *   npx tsx scripts/record-replay-histories.ts               records every fixture
 *   npx tsx scripts/record-replay-histories.ts NAME [NAME…]  records only these, keeping the others
 *
 * Keep fixtures recorded from older code: they are what deployed runs look like. Record a new one
 * for a new path through the loop; re-record an old one only when a change is meant to be
 * incompatible. `unusable-replies-before-patch.json` was recorded with the code before the
 * `unusable-replies` patch (the `unusable-replies` scenario, renamed), so it replays the old way.
 * The fixtures from `steering-inject-limits` on were recorded with the code before the run became
 * a state machine (issue 10). The `context-window-*` fixtures record the context window's paths
 * (issue 16): learned from the server at the start, or from its context-length error. The
 * `search-attributes-*` fixtures record the run's search attributes (issue 22: ReactQuestion,
 * ReactModel, ReactProtocol, ReactTokens). `tool-specs-by-reference` records a run whose tool list is
 * stored by reference (issue 18: history keeps the blob's reference and each tool's scheduling).
 * `cost-limit` and `cost-budget-without-price` record the cost budget (issue 19, marker
 * `cost-budget`; only `priced-model` has a price). `bounded-answer-checks` records answers checked
 * within bounds, a pattern in RE2 (issue 28). `resumed-from` records a chain whose continue-as-new
 * input names the run it came from, which the next run checks (issue 28). `sub-runs` records a lead
 * that delegates two tasks (issue 30: child workflows, `ReactTreeId`), and `sub-runs-child` the sub-run
 * whose own `delegate` call the depth limit refused. `approvals-after-their-effect` records approvals that complete
 * after their effect (issue 34: the same history whether the tracing interceptors are bundled or not).
 * `light-bookkeeping` records a run with light bookkeeping (issue 34: startConversation a local activity that
 * learns the context window, no learnContextWindow activity, finishTranscript only when something is left to
 * append, fewer upserts and markers) over a continue-as-new, and `light-bookkeeping-max-calls` one that ends with
 * an open tool call (finishTranscript as a local activity). `lean-activity-inputs` (native tool calls) and
 * `lean-activity-inputs-tags` (the tag protocol, a run's own observation limit) record model and tool calls that
 * carry only what their activities cannot learn (issue 34). With `--untraced` the worker runs the untraced bundle
 * (UNTRACED_WORKFLOW_INTERCEPTOR_MODULES, what a worker without an OTLP endpoint runs) and each fixture is
 * `NAME-untraced.json`: `approvals-after-their-effect-untraced`. A continue-as-new scenario records one fixture per run of its chain
 * (`NAME-run1.json`, …).
 */
import type { WorkflowHandle, WorkflowHandleWithFirstExecutionRunId } from '@temporalio/client';
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { countConversationTokens, createTiktokenCounter } from '../activities/token-counter';
import {
  TRACING_WORKFLOW_INTERCEPTOR_MODULES,
  UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
} from '../src/config/workflow-interceptors';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import { cachedWorkflowBundle } from '../test/integration/support/workflow-bundle';
import { answer, runId, Scenarios, toolCall } from '../test/integration/support/scenarios';
import { waitForToolLog } from '../test/integration/support/tool-log';
import type { ResearchRunInput } from '../src/core/run-input';
import {
  approveToolCallUpdate,
  finishNowUpdate,
  injectMessageUpdate,
  progressQuery,
  setLimitsUpdate,
} from '../src/core/message-definitions';
import type { ScriptedReply, ScriptedRequest } from '../test/fakes/scripted-model-server';

const directory = join(__dirname, '..', 'test', 'fixtures', 'histories');
const untraced = process.argv.includes('--untraced');
const only = process.argv.slice(2).filter((argument) => argument !== '--untraced');
/** The fixture a scenario is written to: `NAME`, or `NAME-untraced` when recorded on the untraced bundle. */
const fixtureName = (name: string) => (untraced ? `${name}-untraced` : name);
const counter = createTiktokenCounter();

async function main(): Promise<void> {
  const scenarios = new Scenarios();
  // Only `priced-model` has a price (the cost scenarios run it); every other scenario's model has none, as before prices existed.
  const environment = await AgentEnvironment.start({
    script: scenarios.script,
    workerEnvironment: { REACT_AGENT_MODEL_PRICES: JSON.stringify({ 'priced-model': { input: 2, output: 10 } }) },
  });
  try {
    // Recorded on the traced bundle, as the fixtures always were, unless `--untraced`.
    await environment.startWorker({
      REACT_AGENT_WORKFLOW_BUNDLE: await cachedWorkflowBundle(
        undefined,
        untraced ? UNTRACED_WORKFLOW_INTERCEPTOR_MODULES : TRACING_WORKFLOW_INTERCEPTOR_MODULES,
      ),
    });
    const record = async (
      name: string,
      replies: Parameters<Scenarios['add']>[1],
      input: Partial<ResearchRunInput> = {},
      during?: (workflowId: string, handle: WorkflowHandle) => Promise<void>,
      { everyRun = false, subRun }: { everyRun?: boolean; subRun?: string } = {},
    ) => {
      if (only.length && !only.includes(name)) return;
      const fixture = fixtureName(name);
      const workflowId = scenarios.add(runId(name), replies);
      const handle = await environment.startRun({ question: `Replay fixture: ${name}`, ...input }, workflowId);
      if (during) await during(workflowId, handle);
      await handle.result().catch(() => undefined);
      if (!everyRun) {
        const history = await handle.fetchHistory();
        writeFileSync(join(directory, `${fixture}.json`), `${historyToJSON(history)}\n`);
        console.log(`recorded ${fixture}: ${history.events?.length} events`);
        if (subRun) {
          // One of its sub-runs (issue 30), whose id is under the lead's: `${workflowId}/${subRun}`.
          const child = await environment.client.workflow.getHandle(`${workflowId}/${subRun}`).fetchHistory();
          writeFileSync(join(directory, `${fixture}-child.json`), `${historyToJSON(child)}\n`);
          console.log(`recorded ${fixture}-child: ${child.events?.length} events`);
        }
        return;
      }
      // A chain of runs (continue-as-new): one fixture per run, following each run to the next.
      let runIdOfRun: string | undefined = (handle as WorkflowHandleWithFirstExecutionRunId).firstExecutionRunId;
      for (let index = 1; runIdOfRun; index += 1) {
        const history = await environment.client.workflow.getHandle(workflowId, runIdOfRun).fetchHistory();
        writeFileSync(join(directory, `${fixture}-run${index}.json`), `${historyToJSON(history)}\n`);
        console.log(`recorded ${fixture}-run${index}: ${history.events?.length} events`);
        runIdOfRun =
          history.events?.at(-1)?.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
      }
    };
    const untilTool = (workflowId: string, tool?: string) =>
      waitForToolLog(environment.toolLog, workflowId, (entries) =>
        entries.some((entry) => entry.event === 'start' && (tool === undefined || entry.tool === tool)),
      );
    const waitFor = async <T>(probe: () => Promise<T | undefined>): Promise<T> => {
      for (let tries = 0; tries < 300; tries += 1) {
        const value = await probe().catch(() => undefined);
        if (value !== undefined) return value;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      throw new Error('condition not met in time');
    };
    const lastMessage = (request: ScriptedRequest) => String(request.messages.at(-1)?.content ?? '');
    const asksForFinalAnswer = (request: ScriptedRequest) => /Stop calling tools now/.test(lastMessage(request));
    await record('deep-research-answer', [
      toolCall('lookup', { query: 'BYD' }),
      { content: '<tool_call>{"name": "nope"}</tool_call>' },
      answer('BYD'),
    ]);
    await record(
      'native-parallel',
      [
        {
          content: '',
          toolCalls: [
            { id: 'a', name: 'lookup', arguments: '{"query":"x"}' },
            { id: 'b', name: 'broken', arguments: '{}' },
          ],
        },
        { content: 'done' },
      ],
      { protocol: 'native' },
    );
    await record('max-calls-final-answer', (turn) => toolCall('lookup', { query: `step ${turn}` }), {
      limits: { maxModelCalls: 2 },
    });
    await record('cancelled-during-tool', [toolCall('wait', { seconds: 60 })], {}, async (workflowId) => {
      await waitForToolLog(environment.toolLog, workflowId, (entries) =>
        entries.some((entry) => entry.event === 'start'),
      );
      await environment.client.workflow.getHandle(workflowId).cancel();
    });
    await record('structured-answer', [answer('no json'), answer('{"winner": "BYD"}')], {
      answerSchema: { type: 'object', required: ['winner'] },
    });
    // Four unparseable calls (format corrections, not stuck), an answer cut off at the output limit (asked for again), the answer.
    const unparseable = { content: '<tool_call>\n{"name": "lookup", "arguments": {"query": </tool_call>' };
    await record('unusable-replies', (turn) =>
      turn <= 4
        ? unparseable
        : turn === 5
          ? { content: '<answer>BYD sold more cars th', finishReason: 'length' }
          : answer('BYD'),
    );
    // A server whose tokenizer counts 1.5 times our estimate: compression is calibrated with the reported ratio.
    await record(
      'calibrated-compression',
      (turn, request) => {
        if (request.body.stream === false) return { content: 'SUMMARY: BYD sold 4.27M vehicles in 2024.' };
        const call = request.modelCall ?? turn;
        const reply =
          call === 1
            ? toolCall('lookup', { query: 'BYD' }, 'The quick brown fox jumps over the lazy dog. '.repeat(200))
            : call <= 5
              ? toolCall('lookup', { query: `step ${call}` })
              : answer('BYD');
        const estimate = countConversationTokens(
          request.messages.map((message) => ({ role: 'user', content: String(message.content ?? '') })),
          counter,
        );
        return { ...reply, promptTokens: Math.round(1.5 * estimate) };
      },
      {
        limits: { maxContextTokens: 8_000 },
        loop: { compressAtFraction: 0.5, keepRecentTurns: 1, stuckDetection: false },
      },
    );

    // ---- Recorded before the run became a state machine (issue 10): every path the refactor touches. ----
    // Steering: a message injected during a tool call, the call budget raised and the deadline re-armed.
    await record(
      'steering-inject-limits',
      (turn) => (turn === 1 ? toolCall('wait', { seconds: 2 }) : toolCall('lookup', { query: `step ${turn}` })),
      { limits: { maxModelCalls: 2 }, loop: { stuckDetection: false } },
      async (workflowId, handle) => {
        await untilTool(workflowId);
        await handle.executeUpdate(injectMessageUpdate, { args: [{ text: 'Focus on 2024 only.' }] });
        await handle.executeUpdate(setLimitsUpdate, { args: [{ maxModelCalls: 3, maxDurationMinutes: 30 }] });
      },
    );
    // finishNow during a long tool: the tool is cancelled and the final answer phase asks for the best answer.
    await record(
      'finish-now',
      (_turn, request) => (asksForFinalAnswer(request) ? answer('partial answer') : toolCall('wait', { seconds: 60 })),
      {},
      async (workflowId, handle) => {
        await untilTool(workflowId);
        await handle.executeUpdate(finishNowUpdate, { args: [{ reason: 'the user has enough' }] });
      },
    );
    // Approvals: two guarded calls in one turn (one approved, one denied), then one that times out.
    const guarded = (query: string) =>
      `<tool_call>\n${JSON.stringify({ name: 'guarded_lookup', arguments: { query } })}\n</tool_call>`;
    await record(
      'approvals',
      [
        { content: `<think>Two lookups.</think>\n${guarded('a')}\n${guarded('b')}` },
        { content: `<think>One more.</think>\n${guarded('c')}` },
        answer('approved and denied'),
      ],
      { loop: { approvalTimeoutMinutes: 0.1 } },
      async (_workflowId, handle) => {
        const waiting = await waitFor(async () => {
          const calls = (await handle.query(progressQuery)).awaitingApproval;
          return calls.length === 2 ? calls : undefined;
        });
        await handle.executeUpdate(approveToolCallUpdate, {
          args: [{ callId: waiting[0]?.callId as string, approved: true, reviewer: 'alice' }],
        });
        await handle.executeUpdate(approveToolCallUpdate, {
          args: [{ callId: waiting[1]?.callId as string, approved: false, reason: 'not this one', reviewer: 'bob' }],
        });
      },
    );
    // Continue-as-new every 2 model calls, with a message injected on the way: one fixture per run.
    await record(
      'continue-as-new',
      (turn) =>
        turn === 1
          ? toolCall('wait', { seconds: 2 })
          : turn <= 5
            ? toolCall('lookup', { query: `step ${turn}` })
            : answer('all steps done'),
      { loop: { continueAsNewAfterModelCalls: 2, stuckDetection: false } },
      async (workflowId, handle) => {
        await untilTool(workflowId);
        await handle.executeUpdate(injectMessageUpdate, { args: [{ text: 'Keep going.' }] });
      },
      { everyRun: true },
    );
    // The wall-time budget ends during a tool call: the deadline timer cancels the loop.
    // A chain whose continued runs check that their state came from the run before (issue 28: `resumedFrom`).
    await record(
      'resumed-from',
      (turn) => (turn <= 2 ? toolCall('lookup', { query: `step ${turn}` }) : answer('resumed twice')),
      { loop: { continueAsNewAfterModelCalls: 1, stuckDetection: false } },
      undefined,
      { everyRun: true },
    );
    await record('timeout-during-tool', [toolCall('wait', { seconds: 60 })], { limits: { maxDurationMinutes: 0.05 } });
    // The context passes its limit: the last observations are withheld from the final answer call.
    await record(
      'token-limit-withheld',
      (turn, request) =>
        lastMessage(request).includes('maximum context length')
          ? answer('best guess: BYD')
          : { ...toolCall('lookup', { query: `step ${turn}` }), promptTokens: 900 * turn, completionTokens: 50 },
      { limits: { maxContextTokens: 2_000 }, loop: { compressAtFraction: 0 } },
    );
    // The model server's context-length 400: token_limit through the final answer.
    await record('context-length-error', (turn, request) =>
      asksForFinalAnswer(request)
        ? answer('short answer')
        : turn === 1
          ? toolCall('lookup', { query: 'a' })
          : {
              status: 400,
              errorCode: 'context_length_exceeded',
              errorMessage: "This model's maximum context length is 8192 tokens.",
            },
    );
    // A rejected API key: error at once.
    await record('model-error', [{ status: 401, errorMessage: 'Incorrect API key provided' }]);
    // The same call again after the warning: stuck through the final answer.
    await record('stuck', (_turn, request) =>
      asksForFinalAnswer(request) ? answer('best effort: BYD') : toolCall('lookup', { query: 'same' }),
    );
    // A model that never writes the format: error through the final answer after loop.maxMalformedReplies.
    await record(
      'malformed-replies-limit',
      (_turn, request) =>
        asksForFinalAnswer(request) ? answer('best effort: BYD') : { content: 'I would rather chat.' },
      { loop: { maxMalformedReplies: 2 } },
    );
    // Every reply cut off: token_limit, the final answer retried once, then kept marked.
    await record('always-truncated', () => ({
      content: '<think>Enough.</think>\n<answer>BYD sold more cars th',
      finishReason: 'length',
    }));
    // An answer that never matches the schema: error after the attempts.
    await record('structured-answer-fails', [answer('not json')], {
      answerSchema: { type: 'object' },
      loop: { answerAttempts: 2 },
    });
    // Answers checked within bounds (issue 28, marker `bounded-answer-checks`): a pattern in RE2, an answer failing it, then one matching.
    await record('bounded-answer-checks', [answer('{"code": "ab-1"}'), answer('{"code": "AB-1"}')], {
      answerSchema: {
        type: 'object',
        properties: { code: { type: 'string', pattern: '^[A-Z]{2}-\\d+$' } },
        required: ['code'],
      },
    });
    // No final answer phase: max_calls ends at once.
    await record('max-calls-no-final-answer', (turn) => toolCall('lookup', { query: `step ${turn}` }), {
      limits: { maxModelCalls: 2 },
      loop: { finalAnswerPhase: false },
    });
    // Classic protocol with a broken format and its correction; an answer together with a tool call.
    await record(
      'classic-correction',
      [
        { content: 'Thought: Look it up.\nAction: lookup\nAction Input: {"query": "BYD 2024"}' },
        { content: 'I think the answer is BYD.' },
        { content: 'Thought: Enough.\nFinal Answer: BYD, by 2.48 million.' },
      ],
      { protocol: 'classic' },
    );
    await record('answer-with-tool-call', [
      {
        content: `<think>Both.</think>\n<tool_call>\n${JSON.stringify({ name: 'lookup', arguments: { query: 'x' } })}\n</tool_call>\n<answer>BYD</answer>`,
      },
    ]);
    // Cancelled during a model call, and during the final answer call.
    await record(
      'cancelled-during-model',
      [toolCall('lookup', { query: 'kept' }), { content: 'never finished', chunks: 50, delayBetweenChunksMs: 500 }],
      {},
      async (workflowId, handle) => {
        await environment.model.waitForRequest(
          (request) => request.workflowId === workflowId && request.modelCall === 2,
        );
        await handle.cancel();
      },
    );
    await record(
      'cancelled-during-final-answer',
      (turn, request) =>
        asksForFinalAnswer(request)
          ? { content: 'never finished', chunks: 50, delayBetweenChunksMs: 500 }
          : toolCall('lookup', { query: `step ${turn}` }),
      { limits: { maxModelCalls: 1 } },
      async (workflowId, handle) => {
        await environment.model.waitForRequest(
          (request) => request.workflowId === workflowId && asksForFinalAnswer(request),
        );
        await handle.cancel();
      },
    );
    // Compression with a model-written summary of old turns.
    await record(
      'compression-summary',
      (turn, request) => {
        if (request.body.stream === false) return { content: 'SUMMARY: BYD sold 4.27M vehicles in 2024.' };
        const call = request.modelCall ?? turn;
        return call <= 6 ? toolCall('big_output', { characters: 3_000 }, `step ${call}`) : answer('BYD');
      },
      {
        limits: { maxContextTokens: 4_000 },
        loop: { compressAtFraction: 0.5, keepRecentTurns: 1, stuckDetection: false },
      },
    );

    // ---- Issue 16: the model server's context window (markers context-window, final-answer-fits). ----
    // A model that keeps researching with long observations; the answer when asked for it.
    const promptTokens = (request: ScriptedRequest) =>
      Math.ceil(request.messages.reduce((total, message) => total + String(message.content ?? '').length, 0) / 4);
    const researcher =
      (characters: number, longThoughtAfter = Number.POSITIVE_INFINITY) =>
      (turn: number, request: ScriptedRequest) =>
        request.body.stream === false
          ? { content: 'SUMMARY: BYD sold 4.27M vehicles in 2024.' }
          : asksForFinalAnswer(request)
            ? answer('BYD, by 2.48 million')
            : toolCall(
                'big_output',
                { characters: characters + turn },
                promptTokens(request) > longThoughtAfter
                  ? `step ${turn}: ${'a long train of thought. '.repeat(400)}`
                  : `step ${turn}`,
              );
    // A 4,096-token window said by llama-server's /props; the loop's compression off, a long last reply: the final answer call is compressed to fit.
    environment.model.setContextWindow(4_096);
    await record('context-window-final-fit', researcher(1_500, 1_800), {
      loop: { compressAtFraction: 0, keepRecentTurns: 1 },
    });
    // The same window said nowhere: the server's 400 names it, and the final answer call is fitted to it.
    environment.model.setContextWindow(4_096, 'none');
    await record('context-window-from-error', researcher(3_000));
    environment.model.setContextWindow(undefined);

    // ---- Issue 22: the run's search attributes (marker run-search-attributes). ----
    // 13 model calls with the run's own model, continuing as new every 6: question, protocol and model when the
    // transcript opens; tokens at the 10th call, before each continuation and at the end.
    await record(
      'search-attributes',
      (turn) => (turn < 13 ? toolCall('lookup', { query: `step ${turn}` }) : answer('BYD')),
      { model: { model: 'fixture-model' }, loop: { continueAsNewAfterModelCalls: 6, stuckDetection: false } },
      undefined,
      { everyRun: true },
    );

    // ---- Issue 18: the run's tool list stored by reference (marker tool-specs-by-reference). ----
    // Native tool calls (the model call sends the stored schemas), an approved guarded call (its approval flag
    // from what history keeps), a tool the run was not given, then the answer.
    await record(
      'tool-specs-by-reference',
      [
        {
          content: '',
          toolCalls: [
            { id: 'a', name: 'lookup', arguments: '{"query":"BYD"}' },
            { id: 'b', name: 'guarded_lookup', arguments: '{"query":"Tesla"}' },
          ],
        },
        { content: '', toolCalls: [{ id: 'c', name: 'nope', arguments: '{}' }] },
        { content: 'BYD' },
      ],
      { protocol: 'native' },
      async (_workflowId, handle) => {
        const waiting = await waitFor(async () => {
          const calls = (await handle.query(progressQuery)).awaitingApproval;
          return calls.length === 1 ? calls : undefined;
        });
        await handle.executeUpdate(approveToolCallUpdate, {
          args: [{ callId: waiting[0]?.callId as string, approved: true, reviewer: 'alice' }],
        });
      },
    );

    // ---- Issue 34: an approval completes after its effect (marker approvals-complete-after-their-effect). ----
    // Two guarded calls approved one after the other, and one refused: each update's completion comes after its
    // wait's timer was cancelled, in histories recorded with the tracing interceptors or without them.
    await record(
      'approvals-after-their-effect',
      [
        { content: '', toolCalls: [{ id: 'a', name: 'guarded_lookup', arguments: '{"query":"BYD"}' }] },
        {
          content: '',
          toolCalls: [
            { id: 'b', name: 'guarded_lookup', arguments: '{"query":"Tesla"}' },
            { id: 'c', name: 'lookup', arguments: '{"query":"NIO"}' },
          ],
        },
        { content: 'BYD' },
      ],
      { protocol: 'native' },
      async (_workflowId, handle) => {
        for (const approved of [true, false]) {
          const waiting = await waitFor(async () => {
            const calls = (await handle.query(progressQuery)).awaitingApproval;
            return calls.length === 1 ? calls : undefined;
          });
          await handle.executeUpdate(approveToolCallUpdate, {
            args: [{ callId: waiting[0]?.callId as string, approved, reviewer: 'alice' }],
          });
        }
      },
    );

    // ---- Issue 19: the cost budget (marker cost-budget). ----
    // Calls of 0.03 USD against a 0.1 USD budget: three research calls, then cost_limit through the final answer call.
    const pricedCall = (reply: ScriptedReply): ScriptedReply => ({
      ...reply,
      promptTokens: 10_000,
      completionTokens: 1_000,
    });
    await record(
      'cost-limit',
      (turn, request) =>
        pricedCall(
          asksForFinalAnswer(request)
            ? answer('BYD, from what I found.')
            : toolCall('lookup', { query: `step ${turn}` }),
        ),
      {
        model: { model: 'priced-model' },
        limits: { maxCostUsd: 0.1 },
      },
    );
    // A cost budget for a model without a price: error after the first call, its tool call answered as not run.
    await record('cost-budget-without-price', (turn) => pricedCall(toolCall('lookup', { query: `step ${turn}` })), {
      limits: { maxCostUsd: 0.1 },
    });

    // ---- Issue 30: sub-runs. A lead delegates two tasks (one sub-run tries to delegate again and is refused), then answers. ----
    await record(
      'sub-runs',
      (turn, request) => {
        if ((request.workflowId ?? '').includes('/sub-')) {
          if (turn === 1)
            return (request.workflowId ?? '').endsWith('-1')
              ? toolCall('lookup', { query: 'BYD 2024' })
              : toolCall('delegate', { tasks: [{ question: 'A grandchild?' }] });
          return answer(`Part ${(request.workflowId ?? '').slice(-1)}: about four million.`);
        }
        if (turn === 1)
          return toolCall('delegate', {
            tasks: [{ question: 'BYD sales in 2024?' }, { question: 'Tesla deliveries in 2024?', tools: ['lookup'] }],
          });
        return answer('BYD sold more, from both reports.');
      },
      { subruns: { maxParallel: 2 }, limits: { maxModelCalls: 20 } },
      undefined,
      { subRun: 'sub-1-2' },
    );

    // ---- Issue 34: light bookkeeping (marker light-bookkeeping). ----
    // Native tool calls over two runs (continue-as-new after 11 calls): startConversation a local activity that
    // learned the context window, no learnContextWindow or finishTranscript activity, the upsert of the tenth
    // call, one upsert before continuing and one at the end, the deadline timer left to the server.
    await record(
      'light-bookkeeping',
      (turn) =>
        turn < 13
          ? {
              content: '',
              toolCalls: [{ id: `call-${turn}`, name: 'lookup', arguments: JSON.stringify({ query: `step ${turn}` }) }],
            }
          : { content: 'BYD' },
      { protocol: 'native', loop: { continueAsNewAfterModelCalls: 11, stuckDetection: false } },
      undefined,
      { everyRun: true },
    );
    // An open tool call at the end (max_calls without the final answer phase): finishTranscript as a local activity.
    await record('light-bookkeeping-max-calls', (turn) => toolCall('lookup', { query: `step ${turn}` }), {
      limits: { maxModelCalls: 2 },
      loop: { finalAnswerPhase: false },
    });

    // ---- Issue 34: lean activity inputs (marker lean-activity-inputs, which implies light-bookkeeping). ----
    // Native tool calls: each model call carries the stored specs' reference alone, no workflow id; the tool
    // calls neither the workflow id nor the default observation limit.
    await record(
      'lean-activity-inputs',
      (turn) =>
        turn < 4
          ? {
              content: '',
              toolCalls: [{ id: `call-${turn}`, name: 'lookup', arguments: JSON.stringify({ query: `step ${turn}` }) }],
            }
          : { content: 'BYD' },
      { protocol: 'native' },
    );
    // The tag protocol (its tools in the system prompt: a model call carries nothing of them) with a run's own
    // observation limit, which its tool calls carry.
    await record(
      'lean-activity-inputs-tags',
      (turn) => (turn < 3 ? toolCall('lookup', { query: `step ${turn}` }) : answer('BYD')),
      { limits: { maxObservationCharacters: 5_000 } },
    );
  } finally {
    await environment.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
