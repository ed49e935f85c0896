/**
 * A configuration value (usually an environment variable) is missing or malformed.
 * The message says which variable, what is wrong and how to fix it; it never contains a secret.
 */
export class ConfigurationError extends Error {
  override readonly name = 'ConfigurationError';

  /**
   * @param variable The environment variable at fault, e.g. `REACT_AGENT_MODEL`.
   * @param message  A complete, human-readable explanation including how to fix it.
   */
  constructor(
    readonly variable: string,
    message: string,
  ) {
    super(message);
  }
}
