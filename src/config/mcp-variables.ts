import { ConfigurationError } from './configuration-error';
import type { Environment } from './environment-values';

/** `${NAME}` in a value of an MCP server's `env` or `headers`. */
const VARIABLE = /\$\{([^}]*)\}/g;
const VARIABLE_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

/** A value with its `${VAR}`s replaced, and the values that replaced them (secrets: never printed). */
export interface ResolvedValue {
  value: string;
  secrets: string[];
}

/**
 * Replaces each `${NAME}` in `value` with the worker's environment variable NAME. `where` says
 * where the value is (`the file …: server "github", headers.Authorization`) for the message.
 * @throws ConfigurationError naming the variable when it is unset or empty, or when the name is not a variable name.
 */
export function resolveVariables(value: string, where: string, environment: Environment): ResolvedValue {
  const secrets: string[] = [];
  const resolved = value.replace(VARIABLE, (_match, name: string) => {
    if (!VARIABLE_NAME.test(name)) {
      throw new ConfigurationError(
        'REACT_AGENT_MCP_CONFIG',
        `${where} uses \${${name}}, which is not a variable name: write \${NAME} with letters, digits and '_'.`,
      );
    }
    const replacement = environment[name];
    if (replacement === undefined || replacement === '') {
      throw new ConfigurationError(
        name,
        `${where} uses \${${name}}, but ${name} is not set in the worker's environment. Set ${name} for the worker (every worker that runs this server's tools), or remove it from the file.`,
      );
    }
    secrets.push(replacement);
    return replacement;
  });
  return { value: resolved, secrets };
}
