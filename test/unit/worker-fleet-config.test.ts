import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { ConfigurationError } from '../../src/config/configuration-error';
import { loadWorkerFleetConfig, planWorkerQueues } from '../../src/config/worker-fleet-config';

function assertConfigurationError(action: () => unknown, variable: string, message: RegExp): void {
  assert.throws(action, (error: unknown) => {
    assert.ok(error instanceof ConfigurationError);
    assert.equal(error.variable, variable);
    assert.match(error.message, message);
    assert.match(error.message, new RegExp(variable));
    return true;
  });
}

describe('loadWorkerFleetConfig', () => {
  test('defaults keep one queue for everything, role all, no rate limit', () => {
    assert.deepEqual(loadWorkerFleetConfig({}), {
      role: 'all',
      taskQueue: 'react-agent',
      modelTaskQueue: 'react-agent',
      toolTaskQueue: 'react-agent',
      maxConcurrentModelCalls: 200,
      maxConcurrentToolCalls: 8,
    });
    assert.equal(loadWorkerFleetConfig({ REACT_AGENT_TASK_QUEUE: 'main' }).modelTaskQueue, 'main');
    assert.equal(loadWorkerFleetConfig({ REACT_AGENT_TASK_QUEUE: 'ignored' }, 'given').toolTaskQueue, 'given');
  }, 5_000);

  test('reads roles, queues, slots and the model rate', () => {
    const config = loadWorkerFleetConfig({
      REACT_AGENT_WORKER_ROLE: ' model ',
      REACT_AGENT_TASK_QUEUE: 'wf',
      REACT_AGENT_MODEL_TASK_QUEUE: 'llm',
      REACT_AGENT_TOOL_TASK_QUEUE: 'sandbox',
      REACT_AGENT_MAX_CONCURRENT_MODEL_CALLS: '500',
      REACT_AGENT_MAX_CONCURRENT_TOOL_CALLS: '2',
      REACT_AGENT_MODEL_CALLS_PER_SECOND: '2.5',
    });
    assert.deepEqual(config, {
      role: 'model',
      taskQueue: 'wf',
      modelTaskQueue: 'llm',
      toolTaskQueue: 'sandbox',
      maxConcurrentModelCalls: 500,
      maxConcurrentToolCalls: 2,
      modelCallsPerSecond: 2.5,
    });
  }, 5_000);

  test('bad values fail naming the variable', () => {
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_WORKER_ROLE: 'gpu' }),
      'REACT_AGENT_WORKER_ROLE',
      /one of workflows, model, tools, all, got "gpu"/,
    );
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_MODEL_TASK_QUEUE: 'a b' }),
      'REACT_AGENT_MODEL_TASK_QUEUE',
      /whitespace/,
    );
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_TOOL_TASK_QUEUE: 'a\tb' }),
      'REACT_AGENT_TOOL_TASK_QUEUE',
      /whitespace/,
    );
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_MAX_CONCURRENT_MODEL_CALLS: '0' }),
      'REACT_AGENT_MAX_CONCURRENT_MODEL_CALLS',
      /positive integer/,
    );
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_MAX_CONCURRENT_TOOL_CALLS: 'lots' }),
      'REACT_AGENT_MAX_CONCURRENT_TOOL_CALLS',
      /positive integer/,
    );
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_MODEL_CALLS_PER_SECOND: '-1' }),
      'REACT_AGENT_MODEL_CALLS_PER_SECOND',
      /positive number/,
    );
  }, 5_000);

  test('a single role needs a queue of its own', () => {
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_WORKER_ROLE: 'model' }),
      'REACT_AGENT_MODEL_TASK_QUEUE',
      /needs its own task queue/,
    );
    assertConfigurationError(
      () =>
        loadWorkerFleetConfig({
          REACT_AGENT_WORKER_ROLE: 'tools',
          REACT_AGENT_MODEL_TASK_QUEUE: 'x',
          REACT_AGENT_TOOL_TASK_QUEUE: 'x',
        }),
      'REACT_AGENT_TOOL_TASK_QUEUE',
      /REACT_AGENT_MODEL_TASK_QUEUE are both "x"/,
    );
    assertConfigurationError(
      () => loadWorkerFleetConfig({ REACT_AGENT_WORKER_ROLE: 'workflows', REACT_AGENT_MODEL_TASK_QUEUE: 'llm' }),
      'REACT_AGENT_TOOL_TASK_QUEUE',
      /REACT_AGENT_WORKER_ROLE=workflows needs its own task queue/,
    );
    assert.equal(
      loadWorkerFleetConfig({ REACT_AGENT_WORKER_ROLE: 'tools', REACT_AGENT_TOOL_TASK_QUEUE: 'sandbox' }).role,
      'tools',
    );
  }, 5_000);
});

describe('planWorkerQueues', () => {
  const distinct = {
    REACT_AGENT_TASK_QUEUE: 'wf',
    REACT_AGENT_MODEL_TASK_QUEUE: 'llm',
    REACT_AGENT_TOOL_TASK_QUEUE: 'sandbox',
  };

  test('the single-queue default is one Worker with REACT_AGENT_MAX_CONCURRENT_ACTIVITIES slots, rate-limited when asked', () => {
    assert.deepEqual(planWorkerQueues(loadWorkerFleetConfig({}), 20), [
      { taskQueue: 'react-agent', workflows: true, model: true, tools: true, maxConcurrentActivities: 20 },
    ]);
    assert.deepEqual(planWorkerQueues(loadWorkerFleetConfig({ REACT_AGENT_MODEL_CALLS_PER_SECOND: '3' }), 20), [
      {
        taskQueue: 'react-agent',
        workflows: true,
        model: true,
        tools: true,
        maxConcurrentActivities: 20,
        maxActivitiesPerSecond: 3,
      },
    ]);
  }, 5_000);

  test('role all with distinct queues runs one Worker per queue, each sized for its kind', () => {
    assert.deepEqual(
      planWorkerQueues(loadWorkerFleetConfig({ ...distinct, REACT_AGENT_MODEL_CALLS_PER_SECOND: '4' }), 20),
      [
        { taskQueue: 'wf', workflows: true, model: false, tools: false, maxConcurrentActivities: 20 },
        {
          taskQueue: 'llm',
          workflows: false,
          model: true,
          tools: false,
          maxConcurrentActivities: 200,
          maxActivitiesPerSecond: 4,
        },
        { taskQueue: 'sandbox', workflows: false, model: false, tools: true, maxConcurrentActivities: 8 },
      ],
    );
    // Model and tools sharing a queue apart from the main one: the general slot count.
    assert.deepEqual(
      planWorkerQueues(
        loadWorkerFleetConfig({ REACT_AGENT_MODEL_TASK_QUEUE: 'calls', REACT_AGENT_TOOL_TASK_QUEUE: 'calls' }),
        20,
      ),
      [
        { taskQueue: 'react-agent', workflows: true, model: false, tools: false, maxConcurrentActivities: 20 },
        { taskQueue: 'calls', workflows: false, model: true, tools: true, maxConcurrentActivities: 20 },
      ],
    );
  }, 5_000);

  test('a single role polls only its own queue', () => {
    assert.deepEqual(
      planWorkerQueues(loadWorkerFleetConfig({ ...distinct, REACT_AGENT_WORKER_ROLE: 'workflows' }), 20),
      [{ taskQueue: 'wf', workflows: true, model: false, tools: false, maxConcurrentActivities: 20 }],
    );
    assert.deepEqual(
      planWorkerQueues(
        loadWorkerFleetConfig({
          ...distinct,
          REACT_AGENT_WORKER_ROLE: 'model',
          REACT_AGENT_MODEL_CALLS_PER_SECOND: '1',
        }),
        20,
      ),
      [
        {
          taskQueue: 'llm',
          workflows: false,
          model: true,
          tools: false,
          maxConcurrentActivities: 200,
          maxActivitiesPerSecond: 1,
        },
      ],
    );
    assert.deepEqual(
      planWorkerQueues(
        loadWorkerFleetConfig({
          ...distinct,
          REACT_AGENT_WORKER_ROLE: 'tools',
          REACT_AGENT_MODEL_CALLS_PER_SECOND: '1',
        }),
        20,
      ),
      [{ taskQueue: 'sandbox', workflows: false, model: false, tools: true, maxConcurrentActivities: 8 }],
    );
  }, 5_000);
});
