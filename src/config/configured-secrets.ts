import { SecretRedactor, urlCredentials } from '../domain/secret-redaction';
import type { Environment } from './environment-values';

/** Variables that hold a secret whatever their name says: the keys the worker and the CLI read. */
export const SECRET_VARIABLES = [
  'OPENAI_API_KEY',
  'REACT_AGENT_JUDGE_API_KEY',
  'SERPER_API_KEY',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
] as const;

/** A variable whose name ends like this holds a secret too (a tool module's `GITHUB_TOKEN`, an MCP server's `FOO_API_KEY`). */
const SECRET_NAME = /(?:^|_)(?:API_?KEY|TOKEN|SECRET|SECRET_KEY|SECRET_ACCESS_KEY|PASSWORD|PASSWD|CREDENTIALS?)$/i;

/**
 * The secrets of this environment, to be redacted from everything the worker or the CLI writes
 * or records: the values of {@link SECRET_VARIABLES} and of every variable named like a secret
 * (`…_API_KEY`, `…_TOKEN`, `…_SECRET`, `…_PASSWORD`), and the user name and password of every
 * variable that is a URL with credentials (`OPENAI_BASE_URL=http://user:secret@host/v1`). The MCP
 * servers' `${VAR}` values are added by the MCP tool source, which reads them.
 */
export function configuredSecrets(environment: Environment = process.env): string[] {
  const secrets = new Set<string>();
  for (const [name, value] of Object.entries(environment)) {
    if (value === undefined || value.trim() === '') continue;
    if ((SECRET_VARIABLES as readonly string[]).includes(name) || SECRET_NAME.test(name)) secrets.add(value.trim());
    for (const credential of urlCredentials(value)) secrets.add(credential);
  }
  return [...secrets];
}

/** A redactor of this environment's {@link configuredSecrets}. */
export function configuredSecretRedactor(environment: Environment = process.env): SecretRedactor {
  return new SecretRedactor(configuredSecrets(environment));
}
