/** Sampling settings for the model. Anything left out comes from the worker's configuration. */
export interface ModelOptions {
  /** Model name; default the worker's REACT_AGENT_MODEL. */
  model?: string;
  temperature?: number;
  topP?: number;
  presencePenalty?: number;
  /** Most tokens one reply may have. */
  maxOutputTokens?: number;
}
