import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadVisitConfig } from '../../src/config/visit-config';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-visit-config-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function configurationError(environment: Record<string, string>, variable: string, pattern: RegExp): void {
  assert.throws(
    () => loadVisitConfig(environment),
    (error: unknown) =>
      error instanceof ConfigurationError && error.variable === variable && pattern.test(error.message),
  );
}

describe('loadVisitConfig', () => {
  test('defaults: 5 MB, 30 s, private networks refused, no hosts, no files, no summaries', () => {
    assert.deepEqual(loadVisitConfig({}), {
      maxBytes: 5 * 1024 * 1024,
      timeoutSeconds: 30,
      allowPrivateNetworks: false,
      allowedHosts: [],
      localFileDirectories: [],
      summarize: false,
    });
  });

  test('reads every variable', () => {
    const relativeDirectory = relative(process.cwd(), scratch);
    const config = loadVisitConfig({
      REACT_AGENT_VISIT_MAX_BYTES: '1048576',
      REACT_AGENT_VISIT_TIMEOUT_SECONDS: '2.5',
      REACT_AGENT_VISIT_ALLOW_PRIVATE: 'TRUE',
      REACT_AGENT_VISIT_ALLOWED_HOSTS: ' Wiki.Corp.Example , .intranet.example,10.0.0.7:8080,[fd00::7]:*,::1 ',
      REACT_AGENT_VISIT_FILE_DIRS: `${scratch}, ${relativeDirectory}`,
      REACT_AGENT_VISIT_SUMMARIZE: 'yes',
    });
    assert.deepEqual(config, {
      maxBytes: 1_048_576,
      timeoutSeconds: 2.5,
      allowPrivateNetworks: true,
      allowedHosts: ['wiki.corp.example', '.intranet.example', '10.0.0.7:8080', '[fd00::7]:*', '::1'],
      localFileDirectories: [scratch, scratch],
      summarize: true,
    });
    assert.equal(
      loadVisitConfig({ REACT_AGENT_VISIT_ALLOW_PRIVATE: 'false', REACT_AGENT_VISIT_SUMMARIZE: '0' }).summarize,
      false,
    );
  });

  test('bad values fail naming the variable', () => {
    configurationError({ REACT_AGENT_VISIT_MAX_BYTES: '5MB' }, 'REACT_AGENT_VISIT_MAX_BYTES', /positive integer/);
    configurationError(
      { REACT_AGENT_VISIT_TIMEOUT_SECONDS: '0' },
      'REACT_AGENT_VISIT_TIMEOUT_SECONDS',
      /positive number/,
    );
    configurationError(
      { REACT_AGENT_VISIT_ALLOW_PRIVATE: 'maybe' },
      'REACT_AGENT_VISIT_ALLOW_PRIVATE',
      /true or false, got "maybe"/,
    );
    configurationError({ REACT_AGENT_VISIT_SUMMARIZE: 'sure' }, 'REACT_AGENT_VISIT_SUMMARIZE', /true or false/);
    configurationError(
      { REACT_AGENT_VISIT_ALLOWED_HOSTS: 'https://wiki.corp' },
      'REACT_AGENT_VISIT_ALLOWED_HOSTS',
      /host names/,
    );
    configurationError(
      { REACT_AGENT_VISIT_ALLOWED_HOSTS: 'wiki.corp:0' },
      'REACT_AGENT_VISIT_ALLOWED_HOSTS',
      /port "0" is not 1–65535 or \*/,
    );
    configurationError(
      { REACT_AGENT_VISIT_ALLOWED_HOSTS: 'wiki.corp:http' },
      'REACT_AGENT_VISIT_ALLOWED_HOSTS',
      /port "http" is not 1–65535 or \*.*/,
    );
    configurationError(
      { REACT_AGENT_VISIT_ALLOWED_HOSTS: '[fd00::7:8080' },
      'REACT_AGENT_VISIT_ALLOWED_HOSTS',
      /closing bracket/,
    );
    configurationError(
      { REACT_AGENT_VISIT_FILE_DIRS: join(scratch, 'missing') },
      'REACT_AGENT_VISIT_FILE_DIRS',
      /not an existing directory/,
    );
    const file = join(scratch, 'a-file.txt');
    writeFileSync(file, 'x');
    configurationError(
      { REACT_AGENT_VISIT_FILE_DIRS: file },
      'REACT_AGENT_VISIT_FILE_DIRS',
      /not an existing directory/,
    );
  });
});
