import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadMetricsConfig } from '../../src/config/metrics-config';

function refused(value: string, pattern: RegExp): void {
  assert.throws(
    () => loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: value }),
    (error: unknown) => {
      assert.ok(error instanceof ConfigurationError);
      assert.equal(error.variable, 'REACT_AGENT_METRICS_ADDRESS');
      assert.match(
        error.message,
        /^REACT_AGENT_METRICS_ADDRESS must be an address to serve Prometheus metrics on, such as 127\.0\.0\.1:9464/,
      );
      assert.ok(error.message.includes(JSON.stringify(value.trim())), 'the message quotes the value');
      assert.match(error.message, pattern);
      return true;
    },
    value,
  );
}

describe('loadMetricsConfig (REACT_AGENT_METRICS_ADDRESS)', () => {
  test('unset or blank: no metrics endpoint', () => {
    assert.deepEqual(loadMetricsConfig({}), {});
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: '  ' }), {});
  });

  test('an IP and a port, as the SDK binds them', () => {
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: '127.0.0.1:9464' }), {
      bindAddress: '127.0.0.1:9464',
    });
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: ' 0.0.0.0:9464 ' }), {
      bindAddress: '0.0.0.0:9464',
    });
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: '[::1]:9464' }), { bindAddress: '[::1]:9464' });
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: '[::]:65535' }), { bindAddress: '[::]:65535' });
  });

  test('localhost is 127.0.0.1 (the SDK takes only IP literals); a bare port is every interface', () => {
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: 'localhost:9464' }), {
      bindAddress: '127.0.0.1:9464',
    });
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: '9464' }), { bindAddress: '0.0.0.0:9464' });
    assert.deepEqual(loadMetricsConfig({ REACT_AGENT_METRICS_ADDRESS: ':9464' }), { bindAddress: '0.0.0.0:9464' });
  });

  test('a bad address fails naming the variable and saying what is wrong', () => {
    refused('metrics.example.com:9464', /the host must be an IP address, not "metrics.example.com"/);
    refused('127.0.0.1', /no port/);
    refused('127.0.0.1:0', /port must be a number from 1 to 65535/);
    refused('127.0.0.1:70000', /port must be a number from 1 to 65535/);
    refused('127.0.0.1:http', /port must be a number/);
    refused('0', /port must be a number from 1 to 65535/);
    refused('::1:9464', /IPv6 address goes in brackets/);
    refused('[zz]:9464', /"zz" is not an IPv6 address/);
    refused('http://127.0.0.1:9464', /not a URL/);
    refused('256.1.1.1:9464', /host must be an IP address/);
  });
});
