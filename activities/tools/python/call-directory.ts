import { chmodSync, chownSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';

/** A user and group id pair. */
export interface UserIdentity {
  uid: number;
  gid: number;
}

/** The private directory of one python call; removed when the call ends. */
export interface CallDirectory {
  /** The directory itself (`react-agent-python-XXXXXX` under the configured parent). */
  path: string;
  /** The program's working directory and HOME (`/sandbox` inside namespaces). */
  workDirectory: string;
  /** The program's temporary directory (`/tmp` inside namespaces). */
  temporaryDirectory: string;
  /** An empty directory the unshare sandbox mounts its new root on. */
  newRootMountPoint: string;
  /** An empty directory the unshare sandbox mounts the call's writable tmpfs (the write quota) on. */
  writableMountPoint: string;
  /** The program file, inside `workDirectory`. */
  programFile: string;
  /** Synthetic `/etc/passwd` and `/etc/group` naming only the sandbox user. */
  passwdFile: string;
  groupFile: string;
}

/**
 * Creates the call's private directory under `parent` and writes `code` as `main.py` in its
 * working directory. `owner` (when the worker is root and drops to an unprivileged user) gets
 * the working and temporary directories; `sandboxUser` is the identity the program sees.
 */
export function createCallDirectory(
  parent: string,
  code: string,
  owner: UserIdentity | undefined,
  sandboxUser: UserIdentity,
): CallDirectory {
  const path = mkdtempSync(join(parent, 'react-agent-python-'));
  const directory: CallDirectory = {
    path,
    workDirectory: join(path, 'work'),
    temporaryDirectory: join(path, 'tmp'),
    newRootMountPoint: join(path, 'root'),
    writableMountPoint: join(path, 'writable'),
    programFile: join(path, 'work', 'main.py'),
    passwdFile: join(path, 'passwd'),
    groupFile: join(path, 'group'),
  };
  // Traversable (not listable) by an unprivileged owner of the subdirectories.
  chmodSync(path, 0o711);
  for (const subdirectory of [directory.workDirectory, directory.temporaryDirectory]) {
    mkdirSync(subdirectory, { mode: 0o700 });
    if (owner) chownSync(subdirectory, owner.uid, owner.gid);
  }
  mkdirSync(directory.newRootMountPoint, { mode: 0o700 });
  mkdirSync(directory.writableMountPoint, { mode: 0o700 });
  writeFileSync(directory.programFile, code, { mode: 0o644 });
  writeFileSync(
    directory.passwdFile,
    `sandbox:x:${sandboxUser.uid}:${sandboxUser.gid}:sandbox:/sandbox:/usr/sbin/nologin\n`,
    { mode: 0o644 },
  );
  writeFileSync(directory.groupFile, `sandbox:x:${sandboxUser.gid}:\n`, { mode: 0o644 });
  return directory;
}

/** Removes the call's directory and everything the program left in it. */
export async function removeCallDirectory(directory: CallDirectory): Promise<void> {
  await rm(directory.path, { recursive: true, force: true, maxRetries: 3, retryDelay: 50 });
}
