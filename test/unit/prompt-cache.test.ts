import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { PromptCache } from '../fakes/prompt-cache';

// The scripted server's play of Anthropic's prompt cache (benchmark:cache relies on it): a
// breakpoint writes its prefix, the next request reads the longest written prefix it shares.

const EPHEMERAL = { type: 'ephemeral' };
const text = (characters: number, cache = false) => ({
  type: 'text',
  text: 'x'.repeat(characters),
  ...(cache ? { cache_control: EPHEMERAL } : {}),
});

describe('PromptCache', () => {
  test('each call reads what the last wrote and writes only what is new; no breakpoints, no cache', () => {
    const cache = new PromptCache();
    const system = [text(4000, true)];
    const first = cache.use({ system, messages: [{ role: 'user', content: [text(400, true)] }] });
    assert.equal(first.cacheReadTokens, 0);
    assert.equal(first.cacheWriteTokens, first.promptTokens);

    const second = cache.use({
      system,
      messages: [
        { role: 'user', content: [text(400)] },
        { role: 'assistant', content: [text(200)] },
        { role: 'user', content: [text(800, true)] },
      ],
    });
    assert.equal(second.cacheReadTokens, first.promptTokens, 'the whole first prompt is read');
    assert.equal(second.cacheWriteTokens, second.promptTokens - first.promptTokens);

    const unmarked = new PromptCache().use({ system: [text(4000)], messages: [{ content: [text(400)] }] });
    assert.deepEqual([unmarked.cacheReadTokens, unmarked.cacheWriteTokens], [0, 0]);
  });
});
