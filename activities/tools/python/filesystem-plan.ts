import { existsSync, lstatSync, readdirSync, readlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { isInside } from './python-installation';

/** Where the call's private working directory appears inside a sandbox (also `HOME` and the current directory). */
export const SANDBOX_WORK_DIRECTORY = '/sandbox';

/** One step in building a sandbox's root filesystem, applied in order to an empty root. */
export type MountOperation =
  | { kind: 'read-only-bind'; source: string; destination: string }
  | { kind: 'writable-bind'; source: string; destination: string }
  | { kind: 'symlink'; target: string; destination: string }
  | { kind: 'directory'; destination: string }
  | { kind: 'proc'; destination: string }
  | { kind: 'devices'; destination: string };

/** What a sandbox's root filesystem is built from. */
export interface FilesystemPlanInput {
  /** Host directories the interpreter needs, bound read-only at the same paths. */
  pythonDirectories: readonly string[];
  /** The call's private working directory (host path), bound writable at `/sandbox`. */
  workDirectory: string;
  /** The call's private temporary directory (host path), bound writable at `/tmp`. */
  temporaryDirectory: string;
  /** Files with the sandbox's own user and group, bound read-only over `/etc/passwd` and `/etc/group`. */
  passwdFile: string;
  groupFile: string;
  /** When true, the files name resolution and TLS need (`/etc/resolv.conf`, `/etc/ssl`, ...) are visible too. */
  allowNetwork: boolean;
}

/** Top-level system directories: bound read-only when they are directories, recreated when symlinks (merged /usr). */
const SYSTEM_DIRECTORIES = ['/usr', '/bin', '/sbin', '/lib', '/lib32', '/lib64', '/libx32'];

/** What python and the dynamic loader read from /etc. Nothing else of the host's /etc is visible. */
const ETC_ENTRIES = [
  'ld.so.cache',
  'ld.so.conf',
  'ld.so.conf.d',
  'alternatives',
  'localtime',
  'timezone',
  'mime.types',
  'matplotlibrc',
  'fonts',
];

/** Only with network access: name resolution and certificates. */
const NETWORK_ETC_ENTRIES = [
  'resolv.conf',
  'hosts',
  'host.conf',
  'gai.conf',
  'nsswitch.conf',
  'ssl',
  'ca-certificates',
  'ca-certificates.conf',
  'pki',
];

/**
 * The sandbox's root: read-only system directories, a few files of /etc, the interpreter's
 * directories, a fresh /proc and /dev, a private /tmp and /sandbox, and synthetic
 * /etc/passwd and /etc/group. Everything else of the host (home directories, the project,
 * /var, /run, the rest of /etc) does not exist inside.
 */
export function buildFilesystemPlan(input: FilesystemPlanInput): MountOperation[] {
  const operations: MountOperation[] = [];
  const created = new Set<string>(['/']);
  const readOnlyRoots: string[] = [];

  const ensureParents = (destination: string) => {
    const missing: string[] = [];
    for (let parent = dirname(destination); !created.has(parent); parent = dirname(parent)) missing.unshift(parent);
    for (const directory of missing) {
      operations.push({ kind: 'directory', destination: directory });
      created.add(directory);
    }
  };
  const add = (operation: MountOperation) => {
    ensureParents(operation.destination);
    operations.push(operation);
    created.add(operation.destination);
  };

  for (const directory of SYSTEM_DIRECTORIES) {
    const kind = lstatKind(directory);
    if (kind === 'symlink') add({ kind: 'symlink', target: readlinkSync(directory), destination: directory });
    if (kind === 'directory') {
      add({ kind: 'read-only-bind', source: directory, destination: directory });
      readOnlyRoots.push(directory);
    }
  }

  const etcEntries = [...ETC_ENTRIES, ...pythonEtcEntries(), ...(input.allowNetwork ? NETWORK_ETC_ENTRIES : [])];
  for (const entry of etcEntries) {
    const path = join('/etc', entry);
    if (existsSync(path)) add({ kind: 'read-only-bind', source: path, destination: path });
  }
  add({ kind: 'read-only-bind', source: input.passwdFile, destination: '/etc/passwd' });
  add({ kind: 'read-only-bind', source: input.groupFile, destination: '/etc/group' });

  add({ kind: 'proc', destination: '/proc' });
  add({ kind: 'devices', destination: '/dev' });
  add({ kind: 'writable-bind', source: input.temporaryDirectory, destination: '/tmp' });
  add({ kind: 'writable-bind', source: input.workDirectory, destination: SANDBOX_WORK_DIRECTORY });

  for (const directory of input.pythonDirectories) {
    // Never the whole host: a sys.path entry of "/" is skipped rather than bound.
    if (directory === '/' || readOnlyRoots.some((root) => isInside(directory, root))) continue;
    add({ kind: 'read-only-bind', source: directory, destination: directory });
  }
  return operations;
}

/** Debian's per-version python configuration (`/etc/python3.11`, ...), which its sitecustomize reads. */
function pythonEtcEntries(): string[] {
  try {
    return readdirSync('/etc').filter((entry) => /^python\d/.test(entry));
  } catch {
    return [];
  }
}

function lstatKind(path: string): 'symlink' | 'directory' | 'other' | 'missing' {
  try {
    const stats = lstatSync(path);
    return stats.isSymbolicLink() ? 'symlink' : stats.isDirectory() ? 'directory' : 'other';
  } catch {
    return 'missing';
  }
}
