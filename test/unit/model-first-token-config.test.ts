import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ConfigurationError, loadModelConfig } from '../../src/config';

const LOCAL_SERVER = { OPENAI_BASE_URL: 'http://localhost:8080/v1', REACT_AGENT_MODEL: 'local-model' };

describe('REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS', () => {
  test('defaults to 300 seconds, longer than the heartbeat timeout and the stall limit', () => {
    const config = loadModelConfig(LOCAL_SERVER);
    assert.equal(config.firstTokenSeconds, 300);
    assert.ok(config.firstTokenSeconds > config.heartbeatSeconds);
    assert.ok(config.firstTokenSeconds > config.stallSeconds);
  });

  test('is read as a number of seconds (fractions allowed)', () => {
    assert.equal(
      loadModelConfig({ ...LOCAL_SERVER, REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS: '900' }).firstTokenSeconds,
      900,
    );
    assert.equal(
      loadModelConfig({ ...LOCAL_SERVER, REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS: '2.5' }).firstTokenSeconds,
      2.5,
    );
  });

  test.each(['0', '-5', 'soon', '5m'])('%j fails at once, naming the variable', (value) => {
    let caught: unknown;
    try {
      loadModelConfig({ ...LOCAL_SERVER, REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS: value });
    } catch (error) {
      caught = error;
    }
    assert.ok(caught instanceof ConfigurationError, `expected a ConfigurationError, got ${String(caught)}`);
    assert.equal(caught.variable, 'REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS');
    assert.match(caught.message, /REACT_AGENT_MODEL_FIRST_TOKEN_SECONDS must be a positive number/);
  });
});
