import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { commands } from '../../src/cli/main';

/*
 * The CLI's command table loads each command's module only when that command runs: the summaries
 * of the overview are in the table, the help texts and the code in the modules it loads.
 */
describe('the command table', () => {
  test('lists every command in the order of the overview', () => {
    assert.deepEqual(Object.keys(commands), [
      'run',
      'start',
      'follow',
      'status',
      'result',
      'cancel',
      'inject',
      'finish',
      'limits',
      'approve',
      'list',
      'tools',
      'kb',
      'server',
      'worker',
      'stack',
      'gc',
      'eval',
      'batch',
      'schedule',
    ]);
  });

  test('loads each command, with its own help', () => {
    for (const [name, entry] of Object.entries(commands)) {
      const command = entry.load();
      assert.match(command.help, new RegExp(`^Usage: react-agent ${name}\\b`), name);
      assert.equal(typeof command.run, 'function', name);
    }
  });

  test('follow, status, cancel and list take batch ids too', () => {
    assert.match(commands.follow?.load().help ?? '', /Given a batch id: a progress bar/);
    assert.match(commands.status?.load().help ?? '', /Given a batch id: counts by state/);
    assert.match(commands.cancel?.load().help ?? '', /Given a batch id: no new runs start/);
    assert.match(commands.list?.load().help ?? '', /--batches/);
  });
});
