import type { ModelConfig } from '../config';
import { maskUrlCredentials } from '../domain/secret-redaction';

/**
 * Checks that the model endpoint answers before a run is started, so `react-agent run` fails
 * in seconds with a few clear lines instead of a run that retries for minutes.
 * Returns undefined when the endpoint looks usable, else the message to print.
 */
export async function checkModelEndpoint(config: ModelConfig, timeoutMs = 5_000): Promise<string | undefined> {
  const anthropic = config.api === 'anthropic-messages';
  // Anthropic's base URL has no /v1; its key goes in x-api-key.
  const url = `${config.baseUrl.replace(/\/$/, '')}${anthropic ? '/v1' : ''}/models`;
  const baseVariable = anthropic ? 'ANTHROPIC_BASE_URL' : 'OPENAI_BASE_URL';
  const keyVariable = anthropic ? 'ANTHROPIC_API_KEY' : 'OPENAI_API_KEY';
  // The URL as printed: its user information (http://user:secret@host) masked.
  const shown = maskUrlCredentials(config.baseUrl);
  let response: Response;
  try {
    response = await fetch(url, {
      headers: anthropic
        ? { 'x-api-key': config.apiKey, 'anthropic-version': '2023-06-01' }
        : { authorization: `Bearer ${config.apiKey}` },
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    const reason =
      (error as Error).name === 'TimeoutError'
        ? `no answer within ${timeoutMs / 1000} s`
        : ((error as { cause?: Error }).cause?.message ?? (error as Error).message);
    return [
      `The model endpoint ${shown} cannot be reached (${maskUrlCredentials(reason)}).`,
      `Start your model server (vLLM, Ollama, llama-server) or fix ${baseVariable};`,
      `for ${anthropic ? 'Anthropic' : 'OpenAI'} leave ${baseVariable} unset and set ${keyVariable}. Then run the command again.`,
    ].join('\n');
  }
  await response.body?.cancel();
  if (response.status === 401 || response.status === 403) {
    return `The model endpoint ${shown} refused the API key (${response.status}). Set ${keyVariable} to a valid key for this server.`;
  }
  return undefined;
}
