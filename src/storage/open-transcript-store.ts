import { LocalDirectoryTranscriptStore } from './local-directory-transcript-store';
import { S3TranscriptStore, type S3TranscriptStoreLocation } from './s3-transcript-store';
import type { ListableTranscriptStore, TranscriptStore } from './transcript-store';

/** Which transcript store to open: the shape `loadTranscriptStoreConfig` (src/config) returns. */
export type TranscriptStoreSettings = { kind: 'local'; directory: string } | ({ kind: 's3'; url: string } & S3TranscriptStoreLocation);

/** Opens the configured store: a local directory (the embedded default) or an S3 bucket. */
export function openTranscriptStore(settings: TranscriptStoreSettings): ListableTranscriptStore {
  return settings.kind === 's3' ? new S3TranscriptStore(settings) : new LocalDirectoryTranscriptStore(settings.directory);
}

/** Where a store keeps its blobs, for start-up lines. */
export function describeTranscriptStore(store: TranscriptStore): string {
  if (store instanceof S3TranscriptStore) return store.url;
  if (store instanceof LocalDirectoryTranscriptStore) return store.directory;
  return 'a custom store';
}
