import { statSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseAllowedHost } from '../domain/allowed-host';
import { ConfigurationError } from './configuration-error';
import {
  type Environment,
  readBoolean,
  readPositiveInteger,
  readPositiveNumber,
  readString,
} from './environment-values';

/** Settings of the `visit` tool, read by {@link loadVisitConfig}. */
export interface VisitConfig {
  /** Most bytes read of one page or file. `REACT_AGENT_VISIT_MAX_BYTES`; default 5,242,880 (5 MB). */
  maxBytes: number;
  /** Longest one page may take to fetch, in seconds. `REACT_AGENT_VISIT_TIMEOUT_SECONDS`; default 30. */
  timeoutSeconds: number;
  /**
   * Allow loopback, private, link-local (incl. cloud metadata) and CGNAT addresses.
   * `REACT_AGENT_VISIT_ALLOW_PRIVATE` (`true`/`false`); default false.
   */
  allowPrivateNetworks: boolean;
  /**
   * Hosts that bypass the SSRF guard, e.g. a company intranet (`wiki.corp`, `.corp.example`
   * for every subdomain). A bare host allows ports 80 and 443 only; `wiki.corp:8080` names a
   * port, `wiki.corp:*` allows every port. `REACT_AGENT_VISIT_ALLOWED_HOSTS`, comma-separated;
   * default none.
   */
  allowedHosts: string[];
  /**
   * Absolute directories whose files `visit` may read (file:// URLs or paths).
   * `REACT_AGENT_VISIT_FILE_DIRS`, comma-separated, relative to the current directory; each
   * must exist. Default none (local files refused).
   */
  localFileDirectories: string[];
  /**
   * Answer `visit` calls that have a goal with the evidence and summary a model extracts
   * (extra model calls) instead of the whole page. `REACT_AGENT_VISIT_SUMMARIZE`
   * (`true`/`false`); default false.
   */
  summarize: boolean;
}

/** Default of {@link VisitConfig.maxBytes}. */
export const DEFAULT_VISIT_MAX_BYTES_SETTING = 5 * 1024 * 1024;
/** Default of {@link VisitConfig.timeoutSeconds}. */
export const DEFAULT_VISIT_TIMEOUT_SECONDS = 30;

function readList(environment: Environment, name: string): string[] {
  return (readString(environment, name) ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
}

function readAllowedHosts(environment: Environment): string[] {
  const name = 'REACT_AGENT_VISIT_ALLOWED_HOSTS';
  return readList(environment, name).map((entry) => {
    const problem = parseAllowedHost(entry);
    if (typeof problem === 'string') {
      throw new ConfigurationError(
        name,
        `${name} must be a comma-separated list of host names, each with an optional port (wiki.corp.example for ports 80 and 443, wiki.corp.example:8080, ` +
          `wiki.corp.example:* for every port, .corp.example for every subdomain, [fd00::7]:8080), got ${JSON.stringify(entry)}: ${problem}`,
      );
    }
    return entry.toLowerCase();
  });
}

function readDirectories(environment: Environment): string[] {
  const name = 'REACT_AGENT_VISIT_FILE_DIRS';
  return readList(environment, name).map((entry) => {
    const directory = isAbsolute(entry) ? entry : resolve(process.cwd(), entry);
    let isDirectory: boolean;
    try {
      isDirectory = statSync(directory).isDirectory();
    } catch {
      isDirectory = false;
    }
    if (!isDirectory) {
      throw new ConfigurationError(
        name,
        `${name} lists ${JSON.stringify(entry)}, which is not an existing directory (${directory}); list directories the visit tool may read, separated by commas`,
      );
    }
    return directory;
  });
}

/**
 * Reads the visit tool's settings from the environment and validates them.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable at fault.
 */
export function loadVisitConfig(environment: Environment = process.env): VisitConfig {
  return {
    maxBytes: readPositiveInteger(environment, 'REACT_AGENT_VISIT_MAX_BYTES', DEFAULT_VISIT_MAX_BYTES_SETTING),
    timeoutSeconds: readPositiveNumber(environment, 'REACT_AGENT_VISIT_TIMEOUT_SECONDS', DEFAULT_VISIT_TIMEOUT_SECONDS),
    allowPrivateNetworks: readBoolean(environment, 'REACT_AGENT_VISIT_ALLOW_PRIVATE', false),
    allowedHosts: readAllowedHosts(environment),
    localFileDirectories: readDirectories(environment),
    summarize: readBoolean(environment, 'REACT_AGENT_VISIT_SUMMARIZE', false),
  };
}
