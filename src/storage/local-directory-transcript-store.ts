import { randomUUID } from 'node:crypto';
import { mkdir, open, readFile, readdir, rename, stat, unlink, utimes } from 'node:fs/promises';
import { join } from 'node:path';
import {
  REFERENCE_PREFIX,
  TranscriptMissingError,
  isReference,
  referenceOf,
  type ListableTranscriptStore,
  type StoredBlob,
} from './transcript-store';

/**
 * A transcript store in a local directory: `<directory>/<first two hex digits>/<hash>`.
 * Writes go to a temporary file that is synced and renamed into place, so a reader never sees
 * a partial blob and a crash never leaves one behind under its final name. A put of a text that
 * is already stored refreshes the file's modification time, so retention (`react-agent gc`)
 * counts the blob as just written and leaves it alone.
 */
export class LocalDirectoryTranscriptStore implements ListableTranscriptStore {
  constructor(readonly directory: string) {}

  private pathOf(reference: string): string {
    if (!isReference(reference))
      throw new TypeError(`Not a transcript reference: ${JSON.stringify(reference).slice(0, 100)}`);
    const hash = reference.slice(REFERENCE_PREFIX.length);
    return join(this.directory, hash.slice(0, 2), hash);
  }

  async putText(text: string): Promise<string> {
    const bytes = Buffer.from(text, 'utf8');
    const reference = referenceOf(bytes);
    const path = this.pathOf(reference);
    let stored = false;
    try {
      await stat(path);
      stored = true;
    } catch {
      // not there yet
    }
    if (stored) {
      const now = new Date();
      await utimes(path, now, now).catch(() => undefined);
      return reference;
    }
    await mkdir(join(path, '..'), { recursive: true });
    const temporaryPath = `${path}.${randomUUID()}.tmp`;
    const handle = await open(temporaryPath, 'w');
    try {
      await handle.writeFile(bytes);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await rename(temporaryPath, path);
    return reference;
  }

  async getText(reference: string): Promise<string> {
    try {
      return await readFile(this.pathOf(reference), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT')
        throw new TranscriptMissingError(reference, this.directory);
      throw error;
    }
  }

  async *listBlobs(): AsyncIterable<StoredBlob> {
    let shards: string[];
    try {
      shards = await readdir(this.directory);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw error;
    }
    for (const shard of shards.filter((name) => /^[0-9a-f]{2}$/.test(name)).sort()) {
      let names: string[];
      try {
        names = await readdir(join(this.directory, shard));
      } catch (error) {
        if (['ENOENT', 'ENOTDIR'].includes((error as NodeJS.ErrnoException).code ?? '')) continue;
        throw error;
      }
      for (const name of names
        .filter((candidate) => /^[0-9a-f]{64}$/.test(candidate) && candidate.startsWith(shard))
        .sort()) {
        try {
          const status = await stat(join(this.directory, shard, name));
          if (status.isFile())
            yield {
              reference: REFERENCE_PREFIX + name,
              sizeBytes: status.size,
              lastModified: new Date(status.mtimeMs),
            };
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
        }
      }
    }
  }

  async deleteBlob(reference: string): Promise<void> {
    try {
      await unlink(this.pathOf(reference));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}
