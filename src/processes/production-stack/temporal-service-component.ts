import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { STACK_TOPOLOGY, temporalServiceEnvironment, type TemporalServiceName } from '../../config/stack-topology';
import { waitUntilPortsFree } from '../ports';
import { waitUntilReady } from '../readiness';
import { PROJECT_ROOT } from '../typescript-process';
import { httpStatus, STACK_HOST, tcpAnswers } from './network-probes';
import type { StackComponent, StackLog, StackProcessStatus } from './stack-component';
import { StackDaemon } from './stack-daemon';
import { StackError } from './stack-error';
import type { StackFolder } from './stack-state';
import { temporalServerTools } from './temporal-server-tools';

/** How long a start waits for the ports of a service just killed to be free. */
const PORT_WAIT_MS = 15_000;
/** How long a service has to listen on its gRPC port. */
const START_TIMEOUT_MS = 90_000;
/** How long `down` gives a service after SIGTERM. */
const STOP_GRACE_MS = 15_000;

/**
 * One of Temporal's four services (history, matching, frontend, worker) as a process of its own:
 * `temporal-server start` with the server's configuration template filled from variables
 * (`temporalServiceEnvironment`), `TEMPORAL_SERVICES` picking the service. Ready when its gRPC
 * port answers; its status also asks its metrics, and the frontend's whether it serves.
 */
export class TemporalServiceComponent implements StackComponent {
  readonly name: string;
  private readonly daemon: StackDaemon;

  constructor(
    private readonly folder: StackFolder,
    readonly service: TemporalServiceName,
  ) {
    this.name = `temporal-${service}`;
    this.daemon = new StackDaemon(folder, this.name);
  }

  private get ports() {
    return this.folder.state.ports.temporal[this.service];
  }

  /** `127.0.0.1:<gRPC port>`. */
  get address(): string {
    return `${STACK_HOST}:${this.ports.grpcPort}`;
  }

  get pid(): number | undefined {
    return this.daemon.record?.pid;
  }

  /** What every service is started with: loopback, the stack's PostgreSQL, a fresh copy of the dynamic configuration. */
  private settings() {
    const dynamicConfigFile = this.folder.path('dynamicconfig.yaml');
    writeFileSync(dynamicConfigFile, readFileSync(join(PROJECT_ROOT, STACK_TOPOLOGY.temporal.dynamicConfig)));
    const { ports, secrets } = this.folder.state;
    return {
      bindAddress: STACK_HOST,
      postgresHost: STACK_HOST,
      postgresPort: ports.postgres,
      postgresPassword: secrets.temporal,
      dynamicConfigFile,
      ports: ports.temporal,
    };
  }

  /** Starts the service unless it runs (with `serverBinary`, default the built one) and resolves once its gRPC port answers. */
  async start(log: StackLog, serverBinary?: string): Promise<void> {
    if (this.daemon.running) return;
    const started = Date.now();
    const { grpcPort, membershipPort, metricsPort, httpPort } = this.ports;
    const listeners = [grpcPort, membershipPort, metricsPort, ...(httpPort ? [httpPort] : [])];
    const inUse = await waitUntilPortsFree(listeners, PORT_WAIT_MS);
    if (inUse !== undefined)
      throw new StackError(
        `Cannot start Temporal's ${this.service} service: port ${inUse} on ${STACK_HOST} is in use.`,
      );
    const environment = { ...process.env, ...temporalServiceEnvironment(this.service, this.settings()) };
    const spawned = this.daemon.spawn(serverBinary ?? temporalServerTools().server, ['--allow-no-auth', 'start'], {
      env: environment,
      cwd: this.folder.directory,
    });
    await waitUntilReady({
      what: `Temporal's ${this.service} service`,
      probe: () => this.ready(),
      timeoutMs: START_TIMEOUT_MS,
      process: spawned.readiness,
    });
    log(`Temporal ${this.service}: pid ${spawned.pid} on ${this.address} (${Date.now() - started} ms)`);
  }

  async ready(): Promise<string | undefined> {
    return (await tcpAnswers(STACK_HOST, this.ports.grpcPort))
      ? undefined
      : `gRPC ${this.ports.grpcPort} not answering`;
  }

  async stop(log: StackLog): Promise<void> {
    await this.daemon.stopIfRunning(log, STOP_GRACE_MS);
  }

  async status(): Promise<StackProcessStatus> {
    return this.daemon.statusRow(() => this.health(), { address: this.address });
  }

  /** `ready` when gRPC and metrics answer (and the frontend serves GetSystemInfo), else what does not. */
  private async health(): Promise<string> {
    const { grpcPort, metricsPort } = this.ports;
    const [grpc, metrics] = await Promise.all([tcpAnswers(STACK_HOST, grpcPort), httpStatus(metricsPort, '/metrics')]);
    if (!grpc) return `gRPC ${grpcPort} not answering`;
    if (metrics !== 200) return `metrics ${metricsPort} not answering`;
    return this.service === 'frontend' ? ((await this.frontendProblem()) ?? 'ready') : 'ready';
  }

  private async frontendProblem(): Promise<string | undefined> {
    try {
      const connection = await Connection.connect({ address: this.address, connectTimeout: 2_000 });
      try {
        await connection.withDeadline(Date.now() + 3_000, () => connection.workflowService.getSystemInfo({}));
        return undefined;
      } finally {
        await connection.close().catch(() => undefined);
      }
    } catch (error) {
      return `not serving (${(error as Error).message.split('\n')[0]})`;
    }
  }
}
