import { S3Client } from '@aws-sdk/client-s3';
import { STACK_TOPOLOGY } from '../../config/stack-topology';
import { waitUntilPortsFree } from '../ports';
import { waitUntilReady } from '../readiness';
import {
  bucketProblem,
  prepareSeaweedDirectory,
  resolveWeedBinary,
  s3PortAnswers,
  weedMiniArguments,
} from '../seaweed-server';
import { STACK_HOST } from './network-probes';
import type { StackComponent, StackLog, StackProcessStatus } from './stack-component';
import { StackDaemon } from './stack-daemon';
import { StackError } from './stack-error';
import type { StackFolder } from './stack-state';

/** How long a start waits for the ports of a SeaweedFS just killed to be free. */
const PORT_WAIT_MS = 15_000;
/** How long SeaweedFS has to answer S3 and make the bucket. */
const START_TIMEOUT_MS = 60_000;
const STOP_GRACE_MS = 15_000;

/**
 * The stack's S3 store: SeaweedFS's `weed mini` (seaweed-server.ts) in `<stack>/seaweedfs` on the
 * stack's ports, with the topology's bucket. Ready when its S3 port answers HTTP.
 */
export class SeaweedComponent implements StackComponent {
  readonly name = 'seaweedfs';
  private readonly daemon: StackDaemon;

  /**
   * @param releasePorts Stops what holds SeaweedFS's ports on other addresses before it starts: `weed
   * mini` refuses a port held on any address, and the machines' relays hold the S3 port on their links.
   */
  constructor(
    private readonly folder: StackFolder,
    private readonly releasePorts: (log: StackLog) => Promise<void>,
  ) {
    this.daemon = new StackDaemon(folder, this.name);
  }

  private get directory(): string {
    return this.folder.path('seaweedfs');
  }

  /** `http://127.0.0.1:<S3 port>`. */
  get endpoint(): string {
    return `http://${STACK_HOST}:${this.folder.state.ports.s3}`;
  }

  get running(): boolean {
    return this.daemon.running;
  }

  /** The S3 variables of a client of the store reached at `host` (and where transcripts go). */
  s3Environment(host = STACK_HOST): Record<string, string> {
    const { accessKeyId, secretAccessKey } = prepareSeaweedDirectory(this.directory);
    return {
      AWS_ENDPOINT_URL: `http://${host}:${this.folder.state.ports.s3}`,
      AWS_REGION: STACK_TOPOLOGY.s3.region,
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      REACT_AGENT_TRANSCRIPT_STORE: `s3://${STACK_TOPOLOGY.s3.bucket}/${STACK_TOPOLOGY.s3.transcriptPrefix}`,
    };
  }

  /** Starts `weed mini` unless it runs (releasing its ports first), and resolves once S3 answers and the bucket exists. */
  async start(log: StackLog): Promise<void> {
    if (this.daemon.running) return;
    const weed = resolveWeedBinary();
    await this.releasePorts(log);
    const { s3, seaweed } = this.folder.state.ports;
    const inUse = await waitUntilPortsFree([s3, ...seaweed], PORT_WAIT_MS);
    if (inUse !== undefined) throw new StackError(`Cannot start SeaweedFS: port ${inUse} on ${STACK_HOST} is in use.`);
    const { accessKeyId, secretAccessKey } = prepareSeaweedDirectory(this.directory);
    const started = Date.now();
    const spawned = this.daemon.spawn(weed, weedMiniArguments(this.directory, { s3, others: seaweed }), {
      env: process.env,
      cwd: this.directory,
    });
    const answered = await waitUntilReady({
      what: `SeaweedFS at ${this.endpoint}`,
      probe: () => this.ready(),
      timeoutMs: START_TIMEOUT_MS,
      process: spawned.readiness,
    });
    const client = new S3Client({
      endpoint: this.endpoint,
      region: STACK_TOPOLOGY.s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId, secretAccessKey },
      maxAttempts: 1,
    });
    try {
      await waitUntilReady({
        what: `The bucket ${STACK_TOPOLOGY.s3.bucket} of SeaweedFS at ${this.endpoint}`,
        probe: () => bucketProblem(client, STACK_TOPOLOGY.s3.bucket),
        timeoutMs: Math.max(0, START_TIMEOUT_MS - answered),
        intervalMs: 300,
        process: spawned.readiness,
      });
    } finally {
      client.destroy();
    }
    log(
      `SeaweedFS: S3 on ${this.endpoint}, bucket ${STACK_TOPOLOGY.s3.bucket} (pid ${spawned.pid}, ${Date.now() - started} ms)`,
    );
  }

  async ready(): Promise<string | undefined> {
    return (await s3PortAnswers(this.folder.state.ports.s3)) ? undefined : 'S3 not answering';
  }

  async stop(log: StackLog): Promise<void> {
    await this.daemon.stopIfRunning(log, STOP_GRACE_MS);
  }

  async status(): Promise<StackProcessStatus> {
    return this.daemon.statusRow(async () => (await this.ready()) ?? 'ready', { address: this.endpoint });
  }
}
