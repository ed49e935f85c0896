import { isAbsolute, resolve } from 'node:path';
import { ConfigurationError } from './configuration-error';
import { readPositiveInteger, readString, type Environment } from './environment-values';
import { DEFAULT_DATA_DIRECTORY } from './worker-config';

/** Where the `search` tool looks: `REACT_AGENT_SEARCH_BACKEND`. */
export type SearchBackendName = 'local' | 'searxng' | 'serper';

export const SEARCH_BACKEND_NAMES: readonly SearchBackendName[] = ['local', 'searxng', 'serper'];
/** Default of `REACT_AGENT_SEARCH_BACKEND`. */
export const DEFAULT_SEARCH_BACKEND: SearchBackendName = 'local';
/** Default of `REACT_AGENT_SEARCH_RESULTS`. */
export const DEFAULT_SEARCH_RESULTS = 5;
/** File name of the knowledge base inside the data folder. */
export const KNOWLEDGE_BASE_FILE_NAME = 'knowledge-base.sqlite';
/** Folder name of the default workspace inside the data folder. */
export const WORKSPACE_FOLDER_NAME = 'workspace';

/** Settings every search backend shares. */
interface SearchConfigBase {
  /**
   * Absolute path of the local knowledge base (SQLite). `REACT_AGENT_KNOWLEDGE_BASE`; default
   * `<REACT_AGENT_DATA_DIR or <projectRoot>/.data>/knowledge-base.sqlite`. Used by the `local`
   * backend and by `react-agent kb`.
   */
  knowledgeBasePath: string;
  /** Results the `search` tool returns per query. `REACT_AGENT_SEARCH_RESULTS`; default 5. */
  resultsPerQuery: number;
}

/** Search the local knowledge base (`REACT_AGENT_SEARCH_BACKEND=local`, the default). */
export interface LocalSearchConfig extends SearchConfigBase {
  /** `REACT_AGENT_SEARCH_BACKEND`; default `local`. */
  backend: 'local';
}

/** Search through a SearXNG instance (`REACT_AGENT_SEARCH_BACKEND=searxng`). */
export interface SearxngSearchConfig extends SearchConfigBase {
  /** `REACT_AGENT_SEARCH_BACKEND=searxng`. */
  backend: 'searxng';
  /** Root address of the instance, e.g. `http://localhost:8888`. `SEARXNG_URL`; required, no default. */
  searxngUrl: string;
}

/** Search Google through Serper (`REACT_AGENT_SEARCH_BACKEND=serper`). */
export interface SerperSearchConfig extends SearchConfigBase {
  /** `REACT_AGENT_SEARCH_BACKEND=serper`. */
  backend: 'serper';
  /** The Serper API key. `SERPER_API_KEY`; required, no default; never printed. */
  serperApiKey: string;
}

/** Settings of the `search` tool, read by {@link loadSearchConfig}. */
export type SearchConfig = LocalSearchConfig | SearxngSearchConfig | SerperSearchConfig;

/** Settings of the `parse_file` tool, read by {@link loadParseFileConfig}. */
export interface ParseFileConfig {
  /**
   * Absolute folders `parse_file` may read; relative paths in a call are read from the first.
   * `REACT_AGENT_WORKSPACE_DIRS` (comma-separated, relative entries resolved against the current
   * directory); default `<REACT_AGENT_DATA_DIR or <projectRoot>/.data>/workspace`.
   */
  workspaceDirectories: string[];
}

/** The data folder: `REACT_AGENT_DATA_DIR`, default `<projectRoot>/.data` (as in loadWorkerConfig). */
function dataDirectory(environment: Environment): string {
  return resolve(readString(environment, 'REACT_AGENT_DATA_DIR') ?? DEFAULT_DATA_DIRECTORY);
}

/**
 * The knowledge base file: `REACT_AGENT_KNOWLEDGE_BASE`, default
 * `<REACT_AGENT_DATA_DIR or <projectRoot>/.data>/knowledge-base.sqlite`. Needs no other search
 * setting, so `react-agent kb` works whichever backend the tool uses.
 */
export function loadKnowledgeBasePath(environment: Environment = process.env): string {
  const configured = readString(environment, 'REACT_AGENT_KNOWLEDGE_BASE');
  return configured ? resolve(configured) : resolve(dataDirectory(environment), KNOWLEDGE_BASE_FILE_NAME);
}

function readSearchBackend(environment: Environment): SearchBackendName {
  const raw = readString(environment, 'REACT_AGENT_SEARCH_BACKEND');
  if (raw === undefined) return DEFAULT_SEARCH_BACKEND;
  const name = raw.toLowerCase();
  if (!(SEARCH_BACKEND_NAMES as readonly string[]).includes(name)) {
    throw new ConfigurationError(
      'REACT_AGENT_SEARCH_BACKEND',
      `REACT_AGENT_SEARCH_BACKEND must be one of ${SEARCH_BACKEND_NAMES.join(', ')}, got ${JSON.stringify(raw)}. ` +
        'Use local for the knowledge base (react-agent kb add), searxng with SEARXNG_URL, or serper with SERPER_API_KEY.',
    );
  }
  return name as SearchBackendName;
}

function readSearxngUrl(environment: Environment): string {
  const raw = readString(environment, 'SEARXNG_URL');
  if (raw === undefined) {
    throw new ConfigurationError(
      'SEARXNG_URL',
      'REACT_AGENT_SEARCH_BACKEND=searxng needs SEARXNG_URL, the address of a SearXNG instance with the JSON format enabled, e.g. SEARXNG_URL=http://localhost:8888.',
    );
  }
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(
      'SEARXNG_URL',
      `SEARXNG_URL must be an http(s) address like http://localhost:8888, got ${JSON.stringify(raw)}.`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigurationError(
      'SEARXNG_URL',
      `SEARXNG_URL must be an http(s) address like http://localhost:8888, got ${JSON.stringify(raw)}.`,
    );
  }
  return raw.replace(/\/+$/, '');
}

/**
 * Reads the `search` tool's settings.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable: an unknown `REACT_AGENT_SEARCH_BACKEND`, a
 *   missing or malformed `SEARXNG_URL` for searxng, a missing `SERPER_API_KEY` for serper, a
 *   `REACT_AGENT_SEARCH_RESULTS` that is not a positive integer up to 50.
 */
export function loadSearchConfig(environment: Environment = process.env): SearchConfig {
  const backend = readSearchBackend(environment);
  const resultsPerQuery = readPositiveInteger(environment, 'REACT_AGENT_SEARCH_RESULTS', DEFAULT_SEARCH_RESULTS);
  if (resultsPerQuery > 50) {
    throw new ConfigurationError(
      'REACT_AGENT_SEARCH_RESULTS',
      `REACT_AGENT_SEARCH_RESULTS must be at most 50, got ${resultsPerQuery}.`,
    );
  }
  const base = { knowledgeBasePath: loadKnowledgeBasePath(environment), resultsPerQuery };
  switch (backend) {
    case 'local':
      return { backend, ...base };
    case 'searxng':
      return { backend, ...base, searxngUrl: readSearxngUrl(environment) };
    case 'serper': {
      const serperApiKey = readString(environment, 'SERPER_API_KEY');
      if (serperApiKey === undefined) {
        throw new ConfigurationError(
          'SERPER_API_KEY',
          'REACT_AGENT_SEARCH_BACKEND=serper needs SERPER_API_KEY, your key from https://serper.dev.',
        );
      }
      return { backend, ...base, serperApiKey };
    }
  }
}

/**
 * Reads the `parse_file` tool's settings.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError when `REACT_AGENT_WORKSPACE_DIRS` is set but names no folder.
 */
export function loadParseFileConfig(environment: Environment = process.env): ParseFileConfig {
  const raw = readString(environment, 'REACT_AGENT_WORKSPACE_DIRS');
  if (raw === undefined) return { workspaceDirectories: [resolve(dataDirectory(environment), WORKSPACE_FOLDER_NAME)] };
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) {
    throw new ConfigurationError(
      'REACT_AGENT_WORKSPACE_DIRS',
      `REACT_AGENT_WORKSPACE_DIRS must list one or more folders separated by commas, got ${JSON.stringify(raw)}.`,
    );
  }
  const folders = entries.map((entry) => (isAbsolute(entry) ? resolve(entry) : resolve(process.cwd(), entry)));
  return { workspaceDirectories: [...new Set(folders)] };
}
