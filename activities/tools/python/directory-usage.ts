import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';

/** What a walk of some directories found: the bytes their files occupy on disk, and how many entries. */
export interface DirectoryUsage {
  bytes: number;
  entries: number;
  /** True when the walk stopped at `maxEntries` (the totals are then lower bounds). */
  cut: boolean;
}

/**
 * The disk space (allocated blocks, so sparse files count what they hold) of everything under
 * `directories`, without following symbolic links, stopping after `maxEntries` entries. Entries
 * that vanish while it walks are skipped. Files deleted while a process holds them open are not
 * seen (they have no name left).
 */
export async function measureDirectories(directories: readonly string[], maxEntries: number): Promise<DirectoryUsage> {
  const usage: DirectoryUsage = { bytes: 0, entries: 0, cut: false };
  const pending = [...directories];
  while (pending.length > 0) {
    const directory = pending.pop() as string;
    let names: string[];
    try {
      names = await readdir(directory);
    } catch {
      continue;
    }
    for (const name of names) {
      if (usage.entries >= maxEntries) {
        usage.cut = true;
        return usage;
      }
      usage.entries += 1;
      try {
        const stats = await lstat(join(directory, name));
        usage.bytes += stats.blocks * 512;
        if (stats.isDirectory()) pending.push(join(directory, name));
      } catch {
        // gone while we looked
      }
    }
  }
  return usage;
}
