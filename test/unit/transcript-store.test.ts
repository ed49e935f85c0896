import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, test } from '@jest/globals';
import {
  appendToConversation,
  composeMessage,
  loadConversation,
  loadMessageReferences,
  putConversation,
  putMessage,
} from '../../src/storage/conversation';
import { LocalDirectoryTranscriptStore } from '../../src/storage/local-directory-transcript-store';
import { TranscriptMissingError, isReference } from '../../src/storage/transcript-store';
import type { ChatMessage } from '../../src/core/messages';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const scratch = mkdtempSync(join(tmpdir(), 'react-agent-transcript-test-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

let stores = 0;
function freshStore(): LocalDirectoryTranscriptStore {
  stores += 1;
  return new LocalDirectoryTranscriptStore(join(scratch, `store-${stores}`));
}

function filesUnder(directory: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(directory, { withFileTypes: true })) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) found.push(...filesUnder(path));
    else found.push(path);
  }
  return found;
}

const sha256 = (text: string) => `sha256:${createHash('sha256').update(Buffer.from(text, 'utf8')).digest('hex')}`;

describe('LocalDirectoryTranscriptStore', () => {
  test('references are the sha256 of the UTF-8 text, stored under <dir>/<first two hex digits>/<hash>', async () => {
    const store = freshStore();
    const reference = await store.putText('hello transcript');
    assert.equal(reference, sha256('hello transcript'));
    assert.ok(isReference(reference));
    const hash = reference.slice('sha256:'.length);
    const path = join(store.directory, hash.slice(0, 2), hash);
    assert.equal(readFileSync(path, 'utf8'), 'hello transcript');
  });

  test('the same text gives the same reference, written once; different text a different one', async () => {
    const store = freshStore();
    const first = await store.putText('same text');
    const path = filesUnder(store.directory)[0] as string;
    const writtenAs = statSync(path).ino;
    await new Promise((resolve) => setTimeout(resolve, 20));
    const second = await store.putText('same text');
    assert.equal(second, first);
    assert.equal(filesUnder(store.directory).length, 1);
    assert.equal(
      statSync(path).ino,
      writtenAs,
      'a repeated put does not rewrite the blob (same file; only its time is refreshed)',
    );
    assert.notEqual(await store.putText('same text '), first);
    assert.equal(filesUnder(store.directory).length, 2);
  });

  test('concurrent puts of the same text agree and leave one blob', async () => {
    const store = freshStore();
    const text = 'written by several retried activities at once';
    const references = await Promise.all(Array.from({ length: 8 }, () => store.putText(text)));
    assert.equal(new Set(references).size, 1);
    assert.equal(await store.getText(references[0] as string), text);
    assert.equal(filesUnder(store.directory).length, 1);
  });

  test('round trips CJK, emoji, combining marks, the empty string and 5 MB of text', async () => {
    const store = freshStore();
    const samples = [
      '深度研究：时间旅行的历史与未来。日本語のテキスト、한국어 텍스트。',
      'emoji 🧪🚀👩🏽‍🔬 and flags 🇯🇵🇧🇷, astral 𝒳𝒴𝒵',
      'e\u0301 vs é, zero\u200bwidth, RTL \u202eabc',
      '',
      'line one\r\nline two\n\ttabbed\u0000nul',
    ];
    for (const text of samples) {
      const reference = await store.putText(text);
      assert.equal(reference, sha256(text));
      assert.equal(await store.getText(reference), text);
    }
    const big = '研究🧪 research data '.repeat(270_000); // 19 UTF-16 units each: 5.1 M characters, 6.7 MB of UTF-8
    assert.ok(big.length >= 5_000_000);
    const reference = await store.putText(big);
    const back = await store.getText(reference);
    assert.equal(back.length, big.length);
    assert.ok(back === big, 'the 5 MB text comes back unchanged');
  });

  test('a missing reference rejects with TranscriptMissingError naming REACT_AGENT_TRANSCRIPT_DIR', async () => {
    const store = freshStore();
    await store.putText('something else');
    const missing = sha256('never stored');
    await assert.rejects(store.getText(missing), (error: unknown) => {
      assert.ok(error instanceof TranscriptMissingError);
      assert.equal(error.name, 'TranscriptMissingError');
      assert.equal(error.reference, missing);
      assert.ok(error.message.includes(missing));
      assert.ok(error.message.includes(store.directory), 'names the directory it looked in');
      assert.match(error.message, /REACT_AGENT_TRANSCRIPT_DIR/);
      return true;
    });
  });

  test('a store whose directory does not exist yet reports missing blobs the same way', async () => {
    const store = new LocalDirectoryTranscriptStore(join(scratch, 'never-created'));
    await assert.rejects(store.getText(sha256('x')), TranscriptMissingError);
  });

  for (const malformed of [
    '',
    'sha256:',
    'sha256:abc',
    `sha256:${'A'.repeat(64)}`,
    `sha1:${'a'.repeat(64)}`,
    `${'a'.repeat(64)}`,
    `sha256:${'a'.repeat(63)}/`,
    '../../etc/passwd',
    `sha256:../${'a'.repeat(61)}`,
  ]) {
    test(`a malformed reference is refused: ${JSON.stringify(malformed.slice(0, 24))}`, async () => {
      const store = freshStore();
      await assert.rejects(
        store.getText(malformed),
        (error: unknown) => error instanceof TypeError && /Not a transcript reference/.test(error.message),
      );
    });
  }

  test('no temporary files are left behind', async () => {
    const store = freshStore();
    await Promise.all(['a', 'b', 'a', 'c', 'b', 'x'.repeat(100_000)].map((text) => store.putText(text)));
    const files = filesUnder(store.directory);
    assert.equal(files.length, 4);
    assert.deepEqual(
      files.filter((file) => file.endsWith('.tmp') || file.includes('.tmp')),
      [],
    );
    for (const file of files) assert.match(file.split(/[\\/]/).at(-1) as string, /^[0-9a-f]{64}$/);
  });

  test('the in-memory test store uses the same references', async () => {
    const local = freshStore();
    const memory = new MemoryTranscriptStore();
    for (const text of ['', 'abc', '研究🧪']) assert.equal(await memory.putText(text), await local.putText(text));
    await assert.rejects(memory.getText(sha256('missing')), TranscriptMissingError);
    await assert.rejects(memory.getText('sha256:nope'), TypeError);
  });
});

describe('LocalDirectoryTranscriptStore listing and deleting (for gc)', () => {
  async function listed(store: LocalDirectoryTranscriptStore) {
    const blobs = [];
    for await (const blob of store.listBlobs()) blobs.push(blob);
    return blobs;
  }

  test('lists every blob with its size and modification time, and nothing else in the directory', async () => {
    const store = freshStore();
    const first = await store.putText('first');
    const second = await store.putText('the second, longer text');
    mkdirSync(join(store.directory, 'zz'), { recursive: true });
    writeFileSync(join(store.directory, 'zz', 'notes.txt'), 'not a blob');
    writeFileSync(join(store.directory, 'README'), 'not a blob either');
    writeFileSync(join(store.directory, first.slice(7, 9), `${first.slice(7)}.1234.tmp`), 'an unfinished write');
    const blobs = await listed(store);
    expect(blobs.map((blob) => blob.reference).sort()).toEqual([first, second].sort());
    const byReference = new Map(blobs.map((blob) => [blob.reference, blob]));
    assert.equal(byReference.get(first)?.sizeBytes, 5);
    assert.equal(byReference.get(second)?.sizeBytes, Buffer.byteLength('the second, longer text'));
    assert.ok(Math.abs((byReference.get(first)?.lastModified.getTime() ?? 0) - Date.now()) < 60_000);
  });

  test('a store whose directory does not exist lists nothing', async () => {
    assert.deepEqual(await listed(new LocalDirectoryTranscriptStore(join(scratch, 'never-created'))), []);
  });

  test('deleteBlob removes one blob; deleting it again, or one never stored, is not an error', async () => {
    const store = freshStore();
    const gone = await store.putText('to be removed');
    const stays = await store.putText('to stay');
    await store.deleteBlob(gone);
    await store.deleteBlob(gone);
    await store.deleteBlob(`sha256:${'0'.repeat(64)}`);
    await assert.rejects(store.getText(gone), (error: unknown) => (error as Error).name === 'TranscriptMissingError');
    assert.equal(await store.getText(stays), 'to stay');
    expect((await listed(store)).map((blob) => blob.reference)).toEqual([stays]);
  });

  test('deleteBlob refuses what is not a reference (no path outside the store)', async () => {
    await assert.rejects(freshStore().deleteBlob('../../etc/passwd'), /Not a transcript reference/);
  });

  test('putting a text that is already stored refreshes its modification time (gc then counts it as just written)', async () => {
    const store = freshStore();
    const reference = await store.putText('reused');
    const path = join(store.directory, reference.slice(7, 9), reference.slice(7));
    const longAgo = new Date(Date.now() - 40 * 86_400_000);
    utimesSync(path, longAgo, longAgo);
    expect((await listed(store))[0]?.lastModified.getTime()).toBeLessThan(Date.now() - 39 * 86_400_000);
    await store.putText('reused');
    expect((await listed(store))[0]?.lastModified.getTime()).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('conversation helpers', () => {
  const system: ChatMessage = { role: 'system', content: 'You are a research assistant.' };
  const question: ChatMessage = { role: 'user', content: '誰が最初に月に行きましたか？' };
  const reply: ChatMessage = {
    role: 'assistant',
    content: '<think>Apollo 11.</think>\n<tool_call>{"name":"search","arguments":{}}</tool_call>',
  };

  test('putMessage stores role and content only; putConversation lists them in order', async () => {
    const store = freshStore();
    const extra = { role: 'user', content: 'hi', secret: 'not stored' } as ChatMessage;
    const reference = await putMessage(store, extra);
    assert.deepEqual(JSON.parse(await store.getText(reference)), { role: 'user', content: 'hi' });
    const conversation = await putConversation(store, [
      await putMessage(store, system),
      await putMessage(store, question),
    ]);
    assert.deepEqual(await loadConversation(store, conversation), [system, question]);
  });

  test('appendToConversation writes a new manifest and keeps the earlier one valid', async () => {
    const store = freshStore();
    const systemRef = await putMessage(store, system);
    const questionRef = await putMessage(store, question);
    const first = await putConversation(store, [systemRef, questionRef]);

    const appended = await appendToConversation(store, first, [reply, { role: 'user', content: 'observation' }]);
    assert.notEqual(appended.conversation, first);
    assert.equal(appended.messageReferences.length, 2);
    assert.deepEqual(JSON.parse(await store.getText(appended.messageReferences[0] as string)), reply);
    assert.deepEqual(await loadMessageReferences(store, appended.conversation), [
      systemRef,
      questionRef,
      ...appended.messageReferences,
    ]);
    assert.deepEqual(await loadConversation(store, appended.conversation), [
      system,
      question,
      reply,
      { role: 'user', content: 'observation' },
    ]);

    assert.deepEqual(
      await loadMessageReferences(store, first),
      [systemRef, questionRef],
      'the earlier manifest still lists two messages',
    );
    assert.deepEqual(await loadConversation(store, first), [system, question]);

    const again = await appendToConversation(store, first, [reply, { role: 'user', content: 'observation' }]);
    assert.equal(again.conversation, appended.conversation, 'appending the same messages again is idempotent');
  });

  test('appending nothing gives the same conversation reference', async () => {
    const store = freshStore();
    const first = await putConversation(store, [await putMessage(store, system)]);
    assert.equal((await appendToConversation(store, first, [])).conversation, first);
  });

  test('composeMessage resolves ref parts and joins them with literal parts in order', async () => {
    const store = freshStore();
    const output = await store.putText('Neil Armstrong, 1969 🌕');
    const second = await store.putText('second output');
    const composed = await composeMessage(store, {
      role: 'user',
      parts: [
        { text: '<tool_response>\n' },
        { ref: output },
        { text: '\n</tool_response>\n<tool_response>\n' },
        { ref: second },
        { text: '\n</tool_response>' },
      ],
    });
    assert.deepEqual(composed, {
      role: 'user',
      content:
        '<tool_response>\nNeil Armstrong, 1969 🌕\n</tool_response>\n<tool_response>\nsecond output\n</tool_response>',
    });
  });

  test('composeMessage rejects when a referenced blob is missing', async () => {
    const store = freshStore();
    await assert.rejects(
      composeMessage(store, { role: 'user', parts: [{ ref: sha256('gone') }] }),
      TranscriptMissingError,
    );
  });

  test('a blob that is not a manifest is refused as a conversation', async () => {
    const store = freshStore();
    const message = await putMessage(store, system);
    await assert.rejects(loadMessageReferences(store, message), /is not a conversation manifest/);
    const wrongShape = await store.putText(JSON.stringify({ kind: 'conversation', messages: 'nope' }));
    await assert.rejects(loadConversation(store, wrongShape), /is not a conversation manifest/);
  });
});
