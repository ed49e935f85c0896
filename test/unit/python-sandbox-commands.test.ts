import assert from 'node:assert/strict';
import { describe, test } from '@jest/globals';
import { bubblewrapCommand } from '../../activities/tools/python/bubblewrap-command';
import type { MountOperation } from '../../activities/tools/python/filesystem-plan';
import {
  CLOSE_INHERITED_DESCRIPTORS_SCRIPT,
  withInheritedDescriptorsClosed,
} from '../../activities/tools/python/inherited-descriptors';
import { formatPythonObservation, type ObservationLimits } from '../../activities/tools/python/python-observation';
import { writeQuotaEntries } from '../../activities/tools/python/resource-limits';
import type { LimitedProcessResult } from '../../activities/tools/python/run-limited-process';
import { SHARED_WRITE_QUOTA_SCRIPT, sharedWriteQuotaCommand } from '../../activities/tools/python/shared-write-quota';
import { UNSHARE_SETUP_SCRIPT, unshareCommand } from '../../activities/tools/python/unshare-command';

/** The python sandbox's command lines and messages for the write quota and inherited descriptors (issue 28 #9, #14); the processes themselves run in test/integration/python-tool.test.ts and test/hostile/python-sandbox.test.ts. */

const PLAN: MountOperation[] = [
  { kind: 'read-only-bind', source: '/usr', destination: '/usr' },
  { kind: 'writable-bind', source: '/calls/c1/tmp', destination: '/tmp' },
  { kind: 'writable-bind', source: '/calls/c1/work', destination: '/sandbox' },
];
const MIB = 1024 ** 2;

describe('inherited descriptors', () => {
  test('every command starts with the interpreter closing descriptors above 2, then executing the rest in the same process', () => {
    assert.deepEqual(withInheritedDescriptorsClosed('/usr/bin/python3', ['/usr/bin/bwrap', '--', 'x']), [
      '/usr/bin/python3',
      '-I',
      '-S',
      '-B',
      '-c',
      CLOSE_INHERITED_DESCRIPTORS_SCRIPT,
      '/usr/bin/bwrap',
      '--',
      'x',
    ]);
    assert.match(
      CLOSE_INHERITED_DESCRIPTORS_SCRIPT,
      /os\.closerange\(3, highest \+ 1\)\nos\.execv\(sys\.argv\[1\], sys\.argv\[1:\]\)$/,
    );
  });
});

describe('write quota', () => {
  test('one inode per 4 KiB of the quota, at least 1024', () => {
    assert.equal(writeQuotaEntries(256 * MIB), 65_536);
    assert.equal(writeQuotaEntries(MIB), 1024);
  });

  test('unshare: one tmpfs of the quota, the writable binds copied into it', () => {
    const argv = unshareCommand({
      unshare: '/usr/bin/unshare',
      shell: '/bin/sh',
      setpriv: undefined,
      newRootMountPoint: '/calls/c1/root',
      writableMountPoint: '/calls/c1/writable',
      writeQuotaBytes: 32 * MIB,
      plan: PLAN,
      allowNetwork: false,
      privileged: true,
      innerCommand: ['/usr/bin/env'],
    });
    const script = argv.indexOf(UNSHARE_SETUP_SCRIPT);
    assert.deepEqual(argv.slice(script + 1, script + 6), [
      'sandbox-setup',
      '/calls/c1/root',
      '/calls/c1/writable',
      String(32 * MIB),
      '8192',
    ]);
    assert.match(
      UNSHARE_SETUP_SCRIPT,
      /mount -t tmpfs -o "mode=0711,size=\$write_quota,nr_inodes=\$write_inodes,nosuid,nodev" sandbox-writable "\$writable"/,
    );
    assert.match(
      UNSHARE_SETUP_SCRIPT,
      /source="\$writable\$2"; options=nosuid,nodev\n\s+mkdir -p "\$\(parent_of "\$source"\)"; cp -a "\$1" "\$source"/,
    );
  });

  const bubblewrap = (writeQuota: Parameters<typeof bubblewrapCommand>[0]['writeQuota']) =>
    bubblewrapCommand({
      bubblewrap: '/usr/bin/bwrap',
      plan: PLAN,
      environment: {},
      allowNetwork: false,
      privileged: true,
      disableNestedUserNamespaces: false,
      writeQuota,
      innerCommand: ['/usr/bin/env'],
    }).join(' ');

  test('bubblewrap under a root worker: binds the copies a shared tmpfs holds, mounted by unshare before bwrap starts', () => {
    const argv = bubblewrap({ kind: 'shared', writableMountPoint: '/calls/c1/writable' });
    assert.match(argv, /--bind \/calls\/c1\/writable\/tmp \/tmp --bind \/calls\/c1\/writable\/work \/sandbox/);
    assert.doesNotMatch(argv, /--tmpfs|\/calls\/c1\/work /);
    const wrapped = sharedWriteQuotaCommand({
      unshare: '/usr/bin/unshare',
      shell: '/bin/sh',
      writableMountPoint: '/calls/c1/writable',
      writeQuotaBytes: 32 * MIB,
      directories: ['/calls/c1/work', '/calls/c1/tmp'],
      command: ['/usr/bin/bwrap', '--'],
    });
    assert.deepEqual(wrapped, [
      '/usr/bin/unshare',
      '--mount',
      '--propagation',
      'private',
      '--',
      '/bin/sh',
      '-c',
      SHARED_WRITE_QUOTA_SCRIPT,
      'sandbox-write-quota',
      '/calls/c1/writable',
      String(32 * MIB),
      '8192',
      '/calls/c1/work',
      '/calls/c1/tmp',
      '--',
      '/usr/bin/bwrap',
      '--',
    ]);
    assert.match(SHARED_WRITE_QUOTA_SCRIPT, /cp -a "\$1" "\$writable\/\$\{1##\*\/\}"/);
  });

  test('bubblewrap under a non-root worker: each writable directory is a tmpfs of the quota, the program bound read-only', () => {
    const argv = bubblewrap({ kind: 'each', bytes: 32 * MIB, programFile: '/calls/c1/work/main.py' });
    assert.match(
      argv,
      new RegExp(
        `--perms 01777 --size ${32 * MIB} --tmpfs /tmp --perms 01777 --size ${32 * MIB} --tmpfs /sandbox --ro-bind /calls/c1/work/main.py /sandbox/main.py`,
      ),
    );
  });

  const result = (fields: Partial<LimitedProcessResult>): LimitedProcessResult => ({
    stdout: '',
    stderr: '',
    stdoutTruncated: false,
    stderrTruncated: false,
    exitCode: 1,
    signal: null,
    stoppedBecause: undefined,
    durationMilliseconds: 500,
    ...fields,
  });
  const limits: ObservationLimits = {
    wallTimeSeconds: 30,
    cpuSeconds: 20,
    memoryBytes: 1024 ** 3,
    maxFileBytes: 64 * MIB,
    maxOutputBytes: MIB,
    maxWriteBytes: 256 * MIB,
  };

  test('the observation names the quota: a full tmpfs, or the watch that killed the program', () => {
    const full = formatPythonObservation(
      result({ stderr: 'Traceback (most recent call last):\nOSError: [Errno 28] No space left on device\n' }),
      limits,
      true,
    );
    assert.match(
      full,
      /\[status\]\nExit code 1: the write quota of 256 MiB for \/sandbox and \/tmp is full \(No space left on device\)\. Write less/,
    );
    const killed = formatPythonObservation(
      result({ exitCode: null, signal: 'SIGKILL', stoppedBecause: 'write-quota' }),
      limits,
      false,
    );
    assert.match(
      killed,
      /\[status\]\nStopped: the files written to the working directory and the temporary directory passed the write quota of 256 MiB \(or 65,536 files\) and the program was killed\./,
    );
  });
});
