import { Client, Connection } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ScriptedModelServer, type Script } from '../test/fakes/scripted-model-server';
import { startTemporal, type TemporalKind, type TemporalUnderTest } from './temporal-servers';

/** What an in-process benchmark runs against: a Temporal (the dev server unless told), the scripted model server and both connections. */
export interface BenchmarkStack {
  /** A temporary folder (the server's data, transcripts), removed by `close()`. */
  directory: string;
  server: TemporalUnderTest;
  model: ScriptedModelServer;
  connection: Connection;
  client: Client;
  /** For in-process workers. */
  workerConnection: NativeConnection;
  /** Closes the connections, stops both servers and removes the folder. */
  close(): Promise<void>;
}

/** Options of {@link startBenchmarkStack}. */
export interface BenchmarkStackOptions {
  /** Names the temporary folder: `react-agent-<name>-`. */
  name: string;
  script: Script;
  /** The client's largest gRPC message, for benchmarks that read large histories; default gRPC's 4 MiB. */
  maxReceiveMessageBytes?: number;
  /** Which Temporal (`temporal-servers.ts`); default `dev`, the dev server. */
  temporal?: TemporalKind;
  /** The scripted server plays Anthropic's prompt cache on `/v1/messages` (test/fakes/prompt-cache.ts); default false. */
  promptCache?: boolean;
}

/** Starts a Temporal on free ports (the dev server unless `temporal` says otherwise) and the scripted model server, and connects to Temporal. */
export async function startBenchmarkStack(options: BenchmarkStackOptions): Promise<BenchmarkStack> {
  const directory = mkdtempSync(join(tmpdir(), `react-agent-${options.name}-`));
  const server = await startTemporal(options.temporal ?? 'dev', directory);
  const model = await ScriptedModelServer.start({
    script: options.script,
    ...(options.promptCache ? { promptCache: true } : {}),
  });
  const connection = await Connection.connect({
    address: server.address,
    ...(options.maxReceiveMessageBytes
      ? { channelArgs: { 'grpc.max_receive_message_length': options.maxReceiveMessageBytes } }
      : {}),
  });
  const workerConnection = await NativeConnection.connect({ address: server.address });
  return {
    directory,
    server,
    model,
    connection,
    client: new Client({ connection }),
    workerConnection,
    async close() {
      await workerConnection.close();
      await connection.close();
      await model.close();
      await server.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}
