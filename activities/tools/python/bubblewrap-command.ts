import type { MountOperation } from './filesystem-plan';
import { SANDBOX_WORK_DIRECTORY } from './filesystem-plan';
import { sharedCopyOf } from './shared-write-quota';

/** What a bubblewrap (`bwrap`) sandbox is made of. */
export interface BubblewrapCommandInput {
  /** Absolute path of `bwrap`. */
  bubblewrap: string;
  /** The root filesystem, built from an empty tmpfs that is made read-only afterwards. */
  plan: readonly MountOperation[];
  /** The whole environment of the program (bubblewrap starts from an empty one). */
  environment: Readonly<Record<string, string>>;
  /** Keep the host's network namespace. */
  allowNetwork: boolean;
  /**
   * The worker is root: bubblewrap runs without a user namespace (so files keep their real
   * owners and RLIMIT_NPROC counts a real unprivileged uid) and keeps only CAP_SETUID,
   * CAP_SETGID and CAP_SETPCAP for the inner command, which must drop to the call's user.
   */
  privileged: boolean;
  /** Pass `--disable-userns` (bubblewrap 0.8+, unprivileged only): no nested user namespaces. */
  disableNestedUserNamespaces: boolean;
  /**
   * How the writable directories (`/sandbox`, `/tmp`) are bounded. `shared`: bwrap runs inside
   * `sharedWriteQuotaCommand` (a root worker), which holds copies of them in one tmpfs of the
   * quota mounted on `writableMountPoint`; they are bound from there. `each`: each is a tmpfs
   * of `bytes` (bwrap cannot show one tmpfs at two places), with the program (host path)
   * bound read-only at `/sandbox/main.py`.
   */
  writeQuota: { kind: 'shared'; writableMountPoint: string } | { kind: 'each'; bytes: number; programFile: string };
  /** What runs inside, starting with an absolute path. */
  innerCommand: readonly string[];
}

/** The full `bwrap` command line (argv[0] included) for one call. */
export function bubblewrapCommand(input: BubblewrapCommandInput): string[] {
  const namespaces = [
    ...(input.privileged ? [] : ['--unshare-user', ...(input.disableNestedUserNamespaces ? ['--disable-userns'] : [])]),
    '--unshare-pid',
    '--unshare-ipc',
    '--unshare-uts',
    '--unshare-cgroup-try',
    ...(input.allowNetwork ? [] : ['--unshare-net']),
  ];
  const mounts = input.plan.flatMap((operation): string[] => {
    switch (operation.kind) {
      case 'read-only-bind':
        return ['--ro-bind', operation.source, operation.destination];
      case 'writable-bind': {
        const quota = input.writeQuota;
        if (quota.kind === 'shared')
          return ['--bind', sharedCopyOf(quota.writableMountPoint, operation.source), operation.destination];
        // A private tmpfs of the quota instead of the host directory (which only holds the program).
        return [
          '--perms',
          '01777',
          '--size',
          String(Math.floor(quota.bytes)),
          '--tmpfs',
          operation.destination,
          ...(operation.destination === SANDBOX_WORK_DIRECTORY
            ? ['--ro-bind', quota.programFile, `${SANDBOX_WORK_DIRECTORY}/main.py`]
            : []),
        ];
      }
      case 'symlink':
        return ['--symlink', operation.target, operation.destination];
      case 'directory':
        return ['--perms', '0755', '--dir', operation.destination];
      case 'proc':
        return ['--proc', operation.destination];
      case 'devices':
        return ['--dev', operation.destination];
    }
  });
  const environment = Object.entries(input.environment).flatMap(([name, value]) => ['--setenv', name, value]);
  const capabilities = input.privileged
    ? ['--cap-add', 'CAP_SETUID', '--cap-add', 'CAP_SETGID', '--cap-add', 'CAP_SETPCAP']
    : [];
  return [
    input.bubblewrap,
    ...namespaces,
    '--die-with-parent',
    '--new-session',
    '--hostname',
    'sandbox',
    '--clearenv',
    ...environment,
    ...mounts,
    '--remount-ro',
    '/',
    '--chdir',
    SANDBOX_WORK_DIRECTORY,
    ...capabilities,
    '--',
    ...input.innerCommand,
  ];
}
