import type { Client } from '@temporalio/client';
import type { ListableTranscriptStore, StoredBlob } from '../storage/transcript-store';
import { forEachAtMost } from '../core/task-slots';

/**
 * Retention for the transcript store (`react-agent gc`). A blob may go only when all of these hold:
 *
 * 1. it is reachable from a closed `researchAgent` execution that closed before the cutoff and
 *    that Temporal still knows (its history is read: every `sha256:…` reference in it, then every
 *    reference inside those blobs, transitively: manifests → messages → stored tool outputs);
 * 2. it is not reachable the same way from any execution of any workflow type (runs, batches,
 *    evaluations) that is open or closed after the cutoff, nor from an older execution that
 *    shares a workflow id with one of those (a chain continued as new, a reused id);
 * 3. it was last written before the cutoff (the local directory refreshes that time when a put
 *    finds the blob already there), which protects runs in flight whose newest blobs history does
 *    not name yet.
 *
 * Blobs of runs whose history Temporal already deleted (beyond the namespace's retention) are
 * unknown to this and stay: nothing can tell them from blobs something else still needs.
 */

/** One workflow execution, as visibility lists it. */
export interface ListedExecution {
  workflowId: string;
  runId: string;
  type: string;
}

/** What retention decided, and (unless a dry run) did. */
export interface RetentionSummary {
  /** Runs closed before this are old; blobs written after it stay. */
  cutoff: Date;
  dryRun: boolean;
  /** `researchAgent` executions closed before the cutoff whose blobs were considered. */
  oldRuns: number;
  /** Executions (any type) open or closed after the cutoff, plus old ones sharing their workflow id. */
  keptRuns: number;
  manifests: { removed: number; kept: number };
  /** Blobs other than conversation manifests: messages, tool outputs, summaries. */
  blobs: { removed: number; kept: number };
  /** Of the kept ones: how many a kept run references, how many were written after the cutoff. */
  keptBecause: { referenced: number; recent: number };
  /** Bytes of the removed (or, on a dry run, removable) blobs. */
  bytesFreed: number;
}

/** The decision before anything is deleted. */
export interface RetentionPlan {
  remove: StoredBlob[];
  /** Which of `remove` are conversation manifests (deleted last, so a crash never leaves a manifest whose blobs are unknown). */
  manifests: Set<string>;
  kept: { reference: string; manifest: boolean; because: 'referenced' | 'recent' }[];
}

const REFERENCE_PATTERN = /sha256:[0-9a-f]{64}/g;

/** Every `sha256:…` reference in a text, once each, in order of first appearance. */
export function referencesIn(text: string): string[] {
  return [...new Set(text.match(REFERENCE_PATTERN) ?? [])];
}

/** Every reference anywhere in a value: strings, and byte arrays (history payloads) read as UTF-8. */
export function referencesInValue(value: unknown, into: Set<string> = new Set()): Set<string> {
  const seen = new Set<object>();
  const visit = (item: unknown): void => {
    if (typeof item === 'string') {
      for (const reference of referencesIn(item)) into.add(reference);
      return;
    }
    if (!item || typeof item !== 'object' || seen.has(item)) return;
    seen.add(item);
    if (ArrayBuffer.isView(item)) {
      for (const reference of referencesIn(Buffer.from(item.buffer, item.byteOffset, item.byteLength).toString('utf8')))
        into.add(reference);
      return;
    }
    for (const child of Array.isArray(item) ? item : Object.values(item)) visit(child);
  };
  visit(value);
  return into;
}

/**
 * The blobs reachable from `roots`: each root, and every reference in the text of every blob
 * reached, transitively. A reference that is not in the store (never a blob: a hash quoted in a
 * web page; or already removed) is skipped; any other read failure (the store is down) rejects,
 * since an incomplete kept set could remove what a kept run needs.
 *
 * @returns the reachable references that are stored, each with whether it is a conversation manifest.
 */
export async function reachableBlobs(
  store: ListableTranscriptStore,
  roots: Iterable<string>,
  concurrency = 8,
): Promise<Map<string, { manifest: boolean }>> {
  const reached = new Map<string, { manifest: boolean }>();
  const visited = new Set<string>();
  let frontier = [...new Set(roots)];
  while (frontier.length > 0) {
    for (const reference of frontier) visited.add(reference);
    const found: string[] = [];
    await forEachAtMost(frontier, concurrency, async (reference) => {
      let text: string;
      try {
        text = await store.getText(reference);
      } catch (error) {
        const name = (error as Error | undefined)?.name;
        if (name === 'TranscriptMissingError') return;
        if (name === 'TranscriptCorruptError') {
          reached.set(reference, { manifest: false });
          return;
        }
        throw error;
      }
      reached.set(reference, { manifest: isConversationManifest(text) });
      for (const child of referencesIn(text)) if (!visited.has(child)) found.push(child);
    });
    frontier = [...new Set(found)].filter((reference) => !visited.has(reference));
  }
  return reached;
}

function isConversationManifest(text: string): boolean {
  if (!text.startsWith('{"kind":"conversation"')) return false;
  try {
    const parsed = JSON.parse(text) as { kind?: unknown; messages?: unknown };
    return parsed.kind === 'conversation' && Array.isArray(parsed.messages);
  } catch {
    return false;
  }
}

/**
 * Decides what goes: blobs reachable from the old roots, not reachable from the kept roots, and
 * last written before `cutoff`. Reads the store; deletes nothing.
 */
export async function planRetention(
  store: ListableTranscriptStore,
  options: { oldRoots: Iterable<string>; keptRoots: Iterable<string>; cutoff: Date; concurrency?: number },
): Promise<RetentionPlan> {
  const concurrency = options.concurrency ?? 8;
  const candidates = await reachableBlobs(store, options.oldRoots, concurrency);
  const kept =
    candidates.size === 0
      ? new Map<string, { manifest: boolean }>()
      : await reachableBlobs(store, options.keptRoots, concurrency);
  const listed = new Map<string, StoredBlob>();
  if (candidates.size > 0)
    for await (const blob of store.listBlobs()) if (candidates.has(blob.reference)) listed.set(blob.reference, blob);
  const plan: RetentionPlan = { remove: [], manifests: new Set(), kept: [] };
  for (const [reference, { manifest }] of candidates) {
    const blob = listed.get(reference);
    if (!blob) continue; // read a moment ago, gone now: someone else removed it
    if (kept.has(reference)) plan.kept.push({ reference, manifest, because: 'referenced' });
    else if (blob.lastModified.getTime() >= options.cutoff.getTime())
      plan.kept.push({ reference, manifest, because: 'recent' });
    else {
      plan.remove.push(blob);
      if (manifest) plan.manifests.add(reference);
    }
  }
  return plan;
}

/** Deletes what the plan removes: other blobs first, manifests last. */
export async function applyRetention(
  store: ListableTranscriptStore,
  plan: RetentionPlan,
  concurrency = 8,
): Promise<void> {
  const leaves = plan.remove.filter((blob) => !plan.manifests.has(blob.reference));
  const manifests = plan.remove.filter((blob) => plan.manifests.has(blob.reference));
  await forEachAtMost(leaves, concurrency, (blob) => store.deleteBlob(blob.reference));
  await forEachAtMost(manifests, concurrency, (blob) => store.deleteBlob(blob.reference));
}

/** Counts a plan for the summary. */
export function summarisePlan(
  plan: RetentionPlan,
  counts: { cutoff: Date; dryRun: boolean; oldRuns: number; keptRuns: number },
): RetentionSummary {
  const removedManifests = plan.manifests.size;
  return {
    ...counts,
    manifests: { removed: removedManifests, kept: plan.kept.filter((entry) => entry.manifest).length },
    blobs: {
      removed: plan.remove.length - removedManifests,
      kept: plan.kept.filter((entry) => !entry.manifest).length,
    },
    keptBecause: {
      referenced: plan.kept.filter((entry) => entry.because === 'referenced').length,
      recent: plan.kept.filter((entry) => entry.because === 'recent').length,
    },
    bytesFreed: plan.remove.reduce((total, blob) => total + blob.sizeBytes, 0),
  };
}

/** Visibility queries for the two sides of the cutoff. */
export function retentionQueries(cutoff: Date): { old: string; kept: string } {
  const time = cutoff.toISOString();
  return {
    old: `WorkflowType = 'researchAgent' AND ExecutionStatus != 'Running' AND CloseTime < '${time}'`,
    kept: `ExecutionStatus = 'Running' OR CloseTime >= '${time}'`,
  };
}

async function listExecutions(client: Client, query: string): Promise<ListedExecution[]> {
  const executions: ListedExecution[] = [];
  for await (const execution of client.workflow.list({ query }))
    executions.push({ workflowId: execution.workflowId, runId: execution.runId, type: execution.type });
  return executions;
}

/** Every reference in an execution's history (inputs, results, activity results, memo, search attributes). */
export async function historyReferences(client: Client, execution: ListedExecution): Promise<Set<string>> {
  try {
    const history = await client.workflow.getHandle(execution.workflowId, execution.runId).fetchHistory();
    return referencesInValue(history.events ?? []);
  } catch (error) {
    // Listed a moment ago, deleted since by Temporal's own retention: it references nothing any more.
    if ((error as Error | undefined)?.name === 'WorkflowNotFoundError') return new Set();
    throw error;
  }
}

/** Options of {@link collectTranscriptGarbage}. */
export interface TranscriptGarbageOptions {
  /** Runs closed longer ago than this are old; blobs written more recently than this always stay. */
  olderThanMs: number;
  /** Decide and count, delete nothing. Default false. */
  dryRun?: boolean;
  /** The current time. Default: the wall clock. */
  now?: Date;
  /** How many histories and blobs are read (and deleted) at once. Default 8. */
  concurrency?: number;
}

/** `react-agent gc`: lists executions on both sides of the cutoff, plans, and (unless a dry run) deletes. */
export async function collectTranscriptGarbage(
  client: Client,
  store: ListableTranscriptStore,
  options: TranscriptGarbageOptions,
): Promise<RetentionSummary> {
  const concurrency = options.concurrency ?? 8;
  const cutoff = new Date((options.now ?? new Date()).getTime() - options.olderThanMs);
  const queries = retentionQueries(cutoff);
  // The kept side is listed first: a run that closes in between is then kept (open at the first
  // listing) and not old (its close time is after the cutoff) either way.
  const newer = await listExecutions(client, queries.kept);
  const listedOld = await listExecutions(client, queries.old);
  const keptIds = new Set(newer.map((execution) => execution.workflowId));
  const old = listedOld.filter((execution) => !keptIds.has(execution.workflowId));
  const keptExecutions = [...newer, ...listedOld.filter((execution) => keptIds.has(execution.workflowId))];
  const oldRoots = new Set<string>();
  const keptRoots = new Set<string>();
  if (old.length > 0) {
    await forEachAtMost(old, concurrency, async (execution) => {
      for (const reference of await historyReferences(client, execution)) oldRoots.add(reference);
    });
    await forEachAtMost(keptExecutions, concurrency, async (execution) => {
      for (const reference of await historyReferences(client, execution)) keptRoots.add(reference);
    });
  }
  const plan = await planRetention(store, { oldRoots, keptRoots, cutoff, concurrency });
  if (!options.dryRun) await applyRetention(store, plan, concurrency);
  return summarisePlan(plan, {
    cutoff,
    dryRun: options.dryRun ?? false,
    oldRuns: old.length,
    keptRuns: keptExecutions.length,
  });
}
