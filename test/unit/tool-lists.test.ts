import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { batchRunTemplateFrom } from '../../src/cli/batch-preparation';
import { runInputFrom } from '../../src/cli/start-run';
import { loadEnabledTools } from '../../src/config/enabled-tools-config';
import { toolNamesFromList } from '../../src/core/tool-spec';

/* `--tools` and `REACT_AGENT_TOOLS` read a tool list the same way: `none` is no tools. */

describe('tool lists', () => {
  test('comma-separated names are trimmed; none and empty lists are no tools', () => {
    assert.deepEqual(toolNamesFromList('search, visit ,python'), ['search', 'visit', 'python']);
    assert.deepEqual(toolNamesFromList('none'), []);
    assert.deepEqual(toolNamesFromList(' none '), []);
    assert.deepEqual(toolNamesFromList(' , '), []);
    assert.deepEqual(toolNamesFromList('lookup'), ['lookup']);
  });

  test('react-agent run --tools none starts a run without tools, as REACT_AGENT_TOOLS=none gives a worker none', () => {
    assert.deepEqual(runInputFrom('q', { tools: 'none' }, 'help').tools, []);
    assert.deepEqual(runInputFrom('q', { tools: 'search,visit' }, 'help').tools, ['search', 'visit']);
    assert.equal(runInputFrom('q', {}, 'help').tools, undefined);
    assert.deepEqual(batchRunTemplateFrom({ tools: 'none' }, 'help').tools, []);
    assert.deepEqual(loadEnabledTools({ REACT_AGENT_TOOLS: 'none' }), []);
  });
});
