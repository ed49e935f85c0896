// Runs alone: asserts sandboxed processes stop within 1.4–4 s and end within 2 s of an abort
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, test } from '@jest/globals';
import { setTimeout as delay } from 'node:timers/promises';
import type { ToolContext } from '../../activities/tools/tool-definition';
import { ToolInputError } from '../../activities/tools/tool-definition';
import { findExecutable, systemToolDirectoriesFrom } from '../../activities/tools/python/find-executable';
import { IsolationUnavailableError } from '../../activities/tools/python/isolation-unavailable-error';
import { createPythonTool, type PythonTool, type PythonToolOptions } from '../../activities/tools/python/python-tool';
import { describeIsolation } from '../../activities/tools/python/sandbox';
import { testNeeding } from './support/test-needing';

/*
 * Runs real sandboxed processes for every isolation level this machine offers (bubblewrap when
 * `bwrap` is installed, unshare, rlimits only) and tries to escape from each. What rlimits-only
 * cannot prevent is asserted as what it is (see activities/tools/python/README.md).
 */

const PROJECT_ROOT = resolve(__dirname, '../..');
const SECRET = `react-agent-python-secret-${randomBytes(8).toString('hex')}`;
process.env.REACT_AGENT_PYTHON_TEST_SECRET = SECRET;
const HOST_PASSWD = readFileSync('/etc/passwd', 'utf8');

/** Each call's private directory is created under this, so the tests can see it removed. */
const callParent = mkdtempSync(join(tmpdir(), 'react-agent-python-test-'));
// Traversable like /tmp, so a root worker's per-call uid (rlimits-only) reaches its own directory.
chmodSync(callParent, 0o711);
/** A long-lived process of the worker's user with the secret in its (initial) environment. */
let secretHolder: ChildProcess;
/** A TCP server on the host's loopback that sandboxes must not reach. */
let server: Server;
let serverPort = 0;
let serverConnections = 0;

beforeAll(async () => {
  secretHolder = spawn('sleep', ['300'], {
    env: { ...process.env, REACT_AGENT_PYTHON_TEST_SECRET: SECRET },
    stdio: 'ignore',
  });
  server = createServer((socket) => {
    serverConnections += 1;
    socket.end('hello from the host\n');
  });
  await new Promise<void>((resolveListen) => server.listen(0, '127.0.0.1', resolveListen));
  const address = server.address();
  serverPort = typeof address === 'object' && address ? address.port : 0;
});

afterAll(async () => {
  secretHolder.kill('SIGKILL');
  await new Promise<void>((resolveClose) => server.close(() => resolveClose()));
  rmSync(callParent, { recursive: true, force: true });
});

function context(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { signal, heartbeat: () => undefined, workflowId: 'python-tool-test', callId: 'call-1' };
}

/** Pids of the sandboxed programs' python processes (not the launchers), `alive` ones only. */
function sandboxedPythonProcesses(): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const commandLine = readFileSync(`/proc/${entry}/cmdline`, 'utf8');
      const isProgram =
        commandLine.includes('main.py') &&
        (commandLine.includes('/sandbox/main.py') || commandLine.includes(callParent));
      if (
        isProgram &&
        !commandLine.includes('prlimit') &&
        !commandLine.includes('bwrap') &&
        !commandLine.includes('unshare') &&
        isAlive(Number(entry))
      ) {
        pids.push(Number(entry));
      }
    } catch {
      // gone while we looked
    }
  }
  return pids;
}

/** True unless the process is gone or a zombie. */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

function assertNoCallDirectoryLeft(): void {
  assert.deepEqual([...readdirSync(callParent)], [], 'every call directory is removed after the call');
}

/** Splits an observation into its sections. */
function sections(observation: string): { stdout: string; stderr: string; status: string } {
  const match = /^\[stdout\]\n([\s\S]*)\n\[stderr\]\n([\s\S]*)\n\[status\]\n([\s\S]*)$/.exec(observation);
  assert.ok(match, `observation has [stdout], [stderr] and [status] sections:\n${observation}`);
  return { stdout: match[1] ?? '', stderr: match[2] ?? '', status: match[3] ?? '' };
}

interface Level {
  name: string;
  options: PythonToolOptions;
}

/** The levels this machine offers, strongest first, each as options that force it. */
function availableLevels(): Level[] {
  const levels: Level[] = [];
  const base = { temporaryDirectory: callParent };
  // Listed even where bwrap is missing, so the test count does not depend on the machine: the
  // level's tests then become one test that reports it unavailable and why.
  levels.push({ name: 'bubblewrap', options: { ...base, isolation: 'namespaces' } });
  levels.push({ name: 'unshare', options: { ...base, isolation: 'namespaces', bubblewrapExecutable: null } });
  levels.push({ name: 'rlimits-only', options: { ...base, isolation: 'rlimits-only' } });
  return levels;
}

/** The tool for a level, or why the level is unavailable here. A root worker's rlimits-only calls need an interpreter other users can run. */
function toolFor(level: Level, overrides: PythonToolOptions = {}): PythonTool | string {
  if (level.name === 'bubblewrap' && !findExecutable('bwrap', systemToolDirectoriesFrom(process.env.PATH))) {
    return 'bwrap (bubblewrap) is not installed (`apt-get install bubblewrap`); the unshare and rlimits-only levels were tested instead';
  }
  const attempts: PythonToolOptions[] = [
    {},
    ...(level.name === 'rlimits-only' ? [{ pythonExecutable: '/usr/bin/python3' }] : []),
  ];
  const problems: string[] = [];
  for (const attempt of attempts) {
    try {
      const tool = createPythonTool({ ...level.options, ...attempt, ...overrides });
      if (tool.sandbox.level !== level.name)
        return `${level.name} is not what namespaces picked (${tool.sandbox.level})`;
      return tool;
    } catch (error) {
      if (!(error instanceof IsolationUnavailableError)) throw error;
      problems.push(error.message);
    }
  }
  return problems.join(' / ');
}

test('auto picks the strongest level that works and describeIsolation says which', () => {
  const tool = createPythonTool({ temporaryDirectory: callParent });
  const strongest = availableLevels()
    .map((level) => toolFor(level))
    .find((candidate): candidate is PythonTool => typeof candidate !== 'string');
  assert.ok(strongest, 'at least one level works');
  assert.equal(tool.sandbox.level, strongest.sandbox.level);
  const description = describeIsolation();
  assert.match(description, /^Python tool isolation: /);
  assert.ok(description.includes(tool.sandbox.level === 'rlimits-only' ? 'RESOURCE LIMITS ONLY' : tool.sandbox.level));
  assert.equal(tool.name, 'python');
  assert.deepEqual((tool.parameters as { required: string[] }).required, ['code']);
});

test('requiring namespaces where none work fails at creation with a clear error', () => {
  assert.throws(
    () =>
      createPythonTool({
        isolation: 'namespaces',
        temporaryDirectory: callParent,
        systemToolDirectories: ['/nonexistent-directory'],
      }),
    (error: unknown) => {
      assert.ok(error instanceof IsolationUnavailableError);
      assert.match(error.message, /needs isolation "namespaces"/);
      assert.match(error.message, /apt-get install bubblewrap/);
      assert.match(error.message, /REACT_AGENT_PYTHON_ISOLATION=rlimits-only/);
      return true;
    },
  );
});

test('a missing interpreter fails at creation and names it', () => {
  assert.throws(
    () => createPythonTool({ pythonExecutable: '/nonexistent/python3', temporaryDirectory: callParent }),
    /cannot run the interpreter "\/nonexistent\/python3"/,
  );
});

for (const level of availableLevels()) {
  const toolOrReason = toolFor(level);
  if (typeof toolOrReason === 'string') {
    // A level this machine lacks is reported, not silently dropped nor passed: a test that fails with why creating it failed.
    testNeeding(toolOrReason)(`python tool, ${level.name}`, () => undefined);
    continue;
  }
  describe(`python tool, ${level.name}`, () => {
    const tool = toolOrReason;
    const namespaces = level.name !== 'rlimits-only';
    const tools = new Map<string, PythonTool>();
    /** The level's tool with other limits (each combination detected once). */
    const limited = (overrides: PythonToolOptions): PythonTool => {
      const key = JSON.stringify(overrides);
      if (!tools.has(key))
        tools.set(
          key,
          createPythonTool({ ...level.options, pythonExecutable: tool.sandbox.python.configured, ...overrides }),
        );
      return tools.get(key) as PythonTool;
    };

    test('prints and computes; the working directory and /tmp are private and removed afterwards', async () => {
      const observation = await tool.run(
        {
          code: [
            'import os, tempfile, math',
            'open("notes.txt", "w").write("kept only for this call")',
            'open(os.path.join(tempfile.gettempdir(), "scratch.txt"), "w").write("x")',
            'print(sum(range(10)), math.factorial(5))',
            'print(sorted(os.listdir(".")))',
          ].join('\n'),
        },
        context(),
      );
      const { stdout, stderr, status } = sections(observation);
      assert.equal(stdout, "45 120\n['main.py', 'notes.txt']");
      assert.equal(stderr, '(empty)');
      assert.match(status, /^Exit code 0 \(success\)\. Ran for \d+\.\d\d s\.$/);
      assertNoCallDirectoryLeft();
    });

    test('a syntax error is an observation with the traceback, not a thrown error', async () => {
      const { stdout, stderr, status } = sections(
        await tool.run({ code: 'print("before")\ndef broken(:\n    pass\n' }, context()),
      );
      assert.equal(stdout, '(empty)');
      assert.match(stderr, /File ".*main\.py", line 2/);
      assert.match(stderr, /SyntaxError/);
      assert.match(status, /^Exit code 1: the code raised an error; see \[stderr\]\./);
    });

    test('empty code is a ToolInputError for the model', async () => {
      await assert.rejects(tool.run({ code: '  \n' }, context()), ToolInputError);
    });

    test(
      namespaces
        ? 'no network: a host loopback port and DNS are unreachable'
        : 'rlimits-only: the network IS reachable (documented)',
      async () => {
        const before = serverConnections;
        const code = [
          'import socket',
          'try:',
          `    with socket.create_connection(("127.0.0.1", ${serverPort}), timeout=3) as s: print("connect: reached", s.recv(100))`,
          'except OSError as error: print("connect: blocked", type(error).__name__)',
          'try:',
          '    socket.setdefaulttimeout(3); socket.getaddrinfo("example.com", 443); print("dns: resolved")',
          'except OSError as error: print("dns: blocked", type(error).__name__)',
        ].join('\n');
        const { stdout } = sections(await tool.run({ code }, context()));
        if (namespaces) {
          assert.match(stdout, /^connect: blocked/m);
          assert.match(stdout, /^dns: blocked/m);
          assert.equal(serverConnections, before, 'the host server saw no connection');
        } else {
          assert.match(stdout, /^connect: reached b'hello from the host/m);
          assert.equal(serverConnections, before + 1);
        }
      },
    );

    test("the worker's environment is not passed on and other processes' environments are not readable", async () => {
      const code = [
        'import os',
        'print("environment:", sorted(os.environ))',
        `print("secret in os.environ:", any(${JSON.stringify(SECRET)} in value for value in os.environ.values()))`,
        `for pid in (${process.pid}, ${secretHolder.pid}):`,
        '    try:',
        '        data = open(f"/proc/{pid}/environ", "rb").read()',
        `        print(pid, "environ readable, secret:", ${JSON.stringify(SECRET)}.encode() in data)`,
        '    except OSError as error: print(pid, "environ:", type(error).__name__)',
      ].join('\n');
      const { stdout } = sections(await tool.run({ code }, context()));
      assert.ok(!stdout.includes(SECRET), 'the secret value is never printed');
      assert.match(stdout, /^secret in os\.environ: False$/m);
      assert.doesNotMatch(stdout, /REACT_AGENT_PYTHON_TEST_SECRET/);
      assert.match(
        stdout,
        /^environment: \['HOME', 'LANG', 'MKL_NUM_THREADS', 'MPLBACKEND', 'OMP_NUM_THREADS', 'OPENBLAS_NUM_THREADS', 'PATH', ('PWD', )?'PYTHONDONTWRITEBYTECODE', 'PYTHONUNBUFFERED', 'TMPDIR'\]$/m,
      );
      if (namespaces || tool.sandbox.dropsToUnprivilegedUser) {
        // Other pid namespace (the pids do not exist or are other processes), or another uid.
        assert.doesNotMatch(stdout, /environ readable, secret: True/);
      } else {
        // rlimits-only under the worker's own uid: /proc/<pid>/environ of the worker's processes is readable.
        assert.match(stdout, new RegExp(`^${secretHolder.pid} environ readable, secret: True$`, 'm'));
      }
    });

    test(
      namespaces
        ? "/etc/passwd is a synthetic one, not the host's"
        : "rlimits-only: /etc/passwd is the host's (documented)",
      async () => {
        const { stdout } = sections(await tool.run({ code: 'print(open("/etc/passwd").read(), end="")' }, context()));
        if (namespaces) {
          assert.notEqual(`${stdout}\n`, HOST_PASSWD);
          assert.match(stdout, /^sandbox:x:\d+:\d+:sandbox:\/sandbox:\/usr\/sbin\/nologin$/);
        } else {
          assert.equal(`${stdout}\n`, HOST_PASSWD);
        }
      },
    );

    // rlimits-only under the worker's own uid can write wherever the worker can (documented), so there is nothing to assert there.
    const writesConfined = namespaces || tool.sandbox.dropsToUnprivilegedUser;
    if (writesConfined)
      test('writing outside the private directories fails (project folder, host /tmp)', async () => {
        const name = `python-escape-${randomBytes(6).toString('hex')}.txt`;
        const hostTemporaryFile = join(tmpdir(), name);
        const targets = [join(PROJECT_ROOT, name), join(PROJECT_ROOT, 'package.json'), hostTemporaryFile];
        const code = [
          `for path in ${JSON.stringify(targets)}:`,
          '    try:',
          '        with open(path, "a") as f: f.write("escaped")',
          '        print("wrote")',
          '    except OSError as error: print("refused", type(error).__name__)',
        ].join('\n');
        const packageJson = readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8');
        const { stdout } = sections(await tool.run({ code }, context()));
        const [newFile, existingFile, temporaryFile] = stdout.split('\n');
        assert.ok(!existsSync(join(PROJECT_ROOT, name)), 'nothing was created in the project');
        assert.equal(
          readFileSync(join(PROJECT_ROOT, 'package.json'), 'utf8'),
          packageJson,
          'no project file was changed',
        );
        if (namespaces) {
          // The project does not exist inside; /tmp is the call's own, so the host's stays untouched.
          assert.equal(newFile, 'refused FileNotFoundError');
          assert.equal(existingFile, 'refused FileNotFoundError');
          assert.ok(!existsSync(hostTemporaryFile), "nothing was created in the host's temporary directory");
        } else {
          // A per-call unprivileged uid: the project is not writable, world-writable directories are (documented).
          assert.equal(newFile, 'refused PermissionError');
          assert.equal(existingFile, 'refused PermissionError');
          assert.equal(temporaryFile, existsSync(hostTemporaryFile) ? 'wrote' : temporaryFile);
          rmSync(hostTemporaryFile, { force: true });
        }
        assertNoCallDirectoryLeft();
      });

    test('a fork bomb is contained: at most maxProcesses processes, killed at the wall time, none survive', async () => {
      const bombTool = limited({ maxProcesses: 16, wallTimeSeconds: 3, cpuSeconds: 3 });
      let most = 0;
      const sampler = setInterval(() => {
        most = Math.max(most, sandboxedPythonProcesses().length);
      }, 100);
      const started = performance.now();
      let observation: string;
      try {
        observation = await bombTool.run(
          { code: 'import os\nwhile True:\n    try:\n        os.fork()\n    except OSError:\n        pass\n' },
          context(),
        );
      } finally {
        clearInterval(sampler);
      }
      const elapsed = performance.now() - started;
      assert.ok(elapsed < 6_000, `finished in ${elapsed} ms`);
      assert.match(sections(observation).status, /time limit of 3 s|CPU time limit/);
      // rlimits-only under the worker's own uid: RLIMIT_NPROC counts all of that user's tasks, so the
      // bomb gets 16 more than the user had when the call started, give or take what ended meanwhile.
      const ceiling = namespaces || tool.sandbox.dropsToUnprivilegedUser ? 16 : 16 + 8;
      assert.ok(most > 0 && most <= ceiling, `at most ${ceiling} processes at once (saw ${most})`);
      await delay(200);
      assert.deepEqual(sandboxedPythonProcesses(), [], 'no process of the bomb survives');
      assertNoCallDirectoryLeft();
    }, 20_000);

    test('a memory bomb fails with MemoryError', async () => {
      const { stderr, status } = sections(
        await tool.run({ code: 'data = bytearray(4 * 1024 ** 3)\nprint(len(data))' }, context()),
      );
      assert.match(stderr, /MemoryError/);
      assert.match(
        status,
        /^Exit code 1: out of memory \(MemoryError\); each process may use at most 1 GiB of address space\./,
      );
    });

    test('an infinite loop is cut by the CPU time limit', async () => {
      const started = performance.now();
      const { status } = sections(
        await limited({ cpuSeconds: 1, wallTimeSeconds: 8 }).run({ code: 'while True:\n    pass\n' }, context()),
      );
      assert.match(status, /CPU time limit of 1 s/);
      assert.ok(performance.now() - started < 5_000);
    }, 15_000);

    test('a sleeping program is cut by the wall-clock limit, with the child it detached', async () => {
      const started = performance.now();
      const code = [
        'import os, subprocess, sys, time',
        'if len(sys.argv) == 1:',
        '    subprocess.Popen([sys.executable, os.path.abspath(__file__), "detached child"], start_new_session=True)',
        '    print("sleeping", flush=True)',
        'time.sleep(60)',
      ].join('\n');
      const { stdout, status } = sections(await limited({ wallTimeSeconds: 1.5 }).run({ code }, context()));
      const elapsed = performance.now() - started;
      assert.equal(stdout, 'sleeping');
      assert.match(status, /^Stopped: the time limit of 1\.5 s \(wall clock\) was reached/);
      assert.ok(elapsed >= 1_400 && elapsed < 4_000, `stopped after ${elapsed} ms`);
      await delay(200);
      const survivors = sandboxedPythonProcesses();
      if (namespaces || tool.sandbox.dropsToUnprivilegedUser) {
        assert.deepEqual(survivors, [], 'the pid namespace (or the per-call uid) took the detached child too');
      } else {
        // rlimits-only under the worker's own uid: a child in its own session outlives the call (documented).
        assert.equal(survivors.length, 1);
        for (const pid of survivors) process.kill(pid, 'SIGKILL');
      }
    }, 15_000);

    test('huge output is capped and the program stopped', async () => {
      const started = performance.now();
      const observation = await limited({ maxOutputBytes: 64 * 1024 }).run(
        { code: 'import sys\nwhile True:\n    sys.stdout.write("x" * 10000)\n' },
        context(),
      );
      const { stdout, status } = sections(observation);
      assert.ok(performance.now() - started < 5_000);
      assert.match(stdout, /^x{65536}\n\[stdout cut at the limit of 65,536 bytes; the program was stopped\]$/);
      assert.match(status, /^Stopped: the output exceeded 65,536 bytes/);
    }, 15_000);

    test('a file larger than maxFileBytes cannot be written', async () => {
      const code =
        'try:\n    open("big.bin", "wb").write(b"x" * (2 * 1024 * 1024))\n    print("written")\nexcept OSError as error:\n    print("refused", error.strerror)\n';
      const { stdout } = sections(await limited({ maxFileBytes: 1024 * 1024 }).run({ code }, context()));
      assert.equal(stdout, 'refused File too large');
    });

    test('files past maxWriteBytes in the working directory and the temporary directory together end the call with a clear status', async () => {
      const code = [
        'import os, sys, tempfile',
        'written = 0',
        'for part in range(64):',
        '    directory = tempfile.gettempdir() if part % 2 else "."',
        '    with open(os.path.join(directory, f"part{part}.bin"), "wb") as file:',
        '        file.write(b"x" * (4 << 20))',
        '    written += 4',
        '    print(written, file=sys.stderr, flush=True)',
        'print("wrote all 256 MiB")',
      ].join('\n');
      const { stdout, stderr, status } = sections(
        await limited({ maxWriteBytes: 32 * 1024 ** 2 }).run({ code }, context()),
      );
      assert.doesNotMatch(stdout, /wrote all/);
      const written = Math.max(0, ...stderr.split('\n').map((line) => (/^\d+$/.test(line) ? Number(line) : 0)));
      if (namespaces) {
        assert.match(
          status,
          /^Exit code 1: the write quota of 32 MiB for \/sandbox and \/tmp is full \(No space left on device\)/,
        );
        // one tmpfs for both; bubblewrap under a non-root worker: one each
        const bound = level.name === 'bubblewrap' && process.getuid?.() !== 0 ? 64 : 32;
        assert.ok(written <= bound, `wrote ${written} MiB`);
      } else {
        // measured every 100 ms: the program gets some way past the quota before it is killed
        assert.match(
          status,
          /^Stopped: the files written to the working directory and the temporary directory passed the write quota of 32 MiB/,
        );
        assert.ok(written < 256, `wrote ${written} MiB`);
      }
      assertNoCallDirectoryLeft();
    }, 30_000);

    test('cancellation through the AbortSignal kills the program promptly', async () => {
      const controller = new AbortController();
      const running = tool.run(
        { code: 'import time\nprint("started", flush=True)\ntime.sleep(60)\n' },
        context(controller.signal),
      );
      let pids: number[] = [];
      for (let attempt = 0; attempt < 100 && pids.length === 0; attempt += 1) {
        await delay(50);
        pids = sandboxedPythonProcesses();
      }
      assert.equal(pids.length, 1, 'the program is running');
      const abortedAt = performance.now();
      controller.abort(new Error('run cancelled'));
      await assert.rejects(running, /run cancelled/);
      assert.ok(performance.now() - abortedAt < 2_000, 'the call ends promptly');
      for (const pid of pids) assert.ok(!isAlive(pid), `process ${pid} is gone`);
      assertNoCallDirectoryLeft();
    }, 15_000);
  });
}
