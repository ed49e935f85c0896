import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadTracingConfig } from '../../src/config/tracing-config';

function refused(environment: Record<string, string>, variable: string): void {
  assert.throws(
    () => loadTracingConfig(environment),
    (error: unknown) =>
      error instanceof ConfigurationError && error.variable === variable && error.message.includes(variable),
  );
}

describe('loadTracingConfig (OTEL_EXPORTER_OTLP_*, REACT_AGENT_TRACE_CONTENT)', () => {
  test('no endpoint: no tracing', () => {
    assert.deepEqual(loadTracingConfig({}), { serviceName: 'react-agent-worker' });
    assert.deepEqual(loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: ' ', OTEL_SERVICE_NAME: 'w' }), {
      serviceName: 'w',
    });
    assert.equal(loadTracingConfig({ REACT_AGENT_TRACE_CONTENT: 'true' }).tracesUrl, undefined);
  });

  test('OTEL_EXPORTER_OTLP_ENDPOINT gets /v1/traces appended; the traces endpoint is used as it is and wins', () => {
    assert.equal(
      loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }).tracesUrl,
      'http://127.0.0.1:4318/v1/traces',
    );
    assert.equal(
      loadTracingConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/otlp/' }).tracesUrl,
      'http://collector:4318/otlp/v1/traces',
    );
    assert.equal(
      loadTracingConfig({
        OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318',
        OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b:4318/traces',
      }).tracesUrl,
      'https://b:4318/traces',
    );
  });

  test('service name: OTEL_SERVICE_NAME, else the caller default', () => {
    assert.equal(loadTracingConfig({ OTEL_SERVICE_NAME: 'agent-eu' }).serviceName, 'agent-eu');
    assert.equal(loadTracingConfig({}, 'react-agent').serviceName, 'react-agent');
  });

  test('content is off unless REACT_AGENT_TRACE_CONTENT=true, then truncated', () => {
    const on = { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' };
    assert.equal(loadTracingConfig(on).contentCharacters, undefined);
    assert.equal(loadTracingConfig({ ...on, REACT_AGENT_TRACE_CONTENT: 'false' }).contentCharacters, undefined);
    assert.equal(loadTracingConfig({ ...on, REACT_AGENT_TRACE_CONTENT: 'true' }).contentCharacters, 4000);
    assert.equal(
      loadTracingConfig({ ...on, REACT_AGENT_TRACE_CONTENT: 'true', REACT_AGENT_TRACE_CONTENT_CHARACTERS: '200' })
        .contentCharacters,
      200,
    );
  });

  test('bad values fail naming the variable', () => {
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'localhost:4318' }, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    refused({ OTEL_EXPORTER_OTLP_ENDPOINT: 'grpc://x:4317' }, 'OTEL_EXPORTER_OTLP_ENDPOINT');
    refused({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'nope' }, 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT');
    refused({ REACT_AGENT_TRACE_CONTENT: 'maybe' }, 'REACT_AGENT_TRACE_CONTENT');
    refused({ REACT_AGENT_TRACE_CONTENT_CHARACTERS: '-1' }, 'REACT_AGENT_TRACE_CONTENT_CHARACTERS');
  });
});
