import { ConfigurationError } from './configuration-error';
import {
  checkedHttpUrl,
  readPositiveInteger,
  readPositiveNumber,
  readString,
  type Environment,
} from './environment-values';
import {
  apiVariables,
  DEFAULT_MODEL_API,
  loadModelConfig,
  NO_API_KEY,
  readModelApi,
  type ModelApi,
  type ModelConfig,
} from './model-config';

/** The LLM judge's endpoint and model (issue 12), read by {@link loadJudgeConfig}. */
export interface JudgeConfig {
  /**
   * The judge's API (`openai-chat`, `openai-responses`, `anthropic-messages`). `REACT_AGENT_JUDGE_MODEL_API`;
   * default the run model's (`REACT_AGENT_MODEL_API`). Another API than the run model's takes its
   * endpoint and key from that API's own variables (`ANTHROPIC_BASE_URL`, …) unless the judge's are set.
   */
  api: ModelApi;
  /** The API's base URL. `REACT_AGENT_JUDGE_BASE_URL`; default the run model's (`OPENAI_BASE_URL` or `ANTHROPIC_BASE_URL`, by API). */
  baseUrl: string;
  /** Key. `REACT_AGENT_JUDGE_API_KEY`; default the API's (`OPENAI_API_KEY` or `ANTHROPIC_API_KEY`), or `not-needed` with its own base URL. Never logged. */
  apiKey: string;
  /** Judge model. `REACT_AGENT_JUDGE_MODEL`; default the run model (`REACT_AGENT_MODEL`). */
  model: string;
  /** Timeout of one judge request, in seconds. `REACT_AGENT_JUDGE_TIMEOUT_SECONDS`; default 120. */
  timeoutSeconds: number;
  /** Attempts of a judge activity before the evaluation fails. `REACT_AGENT_JUDGE_MAX_ATTEMPTS`; default 5. */
  maxAttempts: number;
  /** Judge activities at once. `REACT_AGENT_JUDGE_CONCURRENCY`; default 8. */
  concurrency: number;
}

export const DEFAULT_JUDGE_TIMEOUT_SECONDS = 120;
export const DEFAULT_JUDGE_MAX_ATTEMPTS = 5;
export const DEFAULT_JUDGE_CONCURRENCY = 8;

/**
 * Reads the judge's settings; each unset one falls back to the run model's configuration.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable (a bad URL or number; no model named anywhere).
 */
export function loadJudgeConfig(environment: Environment = process.env): JudgeConfig {
  const ownBaseUrl = readString(environment, 'REACT_AGENT_JUDGE_BASE_URL');
  const ownModel = readString(environment, 'REACT_AGENT_JUDGE_MODEL');
  const ownKey = readString(environment, 'REACT_AGENT_JUDGE_API_KEY');
  const api = readModelApi(
    environment,
    'REACT_AGENT_JUDGE_MODEL_API',
    readModelApi(environment, 'REACT_AGENT_MODEL_API', DEFAULT_MODEL_API),
  );
  let runModel: ModelConfig | undefined;
  const runModelConfig = (): ModelConfig => {
    if (runModel) return runModel;
    try {
      // The run model's settings, read for the judge's API (its own endpoint variables when it differs).
      runModel = loadModelConfig({ ...environment, REACT_AGENT_MODEL_API: api });
      return runModel;
    } catch (error) {
      if (!(error instanceof ConfigurationError)) throw error;
      const variable = ownBaseUrl === undefined ? 'REACT_AGENT_JUDGE_BASE_URL' : 'REACT_AGENT_JUDGE_MODEL';
      throw new ConfigurationError(
        variable,
        `The judge has no ${variable === 'REACT_AGENT_JUDGE_MODEL' ? 'model' : 'endpoint'}: set ${variable} (it defaults to the run model's settings, which are not usable: ${error.message.split('\n')[0]})`,
      );
    }
  };
  const baseUrl =
    ownBaseUrl !== undefined ? checkedHttpUrl('REACT_AGENT_JUDGE_BASE_URL', ownBaseUrl) : runModelConfig().baseUrl;
  const model = ownModel ?? runModelConfig().model;
  const apiKey =
    ownKey ??
    (ownBaseUrl !== undefined
      ? (readString(environment, apiVariables(api).apiKey) ?? NO_API_KEY)
      : runModelConfig().apiKey);
  return {
    api,
    baseUrl,
    apiKey,
    model,
    timeoutSeconds: readPositiveNumber(environment, 'REACT_AGENT_JUDGE_TIMEOUT_SECONDS', DEFAULT_JUDGE_TIMEOUT_SECONDS),
    maxAttempts: readPositiveInteger(environment, 'REACT_AGENT_JUDGE_MAX_ATTEMPTS', DEFAULT_JUDGE_MAX_ATTEMPTS),
    concurrency: readPositiveInteger(environment, 'REACT_AGENT_JUDGE_CONCURRENCY', DEFAULT_JUDGE_CONCURRENCY),
  };
}
