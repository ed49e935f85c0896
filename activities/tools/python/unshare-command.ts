import type { MountOperation } from './filesystem-plan';
import { writeQuotaEntries } from './resource-limits';

/**
 * Runs inside the new namespaces as (namespace) root: mounts a small tmpfs on the mount point
 * given as $1 and a tmpfs of $3 bytes ($4 inodes) on $2 (the call's write quota), applies the
 * operations that follow (`dir DEST`, `ro-bind SRC DEST`, `bind SRC DEST`, `symlink TARGET
 * DEST`, `proc DEST`, `dev DEST`; a `bind` copies SRC into the quota's tmpfs and binds the copy,
 * so every writable directory shares the one quota), makes the new root
 * read-only and runs `chroot NEW_ROOT COMMAND...` for the command after `--`, with the PATH it
 * was given (the setup itself uses the system directories). Data only ever arrives as
 * arguments, never inside the script text.
 *
 * The shell stays as the pid namespace's init instead of exec'ing the program: a program that
 * is pid 1 ignores signals it has no handler for (SIGXCPU at the CPU limit would be ignored),
 * and unshare cannot pass a SIGKILL death on. The shell reports a signal death as exit code
 * 128 + n. It keeps its capabilities (and, for a root worker, its uid) while the program has
 * none, so the program can neither signal it nor reach outside the chroot through /proc/1.
 */
export const UNSHARE_SETUP_SCRIPT = `set -eu
umask 022
program_path="$PATH"
PATH=/usr/sbin:/usr/bin:/sbin:/bin
chroot_command=$(command -v chroot)
new_root="$1"; writable="$2"; write_quota="$3"; write_inodes="$4"; shift 4
mount -t tmpfs -o mode=0755,size=1m,nosuid,nodev sandbox-root "$new_root"
mount -t tmpfs -o "mode=0711,size=$write_quota,nr_inodes=$write_inodes,nosuid,nodev" sandbox-writable "$writable"
hostname sandbox 2>/dev/null || { printf sandbox > /proc/sys/kernel/hostname; } 2>/dev/null || true
parent_of() { case "$1" in */*) printf '%s' "\${1%/*}" ;; *) printf . ;; esac; }
while [ "$#" -gt 0 ]; do
  operation="$1"; shift
  case "$operation" in
    --) break ;;
    dir) mkdir -p "$new_root$1"; shift ;;
    ro-bind|bind)
      if [ -d "$1" ]; then mkdir -p "$new_root$2"; else mkdir -p "$(parent_of "$new_root$2")"; : > "$new_root$2"; fi
      source="$1"; options=ro,nosuid,nodev
      if [ "$operation" = bind ]; then
        source="$writable$2"; options=nosuid,nodev
        mkdir -p "$(parent_of "$source")"; cp -a "$1" "$source"
      fi
      mount --bind -o "$options" "$source" "$new_root$2"
      shift 2 ;;
    symlink) ln -s "$1" "$new_root$2"; shift 2 ;;
    proc) mkdir -p "$new_root$1"; mount -t proc -o nosuid,nodev,noexec proc "$new_root$1"; shift ;;
    dev)
      mkdir -p "$new_root$1"
      mount -t tmpfs -o mode=0755,size=64k,nosuid sandbox-dev "$new_root$1"
      for device in null zero full random urandom; do
        : > "$new_root$1/$device"; mount --bind "/dev/$device" "$new_root$1/$device"
      done
      ln -s /proc/self/fd "$new_root$1/fd"
      ln -s /proc/self/fd/0 "$new_root$1/stdin"; ln -s /proc/self/fd/1 "$new_root$1/stdout"; ln -s /proc/self/fd/2 "$new_root$1/stderr"
      mkdir "$new_root$1/shm"; mount -t tmpfs -o mode=1777,size=16m,nosuid,nodev sandbox-shm "$new_root$1/shm"
      shift ;;
    *) echo "sandbox setup: unknown operation $operation" >&2; exit 125 ;;
  esac
done
mount -o remount,bind,ro "$new_root"
PATH="$program_path"
export PATH
set +e
"$chroot_command" "$new_root" "$@"
exit $?
`;

/** What an unshare (util-linux) sandbox is made of. */
export interface UnshareCommandInput {
  /** Absolute path of `unshare`. */
  unshare: string;
  /** Absolute path of a POSIX shell (`/bin/sh`) that runs the setup script. */
  shell: string;
  /** Absolute path of `setpriv`, to make the kernel kill the sandbox when the worker dies; optional. */
  setpriv: string | undefined;
  /** An empty directory the new root is mounted on (only inside the new mount namespace). */
  newRootMountPoint: string;
  /** An empty directory the call's writable tmpfs is mounted on (only inside the new mount namespace). */
  writableMountPoint: string;
  /** Size of that tmpfs: the bytes `/sandbox` and `/tmp` may hold together. */
  writeQuotaBytes: number;
  plan: readonly MountOperation[];
  allowNetwork: boolean;
  /**
   * The worker is root: no user namespace (files keep their real owners, RLIMIT_NPROC counts a
   * real uid) and the inner command must drop to the call's unprivileged user. Otherwise a user
   * namespace maps the worker's uid to root inside, and the inner command must drop every
   * capability.
   */
  privileged: boolean;
  /** What runs in the new root, starting with an absolute path; it starts in `/`. */
  innerCommand: readonly string[];
}

/** The full command line (argv[0] included) for one call. */
export function unshareCommand(input: UnshareCommandInput): string[] {
  const mounts = input.plan.flatMap((operation): string[] => {
    switch (operation.kind) {
      case 'read-only-bind':
        return ['ro-bind', operation.source, operation.destination];
      case 'writable-bind':
        return ['bind', operation.source, operation.destination];
      case 'symlink':
        return ['symlink', operation.target, operation.destination];
      case 'directory':
        return ['dir', operation.destination];
      case 'proc':
        return ['proc', operation.destination];
      case 'devices':
        return ['dev', operation.destination];
    }
  });
  return [
    ...(input.setpriv ? [input.setpriv, '--pdeathsig', 'KILL', '--'] : []),
    input.unshare,
    ...(input.privileged ? [] : ['--map-root-user']),
    '--mount',
    '--propagation',
    'private',
    '--pid',
    '--fork',
    '--kill-child',
    '--ipc',
    '--uts',
    ...(input.allowNetwork ? [] : ['--net']),
    '--',
    input.shell,
    '-c',
    UNSHARE_SETUP_SCRIPT,
    'sandbox-setup',
    input.newRootMountPoint,
    input.writableMountPoint,
    String(Math.floor(input.writeQuotaBytes)),
    String(writeQuotaEntries(input.writeQuotaBytes)),
    ...mounts,
    '--',
    ...input.innerCommand,
  ];
}
