import { ApplicationFailure } from '@temporalio/common';
import { FailureTypes } from '../src/core/failure-types';
import type { TranscriptStore } from '../src/storage/transcript-store';

/**
 * The store errors as Temporal failures (errors are read by `name`, so copies from another
 * module instance count too): a missing or corrupt blob is non-retryable and names the
 * reference; a store that is down is retryable, so Temporal retries the activity and the run
 * resumes when the store is back. Anything else passes through unchanged.
 */
export function transcriptFailure(error: unknown): unknown {
  const name = (error as Error | undefined)?.name;
  const message = (error as Error | undefined)?.message ?? String(error);
  const reference = (error as { reference?: string } | undefined)?.reference;
  if (name === 'TranscriptMissingError') {
    return ApplicationFailure.create({
      type: FailureTypes.transcriptMissing,
      message,
      nonRetryable: true,
      details: [{ reference }],
      cause: error as Error,
    });
  }
  if (name === 'TranscriptCorruptError') {
    return ApplicationFailure.create({
      type: FailureTypes.transcriptCorrupt,
      message,
      nonRetryable: true,
      details: [{ reference }],
      cause: error as Error,
    });
  }
  if (name === 'TranscriptStoreUnavailableError') {
    return ApplicationFailure.create({ type: FailureTypes.transcriptUnavailable, message, nonRetryable: false });
  }
  return error;
}

/** Whether an error says the transcript store is down: the store's own error, or its {@link transcriptFailure}. */
export function isStoreUnavailable(error: unknown): boolean {
  const { type, name } = (error ?? {}) as { type?: string; name?: string };
  return type === FailureTypes.transcriptUnavailable || name === 'TranscriptStoreUnavailableError';
}

/** A store whose errors are {@link transcriptFailure}s, for activities. */
export function withTranscriptFailures(store: TranscriptStore): TranscriptStore {
  return {
    putText: (text) => store.putText(text).catch((error: unknown) => Promise.reject(transcriptFailure(error))),
    getText: (reference) =>
      store.getText(reference).catch((error: unknown) => Promise.reject(transcriptFailure(error))),
  };
}
