import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { batchRunTemplateFrom } from '../../src/cli/batch-preparation';
import { runInputFrom } from '../../src/cli/start-run';
import { subRunOptionsFrom } from '../../src/cli/sub-run-option';
import { UsageError } from '../../src/cli/usage-error';

/* `--subruns N` and `--subrun-depth D` (issue 30): the run input's `subruns` field, off by default. */
describe('--subruns and --subrun-depth', () => {
  test('are off when absent', () => {
    assert.equal(subRunOptionsFrom({}, 'help'), undefined);
    assert.equal(runInputFrom('q', {}, 'help').subruns, undefined);
    assert.equal(batchRunTemplateFrom({}, 'help').subruns, undefined);
  });

  test('set maxParallel, and maxDepth only when given', () => {
    assert.deepEqual(subRunOptionsFrom({ subruns: '5' }, 'help'), { maxParallel: 5 });
    assert.deepEqual(subRunOptionsFrom({ subruns: '16', 'subrun-depth': '3' }, 'help'), {
      maxParallel: 16,
      maxDepth: 3,
    });
  });

  test('reach the input of run and start, and the run template of batch and schedule', () => {
    assert.deepEqual(runInputFrom('Who?', { subruns: '3', 'max-calls': '20' }, 'help'), {
      question: 'Who?',
      limits: { maxModelCalls: 20 },
      subruns: { maxParallel: 3 },
    });
    assert.deepEqual(batchRunTemplateFrom({ subruns: '2', 'subrun-depth': '2' }, 'help'), {
      subruns: { maxParallel: 2, maxDepth: 2 },
    });
  });

  test.each([
    [{ subruns: '0' }, /--subruns must be a whole number from 1 to 16, got "0"/],
    [{ subruns: '17' }, /--subruns must be a whole number from 1 to 16, got "17"/],
    [{ subruns: '2.5' }, /--subruns must be a whole number from 1 to 16, got "2.5"/],
    [{ subruns: 'many' }, /--subruns must be a whole number from 1 to 16, got "many"/],
    [{ subruns: '' }, /--subruns must be a whole number/],
    [{ subruns: '2', 'subrun-depth': '4' }, /--subrun-depth must be a whole number from 1 to 3, got "4"/],
    [{ subruns: '2', 'subrun-depth': '0' }, /--subrun-depth must be a whole number from 1 to 3/],
    [{ 'subrun-depth': '2' }, /--subrun-depth needs --subruns N/],
  ])('refuse %j with a usage error', (values, message) => {
    for (const read of [
      () => subRunOptionsFrom(values, 'help'),
      () => runInputFrom('q', values, 'help'),
      () => batchRunTemplateFrom(values, 'help'),
    ])
      assert.throws(read, (error: unknown) => error instanceof UsageError && message.test(error.message));
  });
});
