import { TestWorkflowEnvironment } from '@temporalio/testing';
import { DefaultLogger, Runtime, Worker } from '@temporalio/worker';
import type { WorkflowHandle } from '@temporalio/client';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { createActivities, ToolRegistry } from '../../../activities';
import type { ChatRequest } from '../../../activities/model/chat-model';
import { MODEL_CALL_LABEL, WORKFLOW_ID_LABEL } from '../../../activities/model/chat-request-labels';
import type { ChatMessage } from '../../../src/core/messages';
import type { ResearchRunInput } from '../../../src/core/run-input';
import type { ResearchRunResult } from '../../../src/core/run-result';
import { PROJECT_SEARCH_ATTRIBUTES } from '../../../src/core/search-attributes';
import {
  DEFAULT_MAX_OUTPUT_TOKENS,
  DEFAULT_MODEL_TIMEOUT_SECONDS,
  DEFAULT_TEMPERATURE,
  DEFAULT_TOP_P,
} from '../../../src/config/model-config';
import type { ModelPrices } from '../../../src/domain/model-prices';
import { resolveTemporalCli } from '../../../src/processes/temporal-cli';
import { loadConversation } from '../../../src/storage/conversation';
import type { researchAgent } from '../../../workflows/research-agent';
import { fakeChatModel, type FakeChatModel, type FakeChatReply } from '../../fakes/fake-chat-model';
import { MemoryTranscriptStore } from '../../fakes/memory-transcript-store';
import { applyStopSequences, type ScriptedReply } from '../../fakes/scripted-model-server';
import { tools as testTools } from '../../fakes/test-tools';
import { cachedWorkflowBundle } from '../../integration/support/workflow-bundle';

/**
 * One model request as a workflow-tier script sees it: the run and call it belongs to (from the
 * request's labels), the messages, tools and stop sequences in the project's own terms, and the
 * whole {@link ChatRequest}.
 */
export interface ModelRequest {
  workflowId?: string;
  /** The run's 1-based model call number; absent for compression's summaries. */
  modelCall?: number;
  /** `summary` for compression's summary requests. */
  purpose?: string;
  messages: ChatMessage[];
  tools: string[];
  stop?: string[];
  chat: ChatRequest;
}

/**
 * The answer to one model call: a reply as the scripted model server would send it, or an error
 * the model throws (e.g. the typed `ApplicationFailure` the OpenAI adapter throws for a 401).
 */
export type ModelAnswer = ScriptedReply | Error;

/** A run's replies: reply i for turn i (the last one repeated), or a function of the turn (assistant messages so far + 1). */
export type Replies = ScriptedReply[] | ((turn: number, request: ModelRequest) => ModelAnswer);

/** A batch's model behaviour: the answer to a call of the run of question `index`, rollout `rollout`. */
export type BatchBehaviour = (
  pair: { index: number; rollout: number },
  turn: number,
  request: ModelRequest,
) => ModelAnswer;

/** Options of {@link WorkflowEnvironment.start}. */
export interface WorkflowEnvironmentOptions {
  /** Attempts of a model call (REACT_AGENT_MODEL_MAX_ATTEMPTS); default 4, as the integration workers. */
  modelMaxAttempts?: number;
  /** Prices per model (REACT_AGENT_MODEL_PRICES), so calls of `scripted-model` have a cost; default none. */
  modelPrices?: ModelPrices;
}

function requestOf(chat: ChatRequest): ModelRequest {
  const modelCall = chat.labels?.[MODEL_CALL_LABEL];
  return {
    ...(chat.labels?.[WORKFLOW_ID_LABEL] ? { workflowId: chat.labels[WORKFLOW_ID_LABEL] } : {}),
    ...(modelCall ? { modelCall: Number(modelCall) } : {}),
    ...(chat.labels?.purpose ? { purpose: chat.labels.purpose } : {}),
    messages: chat.messages,
    tools: (chat.tools ?? []).map((tool) => tool.name),
    ...(chat.stop ? { stop: chat.stop } : {}),
    chat,
  };
}

/**
 * What the scripted model server would have answered, without HTTP: the stop sequences applied,
 * the usage it would report (a token per 4 characters unless the reply says). HTTP behaviour
 * (statuses, stalls, dialects) belongs to the integration tier and is refused here.
 */
async function chatReplyOf(reply: ScriptedReply, request: ModelRequest): Promise<FakeChatReply> {
  if (reply.status !== undefined || reply.stallAfterChunks !== undefined)
    throw new Error(
      'HTTP statuses and stalls are the integration tier’s (test/integration); the workflow tier has no HTTP',
    );
  if (reply.delayBeforeFirstChunkMs) await delay(reply.delayBeforeFirstChunkMs);
  const content = applyStopSequences(reply.content ?? '', request.stop);
  const reasoning = reply.reasoning ?? '';
  const promptCharacters = request.messages.reduce((total, message) => total + message.content.length, 0);
  return {
    content,
    reasoning,
    ...(reply.toolCalls ? { toolCalls: reply.toolCalls } : {}),
    ...(reply.finishReason ? { finishReason: reply.finishReason } : {}),
    usage: {
      promptTokens: reply.promptTokens ?? Math.ceil(promptCharacters / 4),
      completionTokens: reply.completionTokens ?? Math.ceil((reasoning.length + content.length) / 4),
    },
  };
}

let sequence = 0;

/**
 * The SDK's own log at ERROR: an in-process worker logs every activity failure (the `broken`
 * tool's, a cancelled `wait`) with its stack at WARN, which the tests provoke on purpose. Once
 * per process; a second install (another file in the same jest worker) keeps the first.
 */
function quietRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('ERROR') });
  } catch {
    // Installed already.
  }
}

/**
 * The workflow tier's harness: a Temporal dev server started by `TestWorkflowEnvironment.createLocal`
 * from the project's `temporal` CLI (offline: nothing is downloaded), and ONE in-process `Worker`
 * running the real workflows (the cached bundle) with the real activities (`createActivities`)
 * over a scripted {@link FakeChatModel}, the in-memory transcript store and the test tools. One
 * per test file; each run gets its replies by workflow id, as on the scripted model server.
 */
export class WorkflowEnvironment {
  private readonly scenarios = new Map<string, (turn: number, request: ModelRequest) => ModelAnswer>();
  private readonly batches = new Map<string, BatchBehaviour>();
  /** Every model request, in order. */
  readonly requests: ModelRequest[] = [];

  private constructor(
    readonly testEnvironment: TestWorkflowEnvironment,
    readonly worker: Worker,
    private readonly running: Promise<void>,
    readonly store: MemoryTranscriptStore,
    readonly model: FakeChatModel,
    readonly taskQueue: string,
    readonly directory: string,
    /** The file the test tools log their starts and stops to (test/fakes/test-tools.ts). */
    readonly toolLog: string,
  ) {}

  static async start(options: WorkflowEnvironmentOptions = {}): Promise<WorkflowEnvironment> {
    quietRuntime();
    const directory = mkdtempSync(join(tmpdir(), 'react-agent-workflow-test-'));
    const toolLog = join(directory, 'tools.log');
    // The test tools log where this variable says, read at each call (they run in this process).
    process.env.REACT_AGENT_TEST_TOOL_LOG = toolLog;
    const searchAttributes = Object.entries(PROJECT_SEARCH_ATTRIBUTES).flatMap(([name, type]) => [
      '--search-attribute',
      `${name}=${type}`,
    ]);
    const [testEnvironment, bundle] = await Promise.all([
      TestWorkflowEnvironment.createLocal({
        server: { executable: { type: 'existing-path', path: resolveTemporalCli().path }, extraArgs: searchAttributes },
      }),
      cachedWorkflowBundle(),
    ]);
    const taskQueue = `workflow-test-${process.pid}-${++sequence}`;
    const store = new MemoryTranscriptStore();
    let environment: WorkflowEnvironment | undefined;
    const model = fakeChatModel(async (chat) => {
      const request = requestOf(chat);
      environment?.requests.push(request);
      const scenario = environment?.scenarioOf(request.workflowId ?? '');
      if (!scenario) return new Error(`no scenario for workflow ${request.workflowId}`);
      const answer = scenario(chat.messages.filter((message) => message.role === 'assistant').length + 1, request);
      return answer instanceof Error ? answer : chatReplyOf(answer, request);
    });
    try {
      const worker = await Worker.create({
        connection: testEnvironment.nativeConnection,
        namespace: testEnvironment.namespace ?? 'default',
        taskQueue,
        workflowBundle: { codePath: bundle },
        activities: createActivities({
          chatModel: model,
          store,
          tools: new ToolRegistry(testTools),
          modelDefaults: {
            model: 'scripted-model',
            temperature: DEFAULT_TEMPERATURE,
            topP: DEFAULT_TOP_P,
            maxOutputTokens: DEFAULT_MAX_OUTPUT_TOKENS,
            firstTokenSeconds: 5,
            stallSeconds: 5,
          },
          modelActivity: {
            startToCloseSeconds: DEFAULT_MODEL_TIMEOUT_SECONDS,
            heartbeatSeconds: 5,
            maxAttempts: options.modelMaxAttempts ?? 4,
          },
          ...(options.modelPrices ? { modelPrices: options.modelPrices } : {}),
        }),
        shutdownGraceTime: '1 second',
      });
      environment = new WorkflowEnvironment(
        testEnvironment,
        worker,
        worker.run(),
        store,
        model,
        taskQueue,
        directory,
        toolLog,
      );
      return environment;
    } catch (error) {
      await testEnvironment.teardown();
      rmSync(directory, { recursive: true, force: true });
      throw error;
    }
  }

  /**
   * A run's script: its own, its lead's for a sub-run (`<lead id>/sub-…`: the lead's script tells
   * its sub-runs apart by `request.workflowId`), or its batch's (a batch run's id is
   * `<batch id>/q<index>-r<rollout>`; its sub-runs' are under it).
   */
  private scenarioOf(workflowId: string): ((turn: number, request: ModelRequest) => ModelAnswer) | undefined {
    const lead = workflowId.split('/sub-')[0] as string;
    const own = this.scenarios.get(workflowId) ?? this.scenarios.get(lead);
    if (own) return own;
    // A batch run's sub-runs are answered by the batch's behaviour for that run (`request.workflowId` tells them apart).
    const pair = /^(.+)\/q(\d+)-r(\d+)$/.exec(lead);
    const behaviour = pair ? this.batches.get(pair[1] as string) : undefined;
    return behaviour && pair
      ? (turn, request) => behaviour({ index: Number(pair[2]), rollout: Number(pair[3]) }, turn, request)
      : undefined;
  }

  /** Answers the model calls of the runs of batch `batchId` with `behaviour`. */
  addBatch(batchId: string, behaviour: BatchBehaviour): void {
    this.batches.set(batchId, behaviour);
  }

  get client() {
    return this.testEnvironment.client;
  }

  /** Starts a run of `researchAgent` answered by `replies`. */
  async start(
    label: string,
    replies: Replies,
    input: Partial<ResearchRunInput> = {},
  ): Promise<{ workflowId: string; handle: WorkflowHandle<typeof researchAgent> }> {
    const workflowId = `${label}-${process.pid}-${++sequence}-${Date.now().toString(36)}`;
    this.scenarios.set(
      workflowId,
      Array.isArray(replies) ? (turn) => replies[Math.min(turn, replies.length) - 1] as ScriptedReply : replies,
    );
    const question = input.question ?? `Question of ${label}?`;
    const handle = await this.client.workflow.start<typeof researchAgent>('researchAgent', {
      taskQueue: this.taskQueue,
      workflowId,
      args: [{ question, ...input }],
      staticSummary: question.slice(0, 100),
    });
    return { workflowId, handle };
  }

  /** Starts a run and waits for its result, its stored transcript and the model requests it sent. */
  async run(label: string, replies: Replies, input: Partial<ResearchRunInput> = {}) {
    const { workflowId, handle } = await this.start(label, replies, input);
    const result = (await handle.result()) as ResearchRunResult;
    return {
      workflowId,
      handle,
      result,
      messages: await this.transcript(result),
      requests: this.requestsOf(workflowId),
    };
  }

  async transcript(result: ResearchRunResult): Promise<ChatMessage[]> {
    return loadConversation(this.store, result.transcript);
  }

  /** Model requests this run sent (its summaries included), in order. */
  requestsOf(workflowId: string): ModelRequest[] {
    return this.requests.filter((request) => request.workflowId === workflowId);
  }

  async close(): Promise<void> {
    this.worker.shutdown();
    await this.running.catch(() => undefined);
    await this.testEnvironment.teardown();
    rmSync(this.directory, { recursive: true, force: true });
  }
}
