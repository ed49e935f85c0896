import type { ChatModel } from './chat-model';
import { createChatModel, type ChatModelApi, type ChatModelEndpoint } from './chat-model-factory';

/** The summaries' settings as the worker read them (src/config/summary-model-config.ts `SummaryModelConfig`). */
export interface SummaryModelSettings {
  api: ChatModelApi;
  /** Whether `api` is the run model's: then the run model's client serves the summaries. */
  sameApiAsRunModel: boolean;
  baseUrl: string;
  apiKey: string;
  /** `REACT_AGENT_SUMMARY_MODEL`; absent when unset. */
  model?: string;
}

/** What writes the summaries: the client, the model compression asks for (absent: each run's), the model visit asks for. */
export interface SummaryModel {
  chatModel: ChatModel;
  /** Compression's: `REACT_AGENT_SUMMARY_MODEL`, absent when unset (each run's own model). */
  model?: string;
  /** The visit tool's page summaries: `REACT_AGENT_SUMMARY_MODEL`, else the worker's `REACT_AGENT_MODEL`. */
  visitModel: string;
}

/**
 * The summaries' client and model (`REACT_AGENT_SUMMARY_MODEL_API`, `REACT_AGENT_SUMMARY_MODEL`):
 * the run model's client when the API is the run model's, else one of their own on that API's
 * endpoint (typed as the run model's failures, so compression tells a refused, too-long request
 * from the rest).
 *
 * @param runChatModel The run model's client.
 * @param runModel The worker's model (`REACT_AGENT_MODEL`).
 * @param settings The run model's request timeout and reply limits, which the summaries' own client shares.
 * @param create How a client is made; default activities/model/chat-model-factory.ts.
 */
export function summaryModelOf(
  config: SummaryModelSettings,
  runChatModel: ChatModel,
  runModel: string,
  settings: Pick<ChatModelEndpoint, 'timeoutSeconds' | 'replyLimits'> = {},
  create: (endpoint: ChatModelEndpoint) => ChatModel = (endpoint) => createChatModel(endpoint, 'model'),
): SummaryModel {
  const chatModel = config.sameApiAsRunModel
    ? runChatModel
    : create({ api: config.api, baseUrl: config.baseUrl, apiKey: config.apiKey, ...settings });
  return {
    chatModel,
    ...(config.model !== undefined ? { model: config.model } : {}),
    visitModel: config.model ?? runModel,
  };
}
