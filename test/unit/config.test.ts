import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, test } from '@jest/globals';
import { TemporalCliNotFoundError, resolveTemporalCli } from '../../src/processes/temporal-cli';
import { ConfigurationError } from '../../src/config/configuration-error';
import { readPositiveInteger } from '../../src/config/environment-values';
import { loadJudgeConfig } from '../../src/config/judge-config';
import { loadModelConfig } from '../../src/config/model-config';
import { loadTemporalConnection } from '../../src/config/temporal-connection-config';
import { loadWorkerConfig } from '../../src/config/worker-config';

const PROJECT_ROOT = resolve(__dirname, '../..');
const SECRET = 'sk-test-SECRET-do-not-print-1234567890';
const scratch = mkdtempSync(join(tmpdir(), 'react-agent-config-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** Asserts `fn` throws a ConfigurationError for `variable` whose message matches every pattern. */
function assertConfigurationError(fn: () => unknown, variable: string, ...patterns: RegExp[]): ConfigurationError {
  let caught: unknown;
  try {
    fn();
  } catch (error) {
    caught = error;
  }
  assert.ok(caught instanceof ConfigurationError, `expected a ConfigurationError, got ${String(caught)}`);
  assert.equal(caught.name, 'ConfigurationError');
  assert.equal(caught.variable, variable);
  for (const pattern of patterns) assert.match(caught.message, pattern);
  assert.ok(!caught.message.includes(SECRET), 'the API key must never appear in a message');
  assert.ok(!String(caught.stack).includes(SECRET), 'the API key must never appear in a stack');
  return caught;
}

describe('loadModelConfig', () => {
  test('OpenAI defaults when only the key and model are set', () => {
    const config = loadModelConfig({ OPENAI_API_KEY: SECRET, REACT_AGENT_MODEL: 'gpt-4o-mini' });
    assert.deepEqual(config, {
      api: 'openai-chat',
      baseUrl: 'https://api.openai.com/v1',
      apiKey: SECRET,
      model: 'gpt-4o-mini',
      timeoutSeconds: 600,
      heartbeatSeconds: 20,
      stallSeconds: 60,
      firstTokenSeconds: 300,
      contextWindowCacheSeconds: 300,
      maxAttempts: 12,
      maxReplyBytes: 1_048_576,
      maxLineBytes: 4_194_304,
      temperature: 0.6,
      topP: 0.95,
      maxOutputTokens: 10000,
      maxToolCallsPerReply: 8,
    });
  });

  test('REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS: 0 asks the server at every run, a day at most, nonsense refused (issue 34)', () => {
    const base = { OPENAI_API_KEY: SECRET, REACT_AGENT_MODEL: 'm' };
    assert.equal(
      loadModelConfig({ ...base, REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS: '0' }).contextWindowCacheSeconds,
      0,
    );
    assert.equal(
      loadModelConfig({ ...base, REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS: '86400' }).contextWindowCacheSeconds,
      86_400,
    );
    for (const value of ['-1', '86401', 'soon'])
      assert.throws(
        () => loadModelConfig({ ...base, REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS: value }),
        /REACT_AGENT_CONTEXT_WINDOW_CACHE_SECONDS must be a number from 0 to 86400/,
      );
  });

  test('REACT_AGENT_MODEL_API: Anthropic reads its own variables; Responses the OpenAI ones; a bad value names the choices', () => {
    const anthropic = loadModelConfig({
      REACT_AGENT_MODEL_API: 'anthropic-messages',
      ANTHROPIC_API_KEY: SECRET,
      REACT_AGENT_MODEL: 'claude-sonnet-4-5',
      REACT_AGENT_THINKING_BUDGET_TOKENS: '2048',
    });
    assert.equal(anthropic.api, 'anthropic-messages');
    assert.equal(anthropic.baseUrl, 'https://api.anthropic.com');
    assert.equal(anthropic.apiKey, SECRET);
    assert.equal(anthropic.thinkingBudgetTokens, 2048);
    const local = loadModelConfig({
      REACT_AGENT_MODEL_API: 'anthropic-messages',
      ANTHROPIC_BASE_URL: 'http://localhost:8080',
      OPENAI_API_KEY: 'not-this-one',
      REACT_AGENT_MODEL: 'm',
    });
    assert.equal(local.apiKey, 'not-needed');
    const responses = loadModelConfig({
      REACT_AGENT_MODEL_API: 'openai-responses',
      OPENAI_API_KEY: SECRET,
      REACT_AGENT_MODEL: 'gpt-5',
      REACT_AGENT_REASONING_EFFORT: 'low',
    });
    assert.equal(responses.api, 'openai-responses');
    assert.equal(responses.baseUrl, 'https://api.openai.com/v1');
    assert.equal(responses.reasoningEffort, 'low');
    const bad = assertConfigurationError(
      () => loadModelConfig({ REACT_AGENT_MODEL_API: 'anthropic', OPENAI_API_KEY: SECRET, REACT_AGENT_MODEL: 'm' }),
      'REACT_AGENT_MODEL_API',
    );
    assert.match(bad.message, /openai-chat, openai-responses, anthropic-messages/);
    assertConfigurationError(
      () =>
        loadModelConfig({
          REACT_AGENT_MODEL_API: 'anthropic-messages',
          OPENAI_API_KEY: SECRET,
          REACT_AGENT_MODEL: 'm',
        }),
      'ANTHROPIC_BASE_URL',
    );
    assertConfigurationError(
      () =>
        loadModelConfig({
          REACT_AGENT_MODEL_API: 'anthropic-messages',
          ANTHROPIC_API_KEY: SECRET,
          REACT_AGENT_MODEL: 'm',
          REACT_AGENT_THINKING_BUDGET_TOKENS: '20000',
        }),
      'REACT_AGENT_THINKING_BUDGET_TOKENS',
    );
    assertConfigurationError(
      () => loadModelConfig({ OPENAI_API_KEY: SECRET, REACT_AGENT_MODEL: 'm', REACT_AGENT_REASONING_EFFORT: 'max' }),
      'REACT_AGENT_REASONING_EFFORT',
    );
  });

  test("REACT_AGENT_JUDGE_MODEL_API: the judge on another API takes that API's endpoint and key", () => {
    const environment = {
      OPENAI_BASE_URL: 'http://localhost:8080/v1',
      REACT_AGENT_MODEL: 'local',
      ANTHROPIC_API_KEY: SECRET,
      REACT_AGENT_JUDGE_MODEL_API: 'anthropic-messages',
      REACT_AGENT_JUDGE_MODEL: 'claude-haiku-4-5',
    };
    const judge = loadJudgeConfig(environment);
    assert.equal(judge.api, 'anthropic-messages');
    assert.equal(judge.baseUrl, 'https://api.anthropic.com');
    assert.equal(judge.apiKey, SECRET);
    assert.equal(loadJudgeConfig({ ...environment, REACT_AGENT_JUDGE_MODEL_API: undefined }).api, 'openai-chat');
    assertConfigurationError(
      () => loadJudgeConfig({ ...environment, REACT_AGENT_JUDGE_MODEL_API: 'claude' }),
      'REACT_AGENT_JUDGE_MODEL_API',
    );
  });

  test('a local server needs no key; OPENAI_MODEL is the fallback; trailing slash dropped', () => {
    const config = loadModelConfig({ OPENAI_BASE_URL: 'http://localhost:8080/v1/', OPENAI_MODEL: 'local' });
    assert.equal(config.baseUrl, 'http://localhost:8080/v1');
    assert.equal(config.apiKey, 'not-needed');
    assert.equal(config.model, 'local');
  });

  test('REACT_AGENT_MODEL wins over OPENAI_MODEL; numbers are read', () => {
    const config = loadModelConfig({
      OPENAI_BASE_URL: 'http://localhost:8000/v1',
      REACT_AGENT_MODEL: 'Qwen/Qwen3-8B',
      OPENAI_MODEL: 'other',
      REACT_AGENT_MODEL_TIMEOUT_SECONDS: '120',
      REACT_AGENT_MODEL_HEARTBEAT_SECONDS: '15',
      REACT_AGENT_MODEL_STALL_SECONDS: '90',
      REACT_AGENT_MODEL_MAX_ATTEMPTS: '3',
      REACT_AGENT_MODEL_MAX_REPLY_BYTES: '2097152',
      REACT_AGENT_MODEL_MAX_LINE_BYTES: '65536',
      REACT_AGENT_TEMPERATURE: '0',
      REACT_AGENT_TOP_P: '1',
      REACT_AGENT_MAX_OUTPUT_TOKENS: '2048',
    });
    assert.equal(config.model, 'Qwen/Qwen3-8B');
    assert.equal(config.timeoutSeconds, 120);
    assert.equal(config.heartbeatSeconds, 15);
    assert.equal(config.stallSeconds, 90);
    assert.equal(config.maxAttempts, 3);
    assert.equal(config.maxReplyBytes, 2_097_152);
    assert.equal(config.maxLineBytes, 65_536);
    assert.equal(config.temperature, 0);
    assert.equal(config.topP, 1);
    assert.equal(config.maxOutputTokens, 2048);
  });

  test('blank values count as unset', () => {
    const config = loadModelConfig({
      OPENAI_API_KEY: SECRET,
      OPENAI_BASE_URL: '  ',
      REACT_AGENT_MODEL: 'm',
      REACT_AGENT_TOP_P: '',
    });
    assert.equal(config.baseUrl, 'https://api.openai.com/v1');
    assert.equal(config.topP, 0.95);
  });

  test('no endpoint: short lines naming the variables, one example per line', () => {
    const error = assertConfigurationError(
      () => loadModelConfig({ REACT_AGENT_MODEL: 'm' }),
      'OPENAI_BASE_URL',
      /No model endpoint/,
      /OPENAI_BASE_URL/,
      /OPENAI_API_KEY/,
      /REACT_AGENT_MODEL/,
      /api\.openai\.com/,
      /http:\/\/localhost:8000\/v1/,
      /http:\/\/localhost:11434\/v1/,
      /http:\/\/localhost:8080\/v1/,
    );
    const lines = error.message.split('\n');
    for (const line of lines) assert.ok(line.length <= 100, `a line of ${line.length} characters: ${line}`);
    for (const server of ['OpenAI', 'vLLM', 'Ollama', 'llama-server']) {
      assert.equal(
        lines.filter((line) => line.trimStart().startsWith(`${server}:`)).length,
        1,
        `one line with the ${server} example`,
      );
    }
  });

  test('no model: names both variables and gives an example', () => {
    assertConfigurationError(
      () => loadModelConfig({ OPENAI_API_KEY: SECRET }),
      'REACT_AGENT_MODEL',
      /REACT_AGENT_MODEL/,
      /OPENAI_MODEL/,
      /for example/,
    );
  });

  test('base URL must be http(s)', () => {
    for (const bad of ['localhost:8000/v1', 'ftp://example.com/v1', 'not a url']) {
      assertConfigurationError(
        () => loadModelConfig({ OPENAI_BASE_URL: bad, OPENAI_API_KEY: SECRET, REACT_AGENT_MODEL: 'm' }),
        'OPENAI_BASE_URL',
        /OPENAI_BASE_URL must be an http\(s\) URL/,
      );
    }
  });

  test('the key is redacted even if it was pasted into another variable', () => {
    assertConfigurationError(
      () => loadModelConfig({ OPENAI_BASE_URL: SECRET, OPENAI_API_KEY: SECRET, REACT_AGENT_MODEL: 'm' }),
      'OPENAI_BASE_URL',
      /\[redacted\]/,
    );
  });

  test('bad numbers name the variable and quote the value', () => {
    const base = { OPENAI_API_KEY: SECRET, REACT_AGENT_MODEL: 'm' };
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MODEL_MAX_ATTEMPTS: 'abc' }),
      'REACT_AGENT_MODEL_MAX_ATTEMPTS',
      /^REACT_AGENT_MODEL_MAX_ATTEMPTS must be a positive integer, got "abc"$/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MODEL_MAX_ATTEMPTS: '2.5' }),
      'REACT_AGENT_MODEL_MAX_ATTEMPTS',
      /positive integer/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MAX_OUTPUT_TOKENS: '0' }),
      'REACT_AGENT_MAX_OUTPUT_TOKENS',
      /positive integer, got "0"/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY: '0' }),
      'REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY',
      /positive integer, got "0"/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY: '1001' }),
      'REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY',
      /^REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY must be an integer from 1 to 1000, got "1001"$/,
    );
    assert.equal(loadModelConfig({ ...base, REACT_AGENT_MAX_TOOL_CALLS_PER_REPLY: '20' }).maxToolCallsPerReply, 20);
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MODEL_TIMEOUT_SECONDS: '-1' }),
      'REACT_AGENT_MODEL_TIMEOUT_SECONDS',
      /^REACT_AGENT_MODEL_TIMEOUT_SECONDS must be a positive number, got "-1"$/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MODEL_HEARTBEAT_SECONDS: 'soon' }),
      'REACT_AGENT_MODEL_HEARTBEAT_SECONDS',
      /positive number/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MODEL_STALL_SECONDS: '0' }),
      'REACT_AGENT_MODEL_STALL_SECONDS',
      /positive number/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MODEL_MAX_REPLY_BYTES: '1MB' }),
      'REACT_AGENT_MODEL_MAX_REPLY_BYTES',
      /positive integer, got "1MB"/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_MODEL_MAX_LINE_BYTES: '100' }),
      'REACT_AGENT_MODEL_MAX_LINE_BYTES',
      /^REACT_AGENT_MODEL_MAX_LINE_BYTES must be at least 1024 \(bytes\), got 100\.$/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_TEMPERATURE: '3' }),
      'REACT_AGENT_TEMPERATURE',
      /from 0 to 2, got "3"/,
    );
    assertConfigurationError(
      () => loadModelConfig({ ...base, REACT_AGENT_TOP_P: '1.5' }),
      'REACT_AGENT_TOP_P',
      /from 0 to 1, got "1.5"/,
    );
  });

  test('readPositiveInteger accepts a default and plain integers', () => {
    assert.equal(readPositiveInteger({}, 'X', 7), 7);
    assert.equal(readPositiveInteger({ X: ' 42 ' }, 'X', 7), 42);
  });
});

describe('loadWorkerConfig', () => {
  test('defaults', () => {
    assert.deepEqual(loadWorkerConfig({}), {
      taskQueue: 'react-agent',
      maxConcurrentActivities: 20,
      maxConcurrentWorkflowTasks: 10,
      shutdownGraceSeconds: 30,
      stickyQueueTimeoutSeconds: 3,
      heartbeatThrottleSeconds: 5,
      dataDirectory: join(PROJECT_ROOT, '.data'),
      transcriptDirectory: join(PROJECT_ROOT, '.data', 'transcripts'),
      transcriptCacheMegabytes: 256,
      workflowV8Flags: ['--max-semi-space-size=2'],
    });
  });

  test("the workflow thread's V8 flags: space- or comma-separated, none for none", () => {
    assert.deepEqual(
      loadWorkerConfig({ REACT_AGENT_WORKFLOW_V8_FLAGS: ' --max-semi-space-size=1  --optimize-for-size ' })
        .workflowV8Flags,
      ['--max-semi-space-size=1', '--optimize-for-size'],
    );
    assert.deepEqual(
      loadWorkerConfig({ REACT_AGENT_WORKFLOW_V8_FLAGS: '--max-semi-space-size=1,--heap-growing-percent=30' })
        .workflowV8Flags,
      ['--max-semi-space-size=1', '--heap-growing-percent=30'],
    );
    assert.deepEqual(loadWorkerConfig({ REACT_AGENT_WORKFLOW_V8_FLAGS: 'none' }).workflowV8Flags, []);
    assert.deepEqual(loadWorkerConfig({ REACT_AGENT_WORKFLOW_V8_FLAGS: '  ' }).workflowV8Flags, [
      '--max-semi-space-size=2',
    ]);
    for (const value of ['max-semi-space-size=1', '--max-semi-space-size=1 ; rm -rf /', '-x', '--a=b=c d'])
      assertConfigurationError(
        () => loadWorkerConfig({ REACT_AGENT_WORKFLOW_V8_FLAGS: value }),
        'REACT_AGENT_WORKFLOW_V8_FLAGS',
        /^REACT_AGENT_WORKFLOW_V8_FLAGS must be space-separated V8 flags like --max-semi-space-size=4 \(or none\), got "/,
      );
  });

  test('overrides; the transcript folder follows the data folder', () => {
    const config = loadWorkerConfig({
      REACT_AGENT_TASK_QUEUE: 'q2',
      REACT_AGENT_MAX_CONCURRENT_ACTIVITIES: '5',
      REACT_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS: '2',
      REACT_AGENT_SHUTDOWN_GRACE_SECONDS: '1.5',
      REACT_AGENT_DATA_DIR: '/srv/agent',
    });
    assert.equal(config.taskQueue, 'q2');
    assert.equal(config.maxConcurrentActivities, 5);
    assert.equal(config.maxConcurrentWorkflowTasks, 2);
    assert.equal(config.shutdownGraceSeconds, 1.5);
    assert.equal(config.dataDirectory, resolve('/srv/agent'));
    assert.equal(config.transcriptDirectory, resolve('/srv/agent/transcripts'));
    assert.equal(loadWorkerConfig({ REACT_AGENT_TRANSCRIPT_DIR: '/t' }).transcriptDirectory, resolve('/t'));
    assert.equal(
      loadWorkerConfig({ REACT_AGENT_TRANSCRIPT_CACHE_MB: '0' }).transcriptCacheMegabytes,
      0,
      '0 turns the cache off',
    );
    assert.equal(loadWorkerConfig({ REACT_AGENT_TRANSCRIPT_CACHE_MB: '1024' }).transcriptCacheMegabytes, 1024);
  });

  test('errors name the variable', () => {
    assertConfigurationError(
      () => loadWorkerConfig({ REACT_AGENT_MAX_CONCURRENT_ACTIVITIES: 'many' }),
      'REACT_AGENT_MAX_CONCURRENT_ACTIVITIES',
      /^REACT_AGENT_MAX_CONCURRENT_ACTIVITIES must be a positive integer, got "many"$/,
    );
    assertConfigurationError(
      () => loadWorkerConfig({ REACT_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS: '-2' }),
      'REACT_AGENT_MAX_CONCURRENT_WORKFLOW_TASKS',
      /positive integer/,
    );
    assertConfigurationError(
      () => loadWorkerConfig({ REACT_AGENT_SHUTDOWN_GRACE_SECONDS: 'x' }),
      'REACT_AGENT_SHUTDOWN_GRACE_SECONDS',
      /positive number/,
    );
    assertConfigurationError(
      () => loadWorkerConfig({ REACT_AGENT_HEARTBEAT_THROTTLE_SECONDS: '0' }),
      'REACT_AGENT_HEARTBEAT_THROTTLE_SECONDS',
      /positive number/,
    );
    assertConfigurationError(
      () => loadWorkerConfig({ REACT_AGENT_TASK_QUEUE: 'a b' }),
      'REACT_AGENT_TASK_QUEUE',
      /whitespace/,
    );
    assertConfigurationError(
      () => loadWorkerConfig({ REACT_AGENT_TRANSCRIPT_CACHE_MB: '-1' }),
      'REACT_AGENT_TRANSCRIPT_CACHE_MB',
      /number from 0 to/,
    );
  });
});

describe('loadTemporalConnection', () => {
  // Keep the user's ~/.config/temporalio/temporal.toml out of these tests.
  const isolated = { HOME: join(scratch, 'home'), XDG_CONFIG_HOME: join(scratch, 'xdg') };

  test('defaults to localhost:7233 / default', () => {
    const connection = loadTemporalConnection(isolated);
    assert.deepEqual(connection, {
      connectionOptions: { address: 'localhost:7233' },
      namespace: 'default',
      address: 'localhost:7233',
      isLocalDefault: true,
    });
  });

  test('TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE are picked up', () => {
    const connection = loadTemporalConnection({
      ...isolated,
      TEMPORAL_ADDRESS: 'temporal.internal:7233',
      TEMPORAL_NAMESPACE: 'research',
    });
    assert.equal(connection.address, 'temporal.internal:7233');
    assert.equal(connection.connectionOptions.address, 'temporal.internal:7233');
    assert.equal(connection.namespace, 'research');
    assert.equal(connection.isLocalDefault, false);
    assert.equal(loadTemporalConnection({ ...isolated, TEMPORAL_ADDRESS: '127.0.0.1:7233' }).isLocalDefault, true);
    assert.equal(loadTemporalConnection({ ...isolated, TEMPORAL_ADDRESS: '127.0.0.1:7000' }).isLocalDefault, false);
  });

  test('TEMPORAL_API_KEY turns TLS on', () => {
    const { connectionOptions } = loadTemporalConnection({
      ...isolated,
      TEMPORAL_ADDRESS: 'ns.tmprl.cloud:7233',
      TEMPORAL_API_KEY: SECRET,
    });
    assert.equal(connectionOptions.apiKey, SECRET);
    assert.equal(connectionOptions.tls, true);
  });

  test('profiles come from TEMPORAL_CONFIG_FILE; environment variables override them', () => {
    const file = join(scratch, 'temporal.toml');
    writeFileSync(
      file,
      [
        '[profile.default]',
        'address = "file-default:7233"',
        '',
        '[profile.staging]',
        'address = "staging:7233"',
        'namespace = "staging-ns"',
        '',
      ].join('\n'),
    );
    assert.equal(loadTemporalConnection({ ...isolated, TEMPORAL_CONFIG_FILE: file }).address, 'file-default:7233');
    const staging = loadTemporalConnection({ ...isolated, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'staging' });
    assert.equal(staging.address, 'staging:7233');
    assert.equal(staging.namespace, 'staging-ns');
    const overridden = loadTemporalConnection({
      ...isolated,
      TEMPORAL_CONFIG_FILE: file,
      TEMPORAL_PROFILE: 'staging',
      TEMPORAL_NAMESPACE: 'mine',
    });
    assert.equal(overridden.namespace, 'mine');
    assertConfigurationError(
      () => loadTemporalConnection({ ...isolated, TEMPORAL_CONFIG_FILE: file, TEMPORAL_PROFILE: 'nope' }),
      'TEMPORAL_PROFILE',
      /TEMPORAL_PROFILE=nope/,
    );
  });

  test('a missing config file is fine; a broken one is a ConfigurationError', () => {
    assert.equal(
      loadTemporalConnection({ ...isolated, TEMPORAL_CONFIG_FILE: join(scratch, 'missing.toml') }).address,
      'localhost:7233',
    );
    const broken = join(scratch, 'broken.toml');
    writeFileSync(broken, '[profile.default\naddress = ');
    assertConfigurationError(
      () => loadTemporalConnection({ ...isolated, TEMPORAL_CONFIG_FILE: broken }),
      'TEMPORAL_CONFIG_FILE',
      /broken\.toml/,
    );
  });
});

describe('resolveTemporalCli', () => {
  const makeExecutable = (path: string): string => {
    mkdirSync(join(path, '..'), { recursive: true });
    writeFileSync(path, '#!/bin/sh\n');
    chmodSync(path, 0o755);
    return path;
  };
  const emptyRoot = join(scratch, 'empty-root');
  const onPath = makeExecutable(join(scratch, 'bin', 'temporal'));
  const projectRoot = join(scratch, 'project');
  const projectLocal = makeExecutable(join(projectRoot, '.tools', 'temporal-venv', 'bin', 'temporal'));
  const explicit = makeExecutable(join(scratch, 'custom', 'my-temporal'));

  test('TEMPORAL_CLI first, then PATH, then the project-local copy', () => {
    assert.deepEqual(resolveTemporalCli({ TEMPORAL_CLI: explicit, PATH: join(scratch, 'bin') }, projectRoot), {
      path: explicit,
      source: 'TEMPORAL_CLI',
    });
    assert.deepEqual(resolveTemporalCli({ PATH: `/nonexistent:${join(scratch, 'bin')}` }, projectRoot), {
      path: onPath,
      source: 'PATH',
    });
    assert.deepEqual(resolveTemporalCli({ PATH: '/nonexistent' }, projectRoot), {
      path: projectLocal,
      source: 'project',
    });
  });

  test('a TEMPORAL_CLI that is not executable is an error saying how to fix it', () => {
    assert.throws(
      () => resolveTemporalCli({ TEMPORAL_CLI: join(scratch, 'nothing-here') }, projectRoot),
      (error: unknown) =>
        error instanceof TemporalCliNotFoundError &&
        /TEMPORAL_CLI=/.test(error.message) &&
        /npm run setup/.test(error.message),
    );
  });

  test('nothing found: the error says npm run setup or TEMPORAL_CLI', () => {
    assert.throws(
      () => resolveTemporalCli({ PATH: '/nonexistent' }, emptyRoot),
      (error: unknown) =>
        error instanceof TemporalCliNotFoundError &&
        error.name === 'TemporalCliNotFoundError' &&
        /npm run setup/.test(error.message) &&
        /TEMPORAL_CLI/.test(error.message),
    );
  });
});
