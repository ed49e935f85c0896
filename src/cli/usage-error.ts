/** A wrong command line: printed with the command's help, exit code 2. */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly help: string,
  ) {
    super(message);
  }
}
