import { realpathSync } from 'node:fs';
import { readdir, realpath, stat } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ToolInputError } from '../tool-definition';

/** A workspace folder as given and as it really is (symbolic links resolved). */
interface WorkspaceDirectory {
  given: string;
  real: string;
}

/** True when `path` is `directory` or inside it (both absolute and normalised). */
export function isInsideDirectory(path: string, directory: string): boolean {
  const fromDirectory = relative(directory, path);
  return (
    fromDirectory === '' ||
    (!fromDirectory.startsWith(`..${sep}`) && fromDirectory !== '..' && !isAbsolute(fromDirectory))
  );
}

/**
 * Confines file paths to workspace folders. Relative paths are read from the first workspace;
 * absolute paths must lie inside one. A path is refused when it leads outside every workspace
 * (`../../etc/passwd`), or when it is a symbolic link (or passes through one) whose real
 * location is outside every workspace. Messages say what to do instead, for the model.
 */
export class WorkspacePathResolver {
  private readonly workspaces: WorkspaceDirectory[];

  /** @param workspaceDirectories Folders files may be read from; the first one anchors relative paths. */
  constructor(workspaceDirectories: readonly string[]) {
    if (workspaceDirectories.length === 0)
      throw new Error('WorkspacePathResolver needs at least one workspace folder.');
    this.workspaces = workspaceDirectories.map((directory) => {
      const given = resolve(directory);
      let real: string;
      try {
        real = realpathSync(given);
      } catch {
        real = given; // created later; checked again when a file is read
      }
      return { given, real };
    });
  }

  /** The folder relative paths are read from. */
  get primaryDirectory(): string {
    return (this.workspaces[0] as WorkspaceDirectory).given;
  }

  /** How a path is shown to the model: relative to the first workspace when inside it. */
  describe(absolutePath: string): string {
    const workspace = this.workspaces[0] as WorkspaceDirectory;
    for (const root of [workspace.given, workspace.real]) {
      if (isInsideDirectory(absolutePath, root)) return relative(root, absolutePath) || '.';
    }
    return absolutePath;
  }

  /**
   * The real absolute path of a readable file inside a workspace.
   * @throws ToolInputError when the path is empty, outside every workspace, a symbolic link out
   *   of them, missing (with the files that are there) or a folder (with its files).
   */
  async resolveFile(requestedPath: string): Promise<string> {
    const requested = requestedPath.trim();
    if (!requested)
      throw new ToolInputError(
        'An empty file path was given; pass paths relative to the workspace, like "reports/2024.pdf".',
      );
    if (requested.includes('\0'))
      throw new ToolInputError(`The path ${JSON.stringify(requested)} contains a NUL character.`);
    if (requested === '~' || requested.startsWith('~/')) {
      throw new ToolInputError(
        `"~" is not expanded: pass paths relative to the workspace, like "${requested.replace(/^~\/?/, '') || 'notes.md'}".`,
      );
    }

    const candidate = isAbsolute(requested) ? resolve(requested) : resolve(this.primaryDirectory, requested);
    if (!this.isInsideSomeWorkspace(candidate)) {
      throw new ToolInputError(
        `Refused ${JSON.stringify(requested)}: it is outside the workspace. Only files inside the workspace can be read; ` +
          `pass a path relative to it (no "..", no absolute paths elsewhere).${await this.listingHint(this.primaryDirectory)}`,
      );
    }

    let real: string;
    try {
      real = await realpath(candidate);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' || (error as NodeJS.ErrnoException).code === 'ENOTDIR') {
        throw new ToolInputError(
          `File not found: ${JSON.stringify(requested)}.${await this.listingHint(await this.nearestExistingFolder(candidate))}`,
        );
      }
      throw error;
    }
    const workspaceRealPaths = await this.realWorkspaceRoots();
    if (!workspaceRealPaths.some((root) => isInsideDirectory(real, root))) {
      throw new ToolInputError(
        `Refused ${JSON.stringify(requested)}: it is a symbolic link (or inside one) that leads outside the workspace. Only files whose real location is inside the workspace can be read.`,
      );
    }

    const information = await stat(real);
    if (information.isDirectory()) {
      throw new ToolInputError(
        `${JSON.stringify(requested)} is a folder; pass the files inside it.${await this.listingHint(real)}`,
      );
    }
    if (!information.isFile()) throw new ToolInputError(`${JSON.stringify(requested)} is not a regular file.`);
    return real;
  }

  /** The workspaces' real locations now (a workspace created after start is resolved here). */
  private realWorkspaceRoots(): Promise<string[]> {
    return Promise.all(this.workspaces.map((workspace) => realpath(workspace.given).catch(() => workspace.real)));
  }

  private isInsideSomeWorkspace(path: string): boolean {
    return this.workspaces.some(
      (workspace) => isInsideDirectory(path, workspace.given) || isInsideDirectory(path, workspace.real),
    );
  }

  /** The closest folder above `path` that exists, stopping at the workspace. */
  private async nearestExistingFolder(path: string): Promise<string> {
    let folder = dirname(path);
    for (;;) {
      const information = await stat(folder).catch(() => undefined);
      if (information?.isDirectory()) return folder;
      const parent = dirname(folder);
      if (parent === folder || !this.isInsideSomeWorkspace(parent)) return this.primaryDirectory;
      folder = parent;
    }
  }

  /** " Files in <folder>: a, b, c." (up to 30 entries), or "" when the folder cannot be listed. */
  private async listingHint(folder: string): Promise<string> {
    try {
      const realFolder = await realpath(folder);
      const roots = await this.realWorkspaceRoots();
      if (!roots.some((root) => isInsideDirectory(realFolder, root))) return '';
      const entries = (await readdir(folder, { withFileTypes: true })).filter((entry) => !entry.name.startsWith('.'));
      const names = entries
        .slice(0, 30)
        .map((entry) => this.describe(join(folder, entry.name)) + (entry.isDirectory() ? '/' : ''));
      if (names.length === 0) return ` The folder ${this.describe(folder)} is empty.`;
      const more = entries.length > names.length ? `, and ${entries.length - names.length} more` : '';
      return ` Files in ${this.describe(folder) === '.' ? 'the workspace' : this.describe(folder)}: ${names.join(', ')}${more}.`;
    } catch {
      return '';
    }
  }
}
