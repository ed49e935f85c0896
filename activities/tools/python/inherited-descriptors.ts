/**
 * The worker may hold file descriptors it inherited without close-on-exec (a lock a wrapper
 * script took with `flock 200`, a socket a supervisor passed on): Node only marks the
 * descriptors it opens itself, so every child would inherit these, through bwrap, unshare,
 * setpriv and prlimit, into the sandboxed program. Every call's command therefore starts with
 * the worker's own interpreter (not the sandbox's: it runs before the sandbox, as the worker)
 * running this fixed script, which closes every descriptor above 2 and then executes the real
 * command in the same process: the program gets stdin, stdout and stderr, nothing more.
 * About 20 ms per call (`python -I -S`, no site, no imports but `os`).
 */
export const CLOSE_INHERITED_DESCRIPTORS_SCRIPT = [
  'import os, sys',
  'try:',
  "    highest = max(int(name) for name in os.listdir('/proc/self/fd'))",
  'except (OSError, ValueError):',
  "    highest = os.sysconf('SC_OPEN_MAX')",
  'os.closerange(3, highest + 1)',
  'os.execv(sys.argv[1], sys.argv[1:])',
].join('\n');

/** `argv` (an absolute command first) preceded by `python` closing every inherited descriptor above 2 before it executes `argv`. */
export function withInheritedDescriptorsClosed(python: string, argv: readonly string[]): string[] {
  return [python, '-I', '-S', '-B', '-c', CLOSE_INHERITED_DESCRIPTORS_SCRIPT, ...argv];
}
