import { open, realpath, stat } from 'node:fs/promises';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ToolInputError } from '../tool-definition';

/** A local file read for the visit tool. */
export interface LocalFile {
  /** The file's real path (symbolic links resolved). */
  path: string;
  /** At most `maxBytes` of its content. */
  body: Buffer;
  /** True when the file is longer than `maxBytes`. */
  truncated: boolean;
}

/** True when `target` is `directory` itself or inside it. */
function isInside(directory: string, target: string): boolean {
  const path = relative(directory, target);
  return path === '' || (!path.startsWith(`..${sep}`) && path !== '..' && !isAbsolute(path));
}

/** The candidate paths of a `file://` URL or a plain path; relative paths try each directory. */
function candidatePaths(reference: string, directories: readonly string[]): string[] {
  if (/^file:/i.test(reference)) {
    try {
      return [fileURLToPath(reference)];
    } catch (error) {
      throw new ToolInputError(`${reference} is not a valid file address: ${(error as Error).message}`);
    }
  }
  if (isAbsolute(reference)) return [reference];
  return directories.map((directory) => resolve(directory, reference));
}

/**
 * Reads a local file named by a `file://` URL or a path, but only when its real path (after
 * symbolic links) lies inside one of `directories`; relative paths are looked up in each
 * directory in turn. Reads at most `maxBytes`.
 *
 * @throws ToolInputError when local files are not enabled, the path is outside the allowed
 *   directories, or it is not a readable file.
 */
export async function readLocalFile(
  reference: string,
  directories: readonly string[],
  maxBytes: number,
): Promise<LocalFile> {
  if (!directories.length) {
    throw new ToolInputError(
      `${reference} is a local file, and reading local files is not enabled (an operator can allow directories with REACT_AGENT_VISIT_FILE_DIRS).`,
    );
  }
  const lexicalDirectories = directories.map((directory) => resolve(directory));
  const realDirectories = await Promise.all(
    lexicalDirectories.map((directory) => realpath(directory).catch(() => directory)),
  );
  const outside = `${reference} is outside the directories the visit tool may read (${directories.join(', ')})`;
  let lastProblem = `${reference} does not exist`;
  for (const candidate of candidatePaths(reference, directories)) {
    // Refuse outside paths before touching the file system, so nothing about them leaks.
    if (![...lexicalDirectories, ...realDirectories].some((directory) => isInside(directory, resolve(candidate)))) {
      lastProblem = outside;
      continue;
    }
    let real: string;
    try {
      real = await realpath(candidate);
    } catch {
      continue;
    }
    if (!realDirectories.some((directory) => isInside(directory, real))) {
      lastProblem = outside; // a symbolic link pointing out of the allowed directories
      continue;
    }
    const info = await stat(real);
    if (!info.isFile()) {
      lastProblem = `${reference} is not a file`;
      continue;
    }
    const handle = await open(real, 'r');
    try {
      const length = Math.min(info.size, maxBytes);
      const body = Buffer.alloc(length);
      let offset = 0;
      while (offset < length) {
        const { bytesRead } = await handle.read(body, offset, length - offset, offset);
        if (bytesRead === 0) break;
        offset += bytesRead;
      }
      return { path: real, body: body.subarray(0, offset), truncated: info.size > maxBytes };
    } finally {
      await handle.close();
    }
  }
  throw new ToolInputError(lastProblem);
}
