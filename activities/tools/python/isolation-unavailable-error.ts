/**
 * The isolation a python tool was configured to require is not available on this machine (for
 * example `namespaces` where user namespaces are disabled), or the sandbox cannot run the
 * configured python at all. Thrown when the tool is created, so a worker fails at start with a
 * message that says what is missing and how to fix it.
 */
export class IsolationUnavailableError extends Error {
  override readonly name = 'IsolationUnavailableError';
}
