import type { Client } from '@temporalio/client';
import { openTranscriptStore } from '../storage/open-transcript-store';
import type { ListableTranscriptStore } from '../storage/transcript-store';
import {
  loadTemporalConnection,
  loadTranscriptStoreConfig,
  loadWorkerConfig,
  type TemporalConnection,
  type WorkerConfig,
} from '../config';
import { connectClient } from './temporal-client';

/** What every command that talks to Temporal needs: configuration, a client, the transcript store. */
export interface CliContext {
  temporal: TemporalConnection;
  worker: WorkerConfig;
  client: Client;
  /** The configured transcript store (reads, writes, and the listing and deletes `react-agent gc` uses). */
  store: ListableTranscriptStore;
  close(): Promise<void>;
}

export async function openCliContext(): Promise<CliContext> {
  const temporal = loadTemporalConnection();
  const worker = loadWorkerConfig();
  const store = openTranscriptStore(loadTranscriptStoreConfig(process.env, worker.transcriptDirectory));
  const { client, close } = await connectClient(temporal);
  return { temporal, worker, client, store, close };
}

/** Prints a value as indented JSON on stdout. */
export function printJson(value: unknown): void {
  process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
}
