import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { workerProcessEnvironment } from '../../src/processes/worker-process-environment';

describe('workerProcessEnvironment', () => {
  test('bounds the allocator arenas and the main thread young generation, keeping everything given', () => {
    const environment = workerProcessEnvironment({ TEMPORAL_ADDRESS: 'localhost:7233' });
    assert.deepEqual(environment, {
      TEMPORAL_ADDRESS: 'localhost:7233',
      MALLOC_ARENA_MAX: '2',
      NODE_OPTIONS: '--max-semi-space-size=4',
    });
  });

  test("the environment's own values win", () => {
    assert.equal(workerProcessEnvironment({ MALLOC_ARENA_MAX: '8' }).MALLOC_ARENA_MAX, '8');
    assert.equal(workerProcessEnvironment({ MALLOC_ARENA_MAX: '' }).MALLOC_ARENA_MAX, '', "empty: glibc's default");
    assert.equal(
      workerProcessEnvironment({ NODE_OPTIONS: '--inspect --max-semi-space-size=16' }).NODE_OPTIONS,
      '--inspect --max-semi-space-size=16',
    );
    assert.equal(
      workerProcessEnvironment({ NODE_OPTIONS: '--max-semi-space-size 0' }).NODE_OPTIONS,
      '--max-semi-space-size 0',
    );
  });

  test('other Node options are kept after the young generation bound', () => {
    assert.equal(
      workerProcessEnvironment({ NODE_OPTIONS: '--enable-source-maps --max-old-space-size=2048' }).NODE_OPTIONS,
      '--max-semi-space-size=4 --enable-source-maps --max-old-space-size=2048',
    );
  });
});
