import { ApplicationFailure } from '@temporalio/common';
import type {
  FinishTranscriptInput,
  FinishTranscriptOutput,
  LearnContextWindowInput,
  LearnContextWindowOutput,
  ModelActivitySettings,
  StartConversationInput,
  StartConversationOutput,
} from '../src/core/activity-contracts';
import { FailureTypes } from '../src/core/failure-types';
import { protocolByName } from '../src/core/protocols';
import { delegateToolSpec } from '../src/core/sub-runs/delegate-tool';
import { DELEGATE_TOOL } from '../src/core/sub-runs/sub-run-options';
import { toolScheduleOf, type ToolSpec } from '../src/core/tool-spec';
import {
  appendToConversation,
  composeMessage,
  loadMessageReferences,
  putConversation,
  putMessage,
  putToolSpecs,
} from '../src/storage/conversation';
import type { TokenCounter } from './token-counter';
import type { ToolRegistry } from './tools/tool-registry';
import type { TranscriptStore } from '../src/storage/transcript-store';

export interface ConversationActivityDependencies {
  store: TranscriptStore;
  tools: ToolRegistry;
  tokenCounter: TokenCounter;
  modelActivity: ModelActivitySettings;
  defaultModel: string;
  /** Queue of the tool fleet, stamped on each tool's spec unless the tool names its own; default the run's own. */
  toolTaskQueue?: string;
  /**
   * The `learnContextWindow` activity's work (activities/context-window-activity.ts, over the
   * worker's cache of what the model server said), done by `startConversation` when the run asks
   * (`contextWindow`, issue 34). Default: none (such a run's window stays unknown).
   */
  learnContextWindow?: (input: LearnContextWindowInput) => Promise<LearnContextWindowOutput>;
}

/** The run's tools with `delegate` (issue 30); a worker tool of that name cannot be offered beside it. */
function withDelegateTool(specs: ToolSpec[], maxParallel: number): ToolSpec[] {
  if (specs.some((spec) => spec.name === DELEGATE_TOOL))
    throw new Error(
      `The tool name "${DELEGATE_TOOL}" is the sub-runs' own: a run with sub-runs cannot also be given the worker's tool of that name.`,
    );
  return [...specs, delegateToolSpec(maxParallel)];
}

/** Activities that open and close a run's transcript. */
export function createConversationActivities(dependencies: ConversationActivityDependencies) {
  const { store, tools, tokenCounter } = dependencies;

  /** The context window when the run asks for it, learned beside the stores; undefined when not asked or when asking failed. */
  function learnedWindow(input: StartConversationInput): Promise<LearnContextWindowOutput | undefined> {
    const asked = input.contextWindow;
    if (!asked || !dependencies.learnContextWindow) return Promise.resolve(undefined);
    const { maxOutputTokens } = asked;
    return dependencies
      .learnContextWindow({
        model: asked.model ?? dependencies.defaultModel,
        ...(maxOutputTokens !== undefined ? { maxOutputTokens } : {}),
      })
      .catch(() => undefined);
  }

  return {
    /**
     * Writes the system prompt (tools, today's date) and the question; returns what the workflow
     * needs to schedule the run. With `storeToolSpecs` the tool specs are stored too, and only their
     * reference and each tool's scheduling go back into history. With `contextWindow` the model
     * server's context window is learned meanwhile (a failure to learn it leaves it out).
     */
    async startConversation(input: StartConversationInput): Promise<StartConversationOutput> {
      let specs;
      try {
        specs = tools.specs(input.tools);
        if (input.delegate) specs = withDelegateTool(specs, input.delegate.maxParallel);
        const toolTaskQueue = dependencies.toolTaskQueue;
        if (toolTaskQueue)
          specs = specs.map((spec) =>
            spec.activity.taskQueue ? spec : { ...spec, activity: { ...spec.activity, taskQueue: toolTaskQueue } },
          );
      } catch (error) {
        throw ApplicationFailure.create({
          type: FailureTypes.invalidRunInput,
          message: (error as Error).message,
          nonRetryable: true,
        });
      }
      const system =
        protocolByName(input.protocol).renderSystemPrompt(specs, input.today) +
        (input.answerSchema
          ? `\n\nYour final answer must be a JSON object matching this JSON schema: ${JSON.stringify(input.answerSchema)}`
          : '');
      const learning = learnedWindow(input);
      const references = [
        await putMessage(store, { role: 'system', content: system }),
        await putMessage(store, { role: 'user', content: input.question }),
      ];
      const contextWindow = await learning;
      return {
        conversation: await putConversation(store, references),
        ...(input.storeToolSpecs
          ? { tools: specs.map(toolScheduleOf), toolSpecs: await putToolSpecs(store, specs) }
          : { tools: specs }),
        modelActivity: dependencies.modelActivity,
        model: dependencies.defaultModel,
        contextTokens: tokenCounter.count(system) + tokenCounter.count(input.question),
        ...(contextWindow ? { contextWindow } : {}),
      };
    },

    /** Appends the last messages (observations, synthesized responses for open calls) and returns the final transcript. */
    async finishTranscript(input: FinishTranscriptInput): Promise<FinishTranscriptOutput> {
      const composed = await Promise.all(input.append.map((pending) => composeMessage(store, pending)));
      const conversation = composed.length
        ? (await appendToConversation(store, input.conversation, composed)).conversation
        : input.conversation;
      return { conversation, messages: (await loadMessageReferences(store, conversation)).length };
    },
  };
}
