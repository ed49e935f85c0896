/** Something the stack needs is missing or in the way; the message names it and the fix. */
export class StackError extends Error {
  override readonly name = 'StackError';
}
