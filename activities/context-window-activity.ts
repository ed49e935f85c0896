import type { LearnContextWindowInput, LearnContextWindowOutput } from '../src/core/activity-contracts';
import { promptBudgetOf } from '../src/core/context-window';
import type { ChatModel } from './model/chat-model';
import type { ModelDefaults } from './model-activity';

/**
 * Learns the model server's context window, once per run at its start (issue 16), from the chat
 * model (`ChatModel.contextWindow`): with the reply's token limit it gives the prompt budget. A
 * server that does not say leaves the window unknown, and the run keeps its `maxContextTokens`
 * alone. Never fails for what a server answers.
 */

export interface ContextWindowDependencies {
  chatModel: Pick<ChatModel, 'contextWindow'>;
  modelDefaults: Pick<ModelDefaults, 'maxOutputTokens'>;
}

export function createLearnContextWindow(dependencies: ContextWindowDependencies) {
  const { chatModel, modelDefaults } = dependencies;
  return async function learnContextWindow(input: LearnContextWindowInput): Promise<LearnContextWindowOutput> {
    const maxOutputTokens = input.maxOutputTokens ?? modelDefaults.maxOutputTokens;
    const window = await chatModel.contextWindow(input.model);
    if (!window) return { maxOutputTokens };
    return {
      contextWindow: window.tokens,
      source: window.source,
      maxOutputTokens,
      promptBudget: promptBudgetOf(window.tokens, maxOutputTokens),
    };
  };
}
