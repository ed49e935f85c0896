import { createHash, randomUUID } from 'node:crypto';
import { mkdir, open, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { REFERENCE_PREFIX, TranscriptMissingError, isReference, type TranscriptStore } from './transcript-store';

/**
 * A transcript store in a local directory: `<directory>/<first two hex digits>/<hash>`.
 * Writes go to a temporary file that is synced and renamed into place, so a reader never sees
 * a partial blob and a crash never leaves one behind under its final name.
 */
export class LocalDirectoryTranscriptStore implements TranscriptStore {
  constructor(readonly directory: string) {}

  private pathOf(reference: string): string {
    if (!isReference(reference)) throw new TypeError(`Not a transcript reference: ${JSON.stringify(reference).slice(0, 100)}`);
    const hash = reference.slice(REFERENCE_PREFIX.length);
    return join(this.directory, hash.slice(0, 2), hash);
  }

  async putText(text: string): Promise<string> {
    const bytes = Buffer.from(text, 'utf8');
    const reference = REFERENCE_PREFIX + createHash('sha256').update(bytes).digest('hex');
    const path = this.pathOf(reference);
    try {
      await stat(path);
      return reference;
    } catch {
      // not there yet
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
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') throw new TranscriptMissingError(reference, this.directory);
      throw error;
    }
  }
}
