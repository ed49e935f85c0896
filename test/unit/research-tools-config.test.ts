import assert from 'node:assert/strict';
import { join, resolve } from 'node:path';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadKnowledgeBasePath, loadParseFileConfig, loadSearchConfig } from '../../src/config/research-tools-config';
import { DEFAULT_DATA_DIRECTORY } from '../../src/config/worker-config';

const SECRET = 'serper-SECRET-key-1234567890';

function assertConfigurationError(fn: () => unknown, variable: string, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ConfigurationError, `expected a ConfigurationError, got ${String(error)}`);
    assert.equal(error.variable, variable);
    assert.match(error.message, pattern);
    assert.ok(!error.message.includes(SECRET));
    return true;
  });
}

describe('loadSearchConfig', () => {
  test('defaults: local backend, knowledge base in the data folder, 5 results', () => {
    assert.deepEqual(loadSearchConfig({}), {
      backend: 'local',
      knowledgeBasePath: join(DEFAULT_DATA_DIRECTORY, 'knowledge-base.sqlite'),
      resultsPerQuery: 5,
    });
    assert.equal(
      loadSearchConfig({ REACT_AGENT_DATA_DIR: '/srv/agent' }).knowledgeBasePath,
      '/srv/agent/knowledge-base.sqlite',
    );
    assert.equal(
      loadSearchConfig({ REACT_AGENT_DATA_DIR: '/srv/agent', REACT_AGENT_KNOWLEDGE_BASE: 'kb/main.sqlite' })
        .knowledgeBasePath,
      resolve('kb/main.sqlite'),
    );
    assert.equal(
      loadKnowledgeBasePath({ REACT_AGENT_KNOWLEDGE_BASE: '/x/kb.sqlite', REACT_AGENT_SEARCH_BACKEND: 'bogus' }),
      '/x/kb.sqlite',
    );
  });

  test('searxng needs a valid SEARXNG_URL; serper needs SERPER_API_KEY', () => {
    assert.deepEqual(
      loadSearchConfig({
        REACT_AGENT_SEARCH_BACKEND: 'SearXNG',
        SEARXNG_URL: 'http://localhost:8888/',
        REACT_AGENT_SEARCH_RESULTS: '8',
        REACT_AGENT_DATA_DIR: '/d',
      }),
      {
        backend: 'searxng',
        searxngUrl: 'http://localhost:8888',
        knowledgeBasePath: '/d/knowledge-base.sqlite',
        resultsPerQuery: 8,
      },
    );
    const serper = loadSearchConfig({ REACT_AGENT_SEARCH_BACKEND: 'serper', SERPER_API_KEY: SECRET });
    assert.equal(serper.backend === 'serper' && serper.serperApiKey, SECRET);
    assertConfigurationError(
      () => loadSearchConfig({ REACT_AGENT_SEARCH_BACKEND: 'searxng' }),
      'SEARXNG_URL',
      /needs SEARXNG_URL.*http:\/\/localhost:8888/,
    );
    assertConfigurationError(
      () => loadSearchConfig({ REACT_AGENT_SEARCH_BACKEND: 'searxng', SEARXNG_URL: 'localhost:8888' }),
      'SEARXNG_URL',
      /must be an http\(s\) address/,
    );
    assertConfigurationError(
      () => loadSearchConfig({ REACT_AGENT_SEARCH_BACKEND: 'searxng', SEARXNG_URL: 'not a url' }),
      'SEARXNG_URL',
      /must be an http\(s\) address/,
    );
    assertConfigurationError(
      () => loadSearchConfig({ REACT_AGENT_SEARCH_BACKEND: 'serper', SERPER_API_KEY: ' ' }),
      'SERPER_API_KEY',
      /needs SERPER_API_KEY.*serper\.dev/,
    );
  });

  test('bad values name their variable', () => {
    assertConfigurationError(
      () => loadSearchConfig({ REACT_AGENT_SEARCH_BACKEND: 'google', SERPER_API_KEY: SECRET }),
      'REACT_AGENT_SEARCH_BACKEND',
      /one of local, searxng, serper, got "google"/,
    );
    assertConfigurationError(
      () => loadSearchConfig({ REACT_AGENT_SEARCH_RESULTS: 'five' }),
      'REACT_AGENT_SEARCH_RESULTS',
      /positive integer/,
    );
    assertConfigurationError(
      () => loadSearchConfig({ REACT_AGENT_SEARCH_RESULTS: '500' }),
      'REACT_AGENT_SEARCH_RESULTS',
      /at most 50/,
    );
  });
});

describe('loadParseFileConfig', () => {
  test('default workspace in the data folder; a comma-separated list otherwise', () => {
    assert.deepEqual(loadParseFileConfig({}), { workspaceDirectories: [join(DEFAULT_DATA_DIRECTORY, 'workspace')] });
    assert.deepEqual(loadParseFileConfig({ REACT_AGENT_DATA_DIR: '/srv/agent' }), {
      workspaceDirectories: ['/srv/agent/workspace'],
    });
    assert.deepEqual(loadParseFileConfig({ REACT_AGENT_WORKSPACE_DIRS: '/data/docs, papers ,/data/docs,' }), {
      workspaceDirectories: ['/data/docs', resolve('papers')],
    });
    assertConfigurationError(
      () => loadParseFileConfig({ REACT_AGENT_WORKSPACE_DIRS: ' , ,' }),
      'REACT_AGENT_WORKSPACE_DIRS',
      /one or more folders/,
    );
  });
});
