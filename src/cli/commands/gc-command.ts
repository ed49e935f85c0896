import { parseArgs } from 'node:util';
import { openCliContext, printJson } from '../cli-context';
import { parseDuration } from '../schedule-spec';
import { collectTranscriptGarbage, type RetentionSummary } from '../transcript-retention';
import { UsageError } from '../usage-error';

export const gcHelp = `Usage: react-agent gc --older-than DURATION [--dry-run] [--json]

Removes the transcripts (manifests, messages, stored tool outputs) of research runs that closed
longer ago than DURATION, from the configured transcript store (REACT_AGENT_TRANSCRIPT_DIR or
REACT_AGENT_TRANSCRIPT_STORE=s3://...). A blob stays when an open run or one closed more
recently (of any workflow type: runs, batches, evaluations) references it, or when it was
written within DURATION (runs in flight). Runs whose history Temporal already deleted are
unknown to gc: their blobs stay.

  --older-than D   e.g. 30d, 12h, 90m, 1h30m (required)
  --dry-run        count what would go; remove nothing
  --json           print the summary as JSON`;

/** A byte count for people: `1.2 MiB`. */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** The summary `gc` prints. */
export function formatRetentionSummary(summary: RetentionSummary, olderThan: string): string {
  const removed = summary.dryRun ? 'would be removed' : 'removed';
  return [
    `${summary.dryRun ? 'Dry run: nothing was removed. ' : ''}Closed runs older than ${olderThan} (closed before ${summary.cutoff.toISOString()}): ${summary.oldRuns}; open or newer runs: ${summary.keptRuns}`,
    `Manifests: ${summary.manifests.removed} ${removed}, ${summary.manifests.kept} kept`,
    `Blobs: ${summary.blobs.removed} ${removed}, ${summary.blobs.kept} kept`,
    `Kept: ${summary.keptBecause.referenced} referenced by an open or newer run, ${summary.keptBecause.recent} written within ${olderThan}`,
    `${summary.dryRun ? 'Would free' : 'Freed'}: ${formatBytes(summary.bytesFreed)}${summary.bytesFreed >= 1024 ? ` (${summary.bytesFreed} bytes)` : ''}`,
  ].join('\n');
}

/** Reads gc's command line. @throws UsageError (exit 2) on a missing or malformed --older-than, an unknown option or a stray argument. */
export function parseGcArguments(argumentsList: string[]): {
  olderThanMs: number;
  olderThan: string;
  dryRun: boolean;
  json: boolean;
} {
  let parsed;
  try {
    parsed = parseArgs({
      args: argumentsList,
      allowPositionals: true,
      options: { 'older-than': { type: 'string' }, 'dry-run': { type: 'boolean' }, json: { type: 'boolean' } },
    });
  } catch (error) {
    throw new UsageError((error as Error).message, gcHelp);
  }
  const { values, positionals } = parsed;
  if (positionals.length > 0)
    throw new UsageError(`gc takes no arguments besides its options, got ${JSON.stringify(positionals[0])}.`, gcHelp);
  const olderThan = values['older-than'];
  if (olderThan === undefined) throw new UsageError('gc needs --older-than, e.g. --older-than 30d.', gcHelp);
  const olderThanMs = parseDuration(olderThan);
  if (olderThanMs === undefined || olderThanMs <= 0)
    throw new UsageError(`--older-than "${olderThan}" is not a duration such as 30d, 12h, 90m or 1h30m.`, gcHelp);
  return { olderThanMs, olderThan, dryRun: values['dry-run'] ?? false, json: values.json ?? false };
}

export async function gcCommand(argumentsList: string[]): Promise<number> {
  const options = parseGcArguments(argumentsList);
  const context = await openCliContext();
  try {
    const summary = await collectTranscriptGarbage(context.client, context.store, {
      olderThanMs: options.olderThanMs,
      dryRun: options.dryRun,
    });
    if (options.json) printJson(summary);
    else console.log(formatRetentionSummary(summary, options.olderThan));
    return 0;
  } finally {
    await context.close();
  }
}
