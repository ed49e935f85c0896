import { ApplicationFailure } from '@temporalio/workflow';

/**
 * The message that says what went wrong: the first ApplicationFailure's (activities word those
 * for people), else the innermost cause's.
 */
export function rootMessage(error: unknown): string {
  let current: unknown = error;
  let message = error instanceof Error ? error.message : String(error);
  while (current instanceof Error) {
    if (current instanceof ApplicationFailure && current.message) return current.message;
    if (current.message) message = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}

/** The dotted type of the first ApplicationFailure in the cause chain. */
export function failureType(error: unknown): string | undefined {
  let current: unknown = error;
  while (current instanceof Error) {
    if (current instanceof ApplicationFailure && current.type) return current.type;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}
