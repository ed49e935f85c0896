import assert from 'node:assert/strict';
import { describe, expect, test } from '@jest/globals';
import { formatBytes, formatRetentionSummary, parseGcArguments } from '../../src/cli/commands/gc-command';
import {
  applyRetention,
  planRetention,
  reachableBlobs,
  referencesIn,
  referencesInValue,
  retentionQueries,
  summarisePlan,
} from '../../src/cli/transcript-retention';
import { putConversation, putMessage } from '../../src/storage/conversation';
import { TranscriptStoreUnavailableError } from '../../src/storage/transcript-store';
import { UsageError } from '../../src/cli/usage-error';
import { MemoryTranscriptStore } from '../fakes/memory-transcript-store';

const DAY = 86_400_000;
const now = new Date('2026-12-01T12:00:00.000Z');
const cutoff = new Date(now.getTime() - 30 * DAY);
const longAgo = new Date(now.getTime() - 60 * DAY);

/** Two runs sharing the system prompt: an old closed one (with a stored tool output behind a stub) and a newer one. */
async function twoRuns() {
  const store = new MemoryTranscriptStore();
  const system = await putMessage(store, { role: 'system', content: 'You are a research agent.' });
  const oldQuestion = await putMessage(store, { role: 'user', content: 'old question' });
  const toolOutput = await store.putText('the whole page the tool read');
  const oldReply = await putMessage(store, {
    role: 'user',
    content: `<tool_response>[stored as ${toolOutput}] (a page quoting sha256:${'a'.repeat(64)})</tool_response>`,
  });
  const oldFirstManifest = await putConversation(store, [system, oldQuestion]);
  const oldManifest = await putConversation(store, [system, oldQuestion, oldReply]);
  for (const reference of store.blobs.keys()) store.writtenAt.set(reference, longAgo);
  const newQuestion = await putMessage(store, { role: 'user', content: 'new question' });
  const newManifest = await putConversation(store, [system, newQuestion]);
  store.writtenAt.set(system, longAgo);
  return { store, system, oldQuestion, toolOutput, oldReply, oldFirstManifest, oldManifest, newQuestion, newManifest };
}

describe('references', () => {
  test('referencesIn finds each sha256 reference once; referencesInValue also reads byte arrays (history payloads)', () => {
    const a = `sha256:${'a'.repeat(64)}`;
    const b = `sha256:${'b'.repeat(64)}`;
    assert.deepEqual(referencesIn(`x ${a} y ${a} ${b} sha256:short`), [a, b]);
    const history = [
      { payloads: [{ data: new TextEncoder().encode(JSON.stringify({ transcript: a })) }] },
      { memo: { nested: [b] } },
    ];
    expect([...referencesInValue(history)].sort()).toEqual([a, b]);
  });

  test('reachableBlobs follows manifests to messages and messages to stored tool outputs; a quoted hash that is no blob is skipped', async () => {
    const runs = await twoRuns();
    const reached = await reachableBlobs(runs.store, [runs.oldManifest]);
    expect([...reached.keys()].sort()).toEqual(
      [runs.oldManifest, runs.system, runs.oldQuestion, runs.oldReply, runs.toolOutput].sort(),
    );
    assert.equal(reached.get(runs.oldManifest)?.manifest, true);
    assert.equal(reached.get(runs.oldReply)?.manifest, false);
  });

  test('a store that fails while reading (not a missing blob) rejects instead of giving an incomplete set', async () => {
    const runs = await twoRuns();
    const failing = Object.assign(Object.create(runs.store) as MemoryTranscriptStore, {
      getText: async () => Promise.reject(new TranscriptStoreUnavailableError('down')),
    });
    await assert.rejects(
      reachableBlobs(failing, [runs.newManifest]),
      (error: unknown) => (error as Error).name === 'TranscriptStoreUnavailableError',
    );
  });
});

describe('planRetention', () => {
  test('removes what only old runs reach; keeps a blob a newer run shares and one written after the cutoff', async () => {
    const runs = await twoRuns();
    runs.store.writtenAt.set(runs.toolOutput, new Date(now.getTime() - DAY));
    const plan = await planRetention(runs.store, {
      oldRoots: [runs.oldFirstManifest, runs.oldManifest],
      keptRoots: [runs.newManifest],
      cutoff,
    });
    expect(plan.remove.map((blob) => blob.reference).sort()).toEqual(
      [runs.oldFirstManifest, runs.oldManifest, runs.oldQuestion, runs.oldReply].sort(),
    );
    expect([...plan.manifests].sort()).toEqual([runs.oldFirstManifest, runs.oldManifest].sort());
    expect(plan.kept).toEqual(
      expect.arrayContaining([
        { reference: runs.system, manifest: false, because: 'referenced' },
        { reference: runs.toolOutput, manifest: false, because: 'recent' },
      ]),
    );
    const summary = summarisePlan(plan, { cutoff, dryRun: true, oldRuns: 1, keptRuns: 1 });
    expect(summary.manifests).toEqual({ removed: 2, kept: 0 });
    expect(summary.blobs).toEqual({ removed: 2, kept: 2 });
    expect(summary.keptBecause).toEqual({ referenced: 1, recent: 1 });
    const expectedBytes = [runs.oldFirstManifest, runs.oldManifest, runs.oldQuestion, runs.oldReply].reduce(
      (total, reference) => total + Buffer.byteLength(runs.store.blobs.get(reference) as string),
      0,
    );
    assert.equal(summary.bytesFreed, expectedBytes);
  });

  test('nothing old: nothing is read or removed', async () => {
    const runs = await twoRuns();
    const plan = await planRetention(runs.store, { oldRoots: [], keptRoots: [runs.newManifest], cutoff });
    assert.deepEqual(plan.remove, []);
    assert.equal(runs.store.gets.length, 0);
  });

  test('applyRetention deletes messages and outputs first, manifests last; the kept blobs still read', async () => {
    const runs = await twoRuns();
    const plan = await planRetention(runs.store, {
      oldRoots: [runs.oldManifest],
      keptRoots: [runs.newManifest],
      cutoff,
    });
    const deleted: string[] = [];
    const recording = Object.assign(Object.create(runs.store) as MemoryTranscriptStore, {
      deleteBlob: async (reference: string) => {
        deleted.push(reference);
        await runs.store.deleteBlob(reference);
      },
    });
    await applyRetention(recording, plan, 1);
    assert.equal(deleted.at(-1), runs.oldManifest);
    expect(deleted.sort()).toEqual([runs.oldManifest, runs.oldQuestion, runs.oldReply, runs.toolOutput].sort());
    assert.equal(
      await runs.store.getText(runs.system),
      JSON.stringify({ role: 'system', content: 'You are a research agent.' }),
    );
    assert.ok(runs.store.blobs.has(runs.newManifest) && runs.store.blobs.has(runs.newQuestion));
    assert.ok(runs.store.blobs.has(runs.oldFirstManifest), 'an intermediate manifest no root named stays');
  });
});

describe('gc command line', () => {
  test('durations like 30d, 12h, 90m and 1h30m; --dry-run and --json', () => {
    expect(parseGcArguments(['--older-than', '30d'])).toEqual({
      olderThanMs: 30 * DAY,
      olderThan: '30d',
      dryRun: false,
      json: false,
    });
    assert.equal(parseGcArguments(['--older-than', '12h', '--dry-run']).olderThanMs, 12 * 3_600_000);
    assert.equal(parseGcArguments(['--older-than=90m']).olderThanMs, 90 * 60_000);
    assert.equal(parseGcArguments(['--older-than', '1h30m', '--json']).json, true);
  });

  test.each([
    [[], /gc needs --older-than/],
    [['--older-than', 'thirty days'], /--older-than "thirty days" is not a duration such as 30d/],
    [['--older-than', '0d'], /--older-than "0d" is not a duration/],
    [['--older-than', '30'], /--older-than "30" is not a duration/],
    [['--older-than', '30d', '--force'], /Unknown option '--force'/],
    [['--older-than', '30d', 'extra'], /gc takes no arguments besides its options, got "extra"/],
  ])('bad arguments %j are a usage error (exit 2)', (argumentsList, message) => {
    assert.throws(
      () => parseGcArguments(argumentsList as string[]),
      (error: unknown) => error instanceof UsageError && message.test(error.message),
    );
  });

  test('the summary names the cutoff and what was removed, kept and freed; a dry run says nothing was removed', () => {
    const summary = {
      cutoff,
      dryRun: false,
      oldRuns: 3,
      keptRuns: 2,
      manifests: { removed: 6, kept: 1 },
      blobs: { removed: 20, kept: 4 },
      keptBecause: { referenced: 3, recent: 2 },
      bytesFreed: 3 * 1024 * 1024,
    };
    const text = formatRetentionSummary(summary, '30d');
    assert.match(
      text,
      /^Closed runs older than 30d \(closed before 2026-11-01T12:00:00\.000Z\): 3; open or newer runs: 2$/m,
    );
    assert.match(text, /^Manifests: 6 removed, 1 kept$/m);
    assert.match(text, /^Blobs: 20 removed, 4 kept$/m);
    assert.match(text, /^Kept: 3 referenced by an open or newer run, 2 written within 30d$/m);
    assert.match(text, /^Freed: 3\.0 MiB \(3145728 bytes\)$/m);
    const dry = formatRetentionSummary({ ...summary, dryRun: true }, '30d');
    assert.match(dry, /^Dry run: nothing was removed\./);
    assert.match(dry, /Manifests: 6 would be removed/);
    assert.match(dry, /^Would free: 3\.0 MiB/m);
    assert.equal(formatBytes(512), '512 bytes');
  });

  test('the visibility queries: old research runs closed before the cutoff; everything open or closed after it', () => {
    expect(retentionQueries(cutoff)).toEqual({
      old: "WorkflowType = 'researchAgent' AND ExecutionStatus != 'Running' AND CloseTime < '2026-11-01T12:00:00.000Z'",
      kept: "ExecutionStatus = 'Running' OR CloseTime >= '2026-11-01T12:00:00.000Z'",
    });
  });
});
