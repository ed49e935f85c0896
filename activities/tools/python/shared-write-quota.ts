import { basename } from 'node:path';
import { writeQuotaEntries } from './resource-limits';

/**
 * Runs as root in a new mount namespace (`unshare --mount`): mounts a tmpfs of $2 bytes ($3
 * inodes) on $1, copies each directory named before `--` into it (as `$1/<its name>`, owner and
 * mode kept), then executes the command after `--`, which binds those copies. Every writable
 * directory of the call then lives in one tmpfs, so the quota is their total, and nothing the
 * program writes reaches the host's disk. Data only ever arrives as arguments.
 */
export const SHARED_WRITE_QUOTA_SCRIPT = `set -eu
writable="$1"; write_quota="$2"; write_inodes="$3"; shift 3
mount -t tmpfs -o "mode=0711,size=$write_quota,nr_inodes=$write_inodes,nosuid,nodev" sandbox-writable "$writable"
while [ "$1" != -- ]; do cp -a "$1" "$writable/\${1##*/}"; shift; done
shift
exec "$@"
`;

/** What a shared write quota is made of. */
export interface SharedWriteQuotaInput {
  /** Absolute paths of `unshare` and a POSIX shell. */
  unshare: string;
  shell: string;
  /** An empty directory the tmpfs is mounted on (only inside the new mount namespace). */
  writableMountPoint: string;
  writeQuotaBytes: number;
  /** The call's writable directories (host paths), copied into the tmpfs. */
  directories: readonly string[];
  /** The sandbox's command line, which must bind {@link sharedCopyOf} of each directory. */
  command: readonly string[];
}

/** Where `directory`'s copy is inside the shared tmpfs mounted on `writableMountPoint`. */
export function sharedCopyOf(writableMountPoint: string, directory: string): string {
  return `${writableMountPoint}/${basename(directory)}`;
}

/** The full command line: `unshare --mount` + the setup script + the sandbox's command. Needs a root worker. */
export function sharedWriteQuotaCommand(input: SharedWriteQuotaInput): string[] {
  return [
    input.unshare,
    '--mount',
    '--propagation',
    'private',
    '--',
    input.shell,
    '-c',
    SHARED_WRITE_QUOTA_SCRIPT,
    'sandbox-write-quota',
    input.writableMountPoint,
    String(Math.floor(input.writeQuotaBytes)),
    String(writeQuotaEntries(input.writeQuotaBytes)),
    ...input.directories,
    '--',
    ...input.command,
  ];
}
