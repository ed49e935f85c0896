/** Sampling settings for the model. Anything left out comes from the worker's configuration. */
export interface ModelOptions {
  /** Model name; default the worker's REACT_AGENT_MODEL. */
  model?: string;
  /**
   * Sampling temperature.
   * @minimum 0
   * @maximum 2
   */
  temperature?: number;
  /**
   * Nucleus sampling.
   * @minimum 0
   * @maximum 1
   */
  topP?: number;
  /**
   * @minimum -2
   * @maximum 2
   */
  presencePenalty?: number;
  /**
   * Most tokens one reply may have.
   * @asType integer
   * @minimum 1
   */
  maxOutputTokens?: number;
  /**
   * The share of each of the model's shared limits (`REACT_AGENT_MODEL_LIMITS`, issue 33) this
   * run's calls may use at most, so a batch leaves the rest to interactive runs
   * (`react-agent batch --model-share`). Default: the whole limit. No effect on a model without limits.
   * @minimum 0.01
   * @maximum 1
   */
  modelShare?: number;
}
