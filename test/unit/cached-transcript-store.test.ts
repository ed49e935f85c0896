import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { appendToConversation, loadConversation, putConversation, putMessage } from '../../src/storage/conversation';
import { CachedTranscriptStore } from '../../src/storage/cached-transcript-store';
import { TranscriptStoreUnavailableError, type TranscriptStore } from '../../src/storage/transcript-store';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

test('a conversation loaded at every model call is read from the store behind once per message', async () => {
  const behind = new MemoryTranscriptStore();
  const cached = new CachedTranscriptStore(behind, { maxCharacters: 1_000_000 });
  let conversation = await putConversation(cached, [
    await putMessage(cached, { role: 'system', content: 'You research.' }),
    await putMessage(cached, { role: 'user', content: 'Who won?' }),
  ]);
  for (let call = 1; call <= 20; call += 1) {
    const messages = await loadConversation(cached, conversation);
    assert.equal(messages.length, 2 * call);
    ({ conversation } = await appendToConversation(cached, conversation, [
      { role: 'assistant', content: `step ${call}` },
      { role: 'user', content: `observation ${call}` },
    ]));
  }
  // Everything was written through the cache, so nothing had to be read back.
  assert.equal(behind.gets.length, 0);

  // A second worker's cache starts empty: it reads each blob once, however often the run loads it.
  const otherWorker = new CachedTranscriptStore(behind, { maxCharacters: 1_000_000 });
  for (let load = 0; load < 5; load += 1) assert.equal((await loadConversation(otherWorker, conversation)).length, 42);
  assert.equal(behind.gets.length, new Set(behind.gets).size, 'no blob read twice');
  assert.equal(behind.gets.length, 43, 'the manifest and its 42 messages, once each');
});

test('the least recently used texts go first once the cache is full; a text larger than the cache is not kept', async () => {
  const behind = new MemoryTranscriptStore();
  const references = await Promise.all(
    ['a'.repeat(40), 'b'.repeat(40), 'c'.repeat(40)].map((text) => behind.putText(text)),
  );
  const [a, b, c] = references as [string, string, string];
  const cached = new CachedTranscriptStore(behind, { maxCharacters: 100 });
  await cached.getText(a);
  await cached.getText(b);
  await cached.getText(a); // a is now the most recently used
  await cached.getText(c); // 120 characters: b goes
  assert.deepEqual(cached.size, { texts: 2, characters: 80 });
  behind.gets.length = 0;
  await cached.getText(a);
  await cached.getText(c);
  assert.deepEqual(behind.gets, [], 'a and c stayed');
  await cached.getText(b);
  assert.deepEqual(behind.gets, [b], 'b was read again');

  const large = await behind.putText('x'.repeat(101));
  assert.equal(await cached.getText(large), 'x'.repeat(101));
  assert.ok(cached.size.characters <= 100);
});

test('concurrent misses share one read; a failed read is not cached, so the next read asks the store again', async () => {
  let reads = 0;
  let down = true;
  const flaky: TranscriptStore = {
    putText: async () => 'sha256:unused',
    getText: async (reference) => {
      reads += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (down)
        throw new TranscriptStoreUnavailableError(
          'The transcript store is unavailable (getting a blob): connection refused.',
        );
      return `text of ${reference}`;
    },
  };
  const cached = new CachedTranscriptStore(flaky, { maxCharacters: 1_000 });
  const failures = await Promise.allSettled([
    cached.getText('sha256:one'),
    cached.getText('sha256:one'),
    cached.getText('sha256:one'),
  ]);
  assert.equal(reads, 1, 'three callers, one read');
  for (const failure of failures)
    assert.equal(failure.status === 'rejected' && (failure.reason as Error).name, 'TranscriptStoreUnavailableError');
  down = false;
  assert.equal(await cached.getText('sha256:one'), 'text of sha256:one');
  assert.equal(await cached.getText('sha256:one'), 'text of sha256:one');
  assert.equal(reads, 2);
});

test('a cache of no size is refused', () => {
  assert.throws(
    () => new CachedTranscriptStore(new MemoryTranscriptStore(), { maxCharacters: 0 }),
    /maxCharacters must be positive/,
  );
});
