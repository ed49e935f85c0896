/** Secrets shorter than this are not searched for (they would blank out ordinary words). */
const SHORTEST_SECRET = 4;

/**
 * Replaces every occurrence of a secret (a value a `${VAR}` of the MCP configuration resolved to)
 * with `[redacted]`, so a server that echoes its environment or headers cannot put them into an
 * observation, a failure message, the run's history or a log.
 */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  let result = text;
  for (const secret of [...secrets].sort((a, b) => b.length - a.length)) {
    if (secret.length < SHORTEST_SECRET) continue;
    result = result.split(secret).join('[redacted]');
  }
  return result;
}
