import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadPythonConfig } from '../../src/config/python-config';

function assertConfigurationError(fn: () => unknown, variable: string, pattern: RegExp): void {
  assert.throws(fn, (error: unknown) => {
    assert.ok(error instanceof ConfigurationError, `expected a ConfigurationError, got ${String(error)}`);
    assert.equal(error.variable, variable);
    assert.match(error.message, pattern);
    return true;
  });
}

describe('loadPythonConfig', () => {
  test('defaults', () => {
    assert.deepEqual(loadPythonConfig({}), {
      pythonExecutable: 'python3',
      wallTimeSeconds: 30,
      memoryBytes: 1024 ** 3,
      maxWriteBytes: 256 * 1024 ** 2,
      isolation: 'auto',
      requiresApproval: false,
    });
  });

  test('every variable', () => {
    assert.deepEqual(
      loadPythonConfig({
        REACT_AGENT_PYTHON: ' /opt/venv/bin/python ',
        REACT_AGENT_PYTHON_TIMEOUT_SECONDS: '90',
        REACT_AGENT_PYTHON_MEMORY_MB: '2048',
        REACT_AGENT_PYTHON_MAX_WRITE_MB: '64',
        REACT_AGENT_PYTHON_ISOLATION: 'Namespaces',
        REACT_AGENT_PYTHON_REQUIRES_APPROVAL: 'true',
      }),
      {
        pythonExecutable: '/opt/venv/bin/python',
        wallTimeSeconds: 90,
        memoryBytes: 2 * 1024 ** 3,
        maxWriteBytes: 64 * 1024 ** 2,
        isolation: 'namespaces',
        requiresApproval: true,
      },
    );
    assert.equal(loadPythonConfig({ REACT_AGENT_PYTHON_ISOLATION: 'rlimits-only' }).isolation, 'rlimits-only');
    assert.equal(loadPythonConfig({ REACT_AGENT_PYTHON_REQUIRES_APPROVAL: 'no' }).requiresApproval, false);
  });

  test('malformed values name their variable', () => {
    assertConfigurationError(
      () => loadPythonConfig({ REACT_AGENT_PYTHON_TIMEOUT_SECONDS: '0' }),
      'REACT_AGENT_PYTHON_TIMEOUT_SECONDS',
      /positive number, got "0"/,
    );
    assertConfigurationError(
      () => loadPythonConfig({ REACT_AGENT_PYTHON_MEMORY_MB: 'lots' }),
      'REACT_AGENT_PYTHON_MEMORY_MB',
      /positive number/,
    );
    assertConfigurationError(
      () => loadPythonConfig({ REACT_AGENT_PYTHON_MEMORY_MB: '16' }),
      'REACT_AGENT_PYTHON_MEMORY_MB',
      /at least 64/,
    );
    assertConfigurationError(
      () => loadPythonConfig({ REACT_AGENT_PYTHON_MAX_WRITE_MB: 'a lot' }),
      'REACT_AGENT_PYTHON_MAX_WRITE_MB',
      /positive number/,
    );
    assertConfigurationError(
      () => loadPythonConfig({ REACT_AGENT_PYTHON_MAX_WRITE_MB: '0.5' }),
      'REACT_AGENT_PYTHON_MAX_WRITE_MB',
      /at least 1/,
    );
    assertConfigurationError(
      () => loadPythonConfig({ REACT_AGENT_PYTHON_ISOLATION: 'docker' }),
      'REACT_AGENT_PYTHON_ISOLATION',
      /one of auto, namespaces, rlimits-only, got "docker"/,
    );
    assertConfigurationError(
      () => loadPythonConfig({ REACT_AGENT_PYTHON_REQUIRES_APPROVAL: 'maybe' }),
      'REACT_AGENT_PYTHON_REQUIRES_APPROVAL',
      /true or false/,
    );
  });
});
