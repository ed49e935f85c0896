import { lstat, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, relative, resolve, sep } from 'node:path';
import { isS3Location } from '../core/s3-url';

/**
 * The folders a worker reads and writes for its clients (`REACT_AGENT_DATA_ROOTS`, issue 28):
 * every local path a client names in a workflow's input — an evaluation's inputs, its judge prompt
 * file and output, a batch's output — must lie inside one of them, after `..` and symbolic links
 * are resolved. A path outside is refused before anything is read or written, with the same
 * message whether it exists or not, so a client learns neither a file's contents nor whether it
 * is there. `s3://` locations are not folders of this machine: what they reach is bounded by the
 * worker's S3 credentials, not by these roots.
 */

/** Longest part of a client's path quoted in a refusal (a path is the client's own text; a huge one is not echoed whole). */
const QUOTED_PATH_CHARACTERS = 300;

/** A client named a local path outside the worker's data roots (or one that cannot be resolved). */
export class PathOutsideDataRootsError extends Error {
  override readonly name = 'PathOutsideDataRootsError';

  constructor(
    readonly path: string,
    readonly roots: readonly string[],
    readonly what: string,
  ) {
    super(outsideDataRootsMessage(path, roots, what));
  }
}

/**
 * The refusal's text: names the path as given (never where a symbolic link leads, never whether it
 * exists) and the roots, and says which variable widens them.
 */
export function outsideDataRootsMessage(path: string, roots: readonly string[], what: string): string {
  const shown =
    path.length > QUOTED_PATH_CHARACTERS
      ? `${path.slice(0, QUOTED_PATH_CHARACTERS)}… (${path.length} characters)`
      : path;
  const allowed = roots.length ? roots.join(', ') : 'none';
  return `${what} ${JSON.stringify(shown)} is outside the folders this worker reads and writes for clients (${allowed}); give a path inside one of them, or have the operator add its folder to REACT_AGENT_DATA_ROOTS.`;
}

/** True when `path` is `root` or inside it (both absolute and normalised; no file system access). */
export function isInsideRoot(path: string, root: string): boolean {
  const fromRoot = relative(root, path);
  return fromRoot === '' || (fromRoot !== '..' && !fromRoot.startsWith(`..${sep}`) && !isAbsolute(fromRoot));
}

/**
 * The pure decision: whether an absolute, normalised path lies in one of the roots. Callers give
 * the path twice — as written (`..` resolved) and as it really is (symbolic links resolved) — and
 * both must be inside, so neither `..` nor a link leads out.
 */
export function isInsideSomeRoot(path: string, roots: readonly string[]): boolean {
  return roots.some((root) => isInsideRoot(path, root));
}

async function isSymbolicLink(path: string): Promise<boolean> {
  try {
    return (await lstat(path)).isSymbolicLink();
  } catch {
    return false;
  }
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException | undefined)?.code;
}

/**
 * Where `path` really is: the real path of its nearest existing ancestor with the rest appended,
 * so a file not yet written (an output) is checked by the folder it would be written in. A path
 * that exists but cannot be resolved (a dangling symbolic link, a loop) is `undefined`: where it
 * leads is unknown, so it is refused.
 */
export async function realLocationOf(path: string): Promise<string | undefined> {
  const rest: string[] = [];
  for (let current = path; ; current = dirname(current)) {
    try {
      const real = await realpath(current);
      return resolve(real, ...rest.reverse());
    } catch (error) {
      const code = errorCode(error);
      if (code !== 'ENOENT' && code !== 'ENOTDIR') return undefined;
      // ENOENT also for a dangling link: something is there, pointing nowhere known.
      if (await isSymbolicLink(current)) return undefined;
    }
    const parent = dirname(current);
    if (parent === current) return undefined;
    rest.push(basename(current));
  }
}

/** Roots as they really are (a root that does not exist yet is taken as written). */
async function realRoots(roots: readonly string[]): Promise<string[]> {
  return Promise.all(roots.map(async (root) => (await realLocationOf(resolve(root))) ?? resolve(root)));
}

/**
 * Checks that a client's local path lies inside the data roots; `s3://` locations pass.
 * A path outside as written is refused before the file system is touched; one inside as
 * written is resolved (symbolic links, the nearest existing ancestor for a path not yet made)
 * and refused when its real location is outside.
 * @param what How the refusal names the path, e.g. `The evaluation's input`.
 * @throws PathOutsideDataRootsError naming the path as given and the roots.
 */
export async function checkInsideDataRoots(path: string, roots: readonly string[], what: string): Promise<void> {
  if (isS3Location(path)) return;
  const refused = () => new PathOutsideDataRootsError(path, roots, what);
  if (path.includes('\0') || !isAbsolute(path)) throw refused();
  const written = resolve(path);
  const lexicalRoots = roots.map((root) => resolve(root));
  const real = await realRoots(roots);
  if (!isInsideSomeRoot(written, [...lexicalRoots, ...real])) throw refused();
  const location = await realLocationOf(written);
  if (location === undefined || !isInsideSomeRoot(location, real)) throw refused();
}
