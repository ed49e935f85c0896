import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadWorkerDeploymentConfig } from '../../src/config/worker-deployment-config';

function assertConfigurationError(action: () => unknown, variable: string, message: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof ConfigurationError);
    assert.equal(error.variable, variable);
    assert.match(error.message, message);
    return true;
  });
}

describe('loadWorkerDeploymentConfig', () => {
  test('unset: unversioned, as before', () => {
    assert.equal(loadWorkerDeploymentConfig({}), undefined);
    assert.equal(loadWorkerDeploymentConfig({ REACT_AGENT_DEPLOYMENT_NAME: '  ' }), undefined);
  }, 5_000);

  test('a deployment name, with or without a build id', () => {
    assert.deepEqual(loadWorkerDeploymentConfig({ REACT_AGENT_DEPLOYMENT_NAME: ' react-agent ' }), {
      deploymentName: 'react-agent',
    });
    assert.deepEqual(
      loadWorkerDeploymentConfig({ REACT_AGENT_DEPLOYMENT_NAME: 'react_agent-prod', REACT_AGENT_BUILD_ID: '1.4.2' }),
      {
        deploymentName: 'react_agent-prod',
        buildId: '1.4.2',
      },
    );
  }, 5_000);

  test('malformed values and a build id without a deployment name name the variable', () => {
    assertConfigurationError(
      () => loadWorkerDeploymentConfig({ REACT_AGENT_BUILD_ID: 'abc' }),
      'REACT_AGENT_DEPLOYMENT_NAME',
      /REACT_AGENT_BUILD_ID is set but REACT_AGENT_DEPLOYMENT_NAME is not/,
    );
    assertConfigurationError(
      () => loadWorkerDeploymentConfig({ REACT_AGENT_DEPLOYMENT_NAME: 'react.agent' }),
      'REACT_AGENT_DEPLOYMENT_NAME',
      /no "\."/,
    );
    assertConfigurationError(
      () => loadWorkerDeploymentConfig({ REACT_AGENT_DEPLOYMENT_NAME: 'react agent' }),
      'REACT_AGENT_DEPLOYMENT_NAME',
      /letters, digits/,
    );
    assertConfigurationError(
      () => loadWorkerDeploymentConfig({ REACT_AGENT_DEPLOYMENT_NAME: 'r', REACT_AGENT_BUILD_ID: 'a/b' }),
      'REACT_AGENT_BUILD_ID',
      /REACT_AGENT_BUILD_ID must be/,
    );
    assertConfigurationError(
      () => loadWorkerDeploymentConfig({ REACT_AGENT_DEPLOYMENT_NAME: 'r', REACT_AGENT_BUILD_ID: 'x'.repeat(201) }),
      'REACT_AGENT_BUILD_ID',
      /at most 200/,
    );
  }, 5_000);
});
