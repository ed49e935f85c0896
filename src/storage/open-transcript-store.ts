import { LocalDirectoryTranscriptStore } from './local-directory-transcript-store';
import type { S3TranscriptStoreLocation } from './s3-transcript-store';
import type { ListableTranscriptStore, TranscriptStore } from './transcript-store';

/** Which transcript store to open: the shape `loadTranscriptStoreConfig` (src/config) returns. */
export type TranscriptStoreSettings =
  { kind: 'local'; directory: string } | ({ kind: 's3'; url: string } & S3TranscriptStoreLocation);

/** The S3 store's module, loaded only when S3 is used: the AWS SDK takes a while to load. */
function s3Module(): typeof import('./s3-transcript-store') {
  return require('./s3-transcript-store') as typeof import('./s3-transcript-store');
}

/** Opens the configured store: a local directory (the embedded default) or an S3 bucket. */
export function openTranscriptStore(settings: TranscriptStoreSettings): ListableTranscriptStore {
  return settings.kind === 's3'
    ? new (s3Module().S3TranscriptStore)(settings)
    : new LocalDirectoryTranscriptStore(settings.directory);
}

/** Where a store keeps its blobs, for start-up lines. */
export function describeTranscriptStore(store: TranscriptStore): string {
  if (store instanceof s3Module().S3TranscriptStore) return store.url;
  if (store instanceof LocalDirectoryTranscriptStore) return store.directory;
  return 'a custom store';
}
