import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadLiveTextConfig } from '../../src/config/live-text-config';

describe('loadLiveTextConfig', () => {
  test('by default: loopback, any free port, the default watcher limits, pieces written together within 100 ms', () => {
    assert.deepEqual(loadLiveTextConfig({}), {
      listen: { host: '127.0.0.1', port: 0 },
      maxWatchersPerCall: 16,
      maxWatchersPerRun: 16,
      maxWatchers: 512,
      flushMs: 100,
    });
  });

  test('the watchers of a run stream: a positive number, else refused', () => {
    assert.equal(loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_MAX_WATCHERS_PER_RUN: '4' }).maxWatchersPerRun, 4);
    for (const limit of ['0', '-2', 'many'])
      assert.throws(
        () => loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_MAX_WATCHERS_PER_RUN: limit }),
        (error: unknown) =>
          error instanceof ConfigurationError && /REACT_AGENT_LIVE_TEXT_MAX_WATCHERS_PER_RUN/.test(error.message),
        limit,
      );
  });

  test('the write interval: 0 writes each piece as it comes; above a second or not a number is refused', () => {
    assert.equal(loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_FLUSH_MS: '0' }).flushMs, 0);
    assert.equal(loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_FLUSH_MS: '250' }).flushMs, 250);
    for (const flush of ['1001', '-1', 'soon'])
      assert.throws(
        () => loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_FLUSH_MS: flush }),
        (error: unknown) => error instanceof ConfigurationError && /REACT_AGENT_LIVE_TEXT_FLUSH_MS/.test(error.message),
        flush,
      );
  });

  test('off turns it off; the forms of an address', () => {
    assert.equal(loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_LISTEN: 'off' }).listen, undefined);
    assert.deepEqual(loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_LISTEN: 'localhost:7480' }).listen, {
      host: '127.0.0.1',
      port: 7480,
    });
    assert.deepEqual(loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_LISTEN: '[::1]:7480' }).listen, {
      host: '::1',
      port: 7480,
    });
    const everywhere = loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_LISTEN: '7480' });
    assert.deepEqual(everywhere.listen, { host: '0.0.0.0', port: 7480 });
    assert.equal(everywhere.advertisedHost, hostname(), 'every interface: advertised under the host name');
  });

  test('the advertised URL, without a trailing slash', () => {
    assert.equal(
      loadLiveTextConfig({
        REACT_AGENT_LIVE_TEXT_LISTEN: '0.0.0.0:7480',
        REACT_AGENT_LIVE_TEXT_URL: 'https://worker-3.internal/live/',
      }).advertisedUrl,
      'https://worker-3.internal/live',
    );
  });

  test('malformed values are refused naming the variable', () => {
    for (const listen of ['worker.internal:7480', '127.0.0.1:99999', 'http://127.0.0.1:1', '1.2.3.4'])
      assert.throws(
        () => loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_LISTEN: listen }),
        (error: unknown) => error instanceof ConfigurationError && /REACT_AGENT_LIVE_TEXT_LISTEN/.test(error.message),
        listen,
      );
    assert.throws(() => loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_URL: 'ftp://x' }), /REACT_AGENT_LIVE_TEXT_URL/);
    assert.throws(
      () => loadLiveTextConfig({ REACT_AGENT_LIVE_TEXT_MAX_WATCHERS: '0' }),
      /REACT_AGENT_LIVE_TEXT_MAX_WATCHERS/,
    );
  });
});
