import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';
import { apiVariables, DEFAULT_MODEL_API, loadModelConfig, readModelApi, type ModelApi } from './model-config';

/**
 * What writes the summaries (issue 31): compression's incremental summary
 * (activities/summary-writer.ts) and the visit tool's goal-directed page summaries
 * (activities/tools/visit/page-summarizer.ts). Read by {@link loadSummaryModelConfig}.
 */
export interface SummaryModelConfig {
  /**
   * The summaries' API (`openai-chat`, `openai-responses`, `anthropic-messages`).
   * `REACT_AGENT_SUMMARY_MODEL_API`; default the run model's (`REACT_AGENT_MODEL_API`). Another
   * API than the run model's takes its endpoint and key from that API's own variables
   * (`OPENAI_BASE_URL`/`OPENAI_API_KEY` or `ANTHROPIC_BASE_URL`/`ANTHROPIC_API_KEY`).
   */
  api: ModelApi;
  /** Whether `api` is the run model's: then the summaries go through the run model's client, else through their own. */
  sameApiAsRunModel: boolean;
  /** That API's base URL (the run model's when the API is the same). */
  baseUrl: string;
  /** That API's key, or `not-needed`. Never logged. */
  apiKey: string;
  /**
   * The model that summarises. `REACT_AGENT_SUMMARY_MODEL`; default none: compression uses each
   * run's own model, the visit tool the worker's (`REACT_AGENT_MODEL`). Required when the
   * API's endpoint is another provider's than the run model's (an OpenAI API beside Anthropic's).
   */
  model?: string;
}

/**
 * Reads the summaries' API and model; unset, both are the run model's, as before issue 31.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable: an unknown API, an API whose endpoint is not
 *   configured, or another provider's API without `REACT_AGENT_SUMMARY_MODEL`.
 */
export function loadSummaryModelConfig(environment: Environment = process.env): SummaryModelConfig {
  const runApi = readModelApi(environment, 'REACT_AGENT_MODEL_API', DEFAULT_MODEL_API);
  const api = readModelApi(environment, 'REACT_AGENT_SUMMARY_MODEL_API', runApi);
  const model = readString(environment, 'REACT_AGENT_SUMMARY_MODEL');
  const otherProvider = apiVariables(api).baseUrl !== apiVariables(runApi).baseUrl;
  if (otherProvider && model === undefined)
    throw new ConfigurationError(
      'REACT_AGENT_SUMMARY_MODEL',
      `REACT_AGENT_SUMMARY_MODEL_API=${api} is another provider's API than the run model's (${runApi}): set REACT_AGENT_SUMMARY_MODEL to the model that summarises there (the run model's name would not be one).`,
    );
  let endpoint: { baseUrl: string; apiKey: string };
  try {
    // The run model's settings, read for the summaries' API (its own endpoint variables when it differs).
    const config = loadModelConfig({
      ...environment,
      REACT_AGENT_MODEL_API: api,
      ...(model !== undefined ? { REACT_AGENT_MODEL: model } : {}),
    });
    endpoint = { baseUrl: config.baseUrl, apiKey: config.apiKey };
  } catch (error) {
    if (!(error instanceof ConfigurationError) || api === runApi) throw error;
    throw new ConfigurationError(
      error.variable,
      `REACT_AGENT_SUMMARY_MODEL_API=${api} has no endpoint: ${error.message.split('\n')[0]}`,
    );
  }
  return { api, sameApiAsRunModel: api === runApi, ...endpoint, ...(model !== undefined ? { model } : {}) };
}
