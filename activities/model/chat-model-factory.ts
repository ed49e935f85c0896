import { classifyAnthropicError, classifyAnthropicJudgeError } from './anthropic-errors';
import { createAnthropicMessagesModel } from './anthropic-messages-model';
import type { ChatModel } from './chat-model';
import { createOpenAIChatModel, type ReplyLimits } from './openai-chat-model';
import { classifyJudgeError, classifyModelError } from './openai-errors';
import { createOpenAIResponsesModel } from './openai-responses-model';

/** The model APIs there is a {@link ChatModel} for (REACT_AGENT_MODEL_API, read by src/config/model-config.ts). */
export type ChatModelApi = 'openai-chat' | 'openai-responses' | 'anthropic-messages';

/** What the worker knows of a model endpoint, whichever its API. */
export interface ChatModelEndpoint {
  /** Default `openai-chat`. */
  api?: ChatModelApi;
  /** The API's base URL (OPENAI_BASE_URL, ending in `/v1`; ANTHROPIC_BASE_URL, without it). */
  baseUrl: string;
  apiKey: string;
  /** Longest a request may take, in seconds; default the client's (600). */
  timeoutSeconds?: number;
  /** How much of a reply the worker takes; default 1 MiB of text, 4 MiB a line. */
  replyLimits?: Partial<ReplyLimits>;
  /** `anthropic-messages`: extended thinking's budget in tokens; default none. */
  thinkingBudgetTokens?: number;
  /** `openai-responses`: the reasoning effort; default the model's. */
  reasoningEffort?: string;
}

/**
 * The {@link ChatModel} of an endpoint's API, each on its official SDK (issue 31), its failures
 * typed for the run model (`ReactAgent.Model.*`) or, with `role: 'judge'`, for the judge
 * (`ReactAgent.Judge.*`).
 */
export function createChatModel(endpoint: ChatModelEndpoint, role: 'model' | 'judge' = 'model'): ChatModel {
  const common = {
    baseUrl: endpoint.baseUrl,
    apiKey: endpoint.apiKey,
    ...(endpoint.timeoutSeconds !== undefined ? { timeoutSeconds: endpoint.timeoutSeconds } : {}),
    ...(endpoint.replyLimits ? { replyLimits: endpoint.replyLimits } : {}),
  };
  const judge = role === 'judge';
  switch (endpoint.api ?? 'openai-chat') {
    case 'anthropic-messages':
      return createAnthropicMessagesModel(
        {
          ...common,
          ...(endpoint.thinkingBudgetTokens !== undefined && !judge
            ? { thinkingBudgetTokens: endpoint.thinkingBudgetTokens }
            : {}),
        },
        judge ? classifyAnthropicJudgeError : classifyAnthropicError,
      );
    case 'openai-responses':
      return createOpenAIResponsesModel(
        {
          ...common,
          ...(endpoint.reasoningEffort !== undefined && !judge ? { reasoningEffort: endpoint.reasoningEffort } : {}),
        },
        judge ? classifyJudgeError : classifyModelError,
      );
    default:
      return createOpenAIChatModel(common, judge ? classifyJudgeError : classifyModelError);
  }
}
