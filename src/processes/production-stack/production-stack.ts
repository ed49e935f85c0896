import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { availableParallelism } from 'node:os';
import { accessSync, constants, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { request } from 'node:http';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { PROJECT_SEARCH_ATTRIBUTES } from '../../core/search-attributes';
import { forEachAtMost } from '../../core/task-slots';
import {
  STACK_TOPOLOGY,
  TEMPORAL_SERVICES,
  temporalServiceEnvironment,
  type TemporalServiceName,
  type TemporalServicePorts,
} from '../../config/stack-topology';
import { findFreePort, INDEXED_VALUE_TYPES, isPortFree } from '../dev-server';
import { prepareSeaweedDirectory, resolveWeedBinary, s3PortAnswers, weedMiniArguments } from '../seaweed-server';
import { PROJECT_ROOT, projectEntryArguments } from '../typescript-process';
import { isAlive, killDaemon, spawnDaemon, stopDaemon, type DaemonRecord } from './daemon';
import {
  chooseSubnet,
  machineLayout,
  MAX_MACHINES,
  preferredSubnet,
  subnetsInUse,
  type WorkerMachine,
} from './machine-addresses';
import { environmentOnMachine, loopbackPorts } from './machine-environment';
import { findPostgresBin, PostgresCluster } from './postgres-cluster';
import { StackError } from './stack-error';
import {
  createMachine,
  cutMachine,
  deleteMachine,
  hostAddressListing,
  machineLinkState,
  machineSupportProblem,
  restoreMachine,
} from './worker-machine';
import { placeWorkers, workerCounts, type StackWorker, type WorkerRole } from './worker-placement';

export { StackError } from './stack-error';
export type { StackWorker, WorkerRole } from './worker-placement';
export type { WorkerMachine } from './machine-addresses';

/** Ports of a stack, chosen at its first `up` and kept in its state file. */
export interface StackPorts {
  postgres: number;
  temporal: Record<TemporalServiceName, TemporalServicePorts>;
  ui: number;
  s3: number;
  /** The other listeners of `weed mini` (master, volume, filer, gRPC, admin). */
  seaweed: number[];
}

interface StackState {
  version: 1;
  ports: StackPorts;
  secrets: { postgresSuperuser: string; temporal: string };
  processes: Record<string, DaemonRecord>;
  workers: StackWorker[];
  /** The environment given to workers at `up` (the model server, tools), without the stack's own variables. */
  workerEnvironment: Record<string, string>;
  /** The worker machines of `up --machines`; kept while the stack is down, so `up` makes them again. */
  machines?: WorkerMachine[];
  /** Names this stack's namespaces and interfaces (4 hex digits, random, made with the first machine). */
  machineTag?: string;
  /** The /24 of 10.231.0.0/16 the machines have now (chosen again when they are made anew). */
  machineSubnet?: number;
  /** The ports each machine's relay forwards, by machine: a relay is restarted when they change. */
  relayedPorts?: Record<string, number[]>;
}

/** `REACT_AGENT_STACK_DIR`, else `$XDG_STATE_HOME/react-agent/stack`, else `~/.local/state/react-agent/stack`. */
export function defaultStackDirectory(environment: NodeJS.ProcessEnv = process.env): string {
  if (environment.REACT_AGENT_STACK_DIR) return resolve(environment.REACT_AGENT_STACK_DIR);
  return join(environment.XDG_STATE_HOME || join(homedir(), '.local', 'state'), 'react-agent', 'stack');
}

/** Where `npm run setup:temporal-server` links the binaries: `REACT_AGENT_TEMPORAL_SERVER_DIR`, else `.tools/temporal-server`. */
export function temporalServerTools(environment: NodeJS.ProcessEnv = process.env): {
  server: string;
  sqlTool: string;
  uiServer?: string;
} {
  const directory =
    environment.REACT_AGENT_TEMPORAL_SERVER_DIR?.trim() || join(PROJECT_ROOT, '.tools', 'temporal-server');
  const server = join(directory, 'bin', 'temporal-server');
  const sqlTool = join(directory, 'bin', 'temporal-sql-tool');
  for (const binary of [server, sqlTool]) {
    try {
      accessSync(binary, constants.X_OK);
    } catch {
      throw new StackError(
        `Temporal's server is not built: no ${binary}. Run 'npm run setup:temporal-server' (builds it from the Go module proxy, about 10 minutes the first time).`,
      );
    }
  }
  const uiServer = join(directory, 'bin', 'temporal-ui-server');
  return existsSync(uiServer) ? { server, sqlTool, uiServer } : { server, sqlTool };
}

export interface StackUpOptions {
  /** Worker processes per role; default the topology's replicas. */
  workers?: Partial<Record<WorkerRole, number>>;
  /**
   * Worker machines (network namespaces, docs/production.md) to deal the workers to in turn
   * (worker k on machine k mod N, in the topology's role order); 0 puts them all on the host.
   * Default: the machines of the last `up` (none at first). Needs root and iproute2.
   */
  machines?: number;
  /** Extra environment of the workers (the model server, tool modules); kept for later `up`s. Default: none beyond the process's own. */
  workerEnvironment?: Record<string, string>;
  /** Start the Web UI when it is built (default true). */
  ui?: boolean;
  log?: (line: string) => void;
}

export interface StackProcessStatus {
  name: string;
  pid?: number;
  running: boolean;
  /** What answers: `ready`, or what does not. */
  health: string;
  address?: string;
  /** The worker machine a worker runs on (`machine-<n>`). */
  machine?: string;
}

const HOST = '127.0.0.1';
const PROBE_WORKFLOW_ID = 'react-agent-stack-readiness-probe';

function secret(): string {
  return randomBytes(18).toString('base64url');
}

function defaultPorts(): Omit<StackPorts, 'seaweed'> {
  const services = STACK_TOPOLOGY.temporal.services;
  return {
    postgres: STACK_TOPOLOGY.postgresql.port,
    temporal: JSON.parse(JSON.stringify(services)) as Record<TemporalServiceName, TemporalServicePorts>,
    ui: STACK_TOPOLOGY.ui.port,
    s3: STACK_TOPOLOGY.s3.port,
  };
}

const issuedPorts = new Set<number>();

/**
 * A free port on 127.0.0.1 below 32768. Temporal keeps a member's membership port in a PostgreSQL
 * smallint (cluster_membership.rpc_port): the kernel's ephemeral ports (32768 and up) fail there
 * with "value is out of range for type smallint". So the stack picks every port in 20000–32767.
 */
async function freeLowPort(): Promise<number> {
  for (let attempt = 0; attempt < 1000; attempt += 1) {
    const port = 20_000 + Math.floor(Math.random() * 12_768);
    if (issuedPorts.has(port) || !(await isPortFree(port))) continue;
    issuedPorts.add(port);
    return port;
  }
  throw new StackError('Could not find a free TCP port on 127.0.0.1 between 20000 and 32767.');
}

async function freePorts(): Promise<Omit<StackPorts, 'seaweed'>> {
  const temporalPorts = {} as Record<TemporalServiceName, TemporalServicePorts>;
  for (const service of TEMPORAL_SERVICES) {
    temporalPorts[service] = {
      grpcPort: await freeLowPort(),
      membershipPort: await freeLowPort(),
      metricsPort: await freeLowPort(),
      ...(service === 'frontend' ? { httpPort: await freeLowPort() } : {}),
    };
  }
  return { postgres: await freeLowPort(), temporal: temporalPorts, ui: await freeLowPort(), s3: await freeLowPort() };
}

function tcpAnswers(host: string, port: number, timeoutMs = 1_500): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolveAnswer(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolveAnswer(false);
    });
    socket.once('error', () => resolveAnswer(false));
  });
}

function httpStatus(port: number, path: string, timeoutMs = 2_000): Promise<number | undefined> {
  return new Promise((resolveStatus) => {
    const probe = request({ host: HOST, port, path, method: 'GET', timeout: timeoutMs }, (response) => {
      response.resume();
      resolveStatus(response.statusCode);
    });
    probe.on('timeout', () => probe.destroy());
    probe.on('error', () => resolveStatus(undefined));
    probe.end();
  });
}

function tail(file: string, lines = 12): string {
  try {
    return readFileSync(file, 'utf8').trim().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * The production stack on this machine (docs/production.md): PostgreSQL, Temporal's frontend,
 * history, matching and worker services as separate processes, the Web UI, SeaweedFS and agent
 * workers by role, all from src/config/stack-topology.json. Its processes outlive the command that
 * started them; their pids, ports and secrets are in `<directory>/stack.json`, so `up`, `status`
 * and `down` work across invocations. `up` starts whatever is not running (and is how a killed
 * service comes back); `down` stops everything and keeps the data.
 */
export class ProductionStack {
  private constructor(
    readonly directory: string,
    private state: StackState,
  ) {}

  /** Opens the stack in `directory` (default {@link defaultStackDirectory}); a new one gets the topology's ports, or free ones with `freePorts`. */
  static async open(
    directory: string = defaultStackDirectory(),
    options: { freePorts?: boolean } = {},
  ): Promise<ProductionStack> {
    const resolved = resolve(directory);
    mkdirSync(join(resolved, 'logs'), { recursive: true, mode: 0o700 });
    const stateFile = join(resolved, 'stack.json');
    if (existsSync(stateFile))
      return new ProductionStack(resolved, JSON.parse(readFileSync(stateFile, 'utf8')) as StackState);
    const ports = options.freePorts ? await freePorts() : defaultPorts();
    const seaweed: number[] = [];
    for (let index = 0; index < 9; index += 1)
      seaweed.push(options.freePorts ? await freeLowPort() : await findFreePort());
    const stack = new ProductionStack(resolved, {
      version: 1,
      ports: { ...ports, seaweed },
      secrets: { postgresSuperuser: secret(), temporal: secret() },
      processes: {},
      workers: [],
      workerEnvironment: {},
    });
    stack.save();
    return stack;
  }

  get ports(): StackPorts {
    return this.state.ports;
  }

  /** `127.0.0.1:<frontend port>`: TEMPORAL_ADDRESS of the CLI and of workers on this host. */
  get address(): string {
    return `${HOST}:${this.state.ports.temporal.frontend.grpcPort}`;
  }

  get namespace(): string {
    return STACK_TOPOLOGY.temporal.namespace;
  }

  get uiUrl(): string {
    return `http://${HOST}:${this.state.ports.ui}`;
  }

  get s3Endpoint(): string {
    return `http://${HOST}:${this.state.ports.s3}`;
  }

  get workers(): readonly StackWorker[] {
    return this.state.workers;
  }

  /** The worker machines of `up --machines` (also while the stack is down). */
  get machines(): readonly WorkerMachine[] {
    return this.state.machines ?? [];
  }

  /** The machine called `name` (`machine-2`); a StackError naming the machines there are otherwise. */
  machine(name: string): WorkerMachine {
    const machine = this.machines.find((candidate) => candidate.name === name);
    if (machine) return machine;
    const names = this.machines.map((candidate) => candidate.name);
    throw new StackError(
      `This stack has no machine ${name} (${names.length > 0 ? `its machines: ${names.join(', ')}` : "it has none: 'stack up --machines N' makes them"}).`,
    );
  }

  /** The S3 variables of a client of the stack's store (and where transcripts go). */
  s3Environment(host = HOST): Record<string, string> {
    const { accessKeyId, secretAccessKey } = prepareSeaweedDirectory(this.seaweedDirectory);
    return {
      AWS_ENDPOINT_URL: `http://${host}:${this.state.ports.s3}`,
      AWS_REGION: STACK_TOPOLOGY.s3.region,
      AWS_ACCESS_KEY_ID: accessKeyId,
      AWS_SECRET_ACCESS_KEY: secretAccessKey,
      REACT_AGENT_TRANSCRIPT_STORE: `s3://${STACK_TOPOLOGY.s3.bucket}/${STACK_TOPOLOGY.s3.transcriptPrefix}`,
    };
  }

  /** What the CLI (or a test's client) needs to reach this stack: Temporal, the namespace, the queues and the store. */
  clientEnvironment(): Record<string, string> {
    return { TEMPORAL_ADDRESS: this.address, ...STACK_TOPOLOGY.workers.environment, ...this.s3Environment() };
  }

  private get stateFile(): string {
    return join(this.directory, 'stack.json');
  }

  private get seaweedDirectory(): string {
    return join(this.directory, 'seaweedfs');
  }

  private logFile(name: string): string {
    return join(this.directory, 'logs', `${name}.log`);
  }

  private save(): void {
    const temporary = `${this.stateFile}.${process.pid}.tmp`;
    writeFileSync(temporary, `${JSON.stringify(this.state, null, 2)}\n`, { mode: 0o600 });
    renameSync(temporary, this.stateFile);
  }

  private record(name: string, daemon: DaemonRecord | undefined): void {
    if (daemon === undefined) delete this.state.processes[name];
    else this.state.processes[name] = daemon;
    this.save();
  }

  postgres(): PostgresCluster {
    return new PostgresCluster({
      dataDirectory: join(this.directory, 'postgresql', 'data'),
      port: this.state.ports.postgres,
      superuserPassword: this.state.secrets.postgresSuperuser,
      logFile: join(this.directory, 'postgresql', 'postgresql.log'),
      bin: findPostgresBin(process.env, STACK_TOPOLOGY.postgresql.version),
    });
  }

  /** Starts whatever is not running, in order; resolves when the stack answers end to end. */
  async up(options: StackUpOptions = {}): Promise<void> {
    const log = options.log ?? (() => undefined);
    const machineCount = options.machines ?? this.machines.length;
    if (!Number.isInteger(machineCount) || machineCount < 0 || machineCount > MAX_MACHINES)
      throw new StackError(`--machines must be 0 to ${MAX_MACHINES}, got ${machineCount}`);
    if (machineCount > 0) {
      // Before anything starts: without namespaces there is nothing to start them for.
      const problem = machineSupportProblem();
      if (problem !== undefined)
        throw new StackError(
          options.machines !== undefined
            ? `--machines needs network namespaces: ${problem}.`
            : `This stack's ${machineCount} worker machines need network namespaces: ${problem} ('stack up --machines 0' puts the workers on the host).`,
        );
    }
    const tools = temporalServerTools();
    if (options.workerEnvironment !== undefined) this.state.workerEnvironment = { ...options.workerEnvironment };
    await this.upPostgres(tools.sqlTool, log);
    await this.upTemporal(tools.server, log);
    await this.upNamespace(log);
    await this.upSeaweed(log);
    if (options.ui !== false) await this.upUi(tools.uiServer, log);
    await this.upMachines(machineCount, log);
    await this.upWorkers(options.workers, options.machines !== undefined, log);
  }

  private async upPostgres(sqlTool: string, log: (line: string) => void): Promise<void> {
    const postgres = this.postgres();
    mkdirSync(join(this.directory, 'postgresql'), { recursive: true });
    if (postgres.initialise()) log(`PostgreSQL: new cluster in ${postgres.dataDirectory}`);
    if (!postgres.running) {
      if (!(await isPortFree(postgres.port)))
        throw new StackError(
          `Cannot start PostgreSQL: port ${postgres.port} on ${HOST} is in use (another PostgreSQL? Stop it, or make a new stack with --free-ports).`,
        );
      const started = Date.now();
      postgres.start();
      log(`PostgreSQL: started on ${HOST}:${postgres.port} (pid ${postgres.pid}, ${Date.now() - started} ms)`);
    }
    const { user, database, visibilityDatabase, visibilityExtensions } = STACK_TOPOLOGY.postgresql;
    if (existsSync(join(this.directory, 'postgresql', 'schema-ready'))) {
      // Schemas applied at an earlier up; update-schema would be a no-op.
      return;
    }
    postgres.ensureRole(user, this.state.secrets.temporal);
    const sql = (databaseName: string, args: string[]) => {
      const result = spawnSync(
        sqlTool,
        [
          '--plugin',
          STACK_TOPOLOGY.temporal.plugin,
          '--ep',
          HOST,
          '--port',
          String(postgres.port),
          '--user',
          user,
          '--password',
          this.state.secrets.temporal,
          '--db',
          databaseName,
          ...args,
        ],
        {
          encoding: 'utf8',
          timeout: 300_000,
        },
      );
      if (result.status !== 0)
        throw new StackError(
          `temporal-sql-tool ${args.join(' ')} (database ${databaseName}) failed: ${`${result.stderr}${result.stdout}`.trim().split('\n').slice(-8).join('\n')}`,
        );
    };
    for (const [name, schema] of [
      [database, STACK_TOPOLOGY.temporal.schemas.temporal],
      [visibilityDatabase, STACK_TOPOLOGY.temporal.schemas.visibility],
    ] as const) {
      if (postgres.sql(`SELECT 1 FROM pg_database WHERE datname = '${name}'`) !== '1') sql(name, ['create-database']);
      if (name === visibilityDatabase)
        for (const extension of visibilityExtensions) postgres.sql(`CREATE EXTENSION IF NOT EXISTS ${extension}`, name);
      // As in docker-compose.yml's temporal-schema: setup-schema -v 0.0 leaves a database with a newer schema as it is.
      sql(name, ['setup-schema', '-v', '0.0']);
      sql(name, ['update-schema', '--schema-name', schema]);
      log(`PostgreSQL: ${name} at the latest ${schema} schema`);
    }
    writeFileSync(join(this.directory, 'postgresql', 'schema-ready'), `${new Date().toISOString()}\n`);
  }

  private temporalSettings() {
    const dynamicConfigFile = join(this.directory, 'dynamicconfig.yaml');
    writeFileSync(dynamicConfigFile, readFileSync(join(PROJECT_ROOT, STACK_TOPOLOGY.temporal.dynamicConfig)));
    return {
      bindAddress: HOST,
      postgresHost: HOST,
      postgresPort: this.state.ports.postgres,
      postgresPassword: this.state.secrets.temporal,
      dynamicConfigFile,
      ports: this.state.ports.temporal,
    };
  }

  /** Starts one Temporal service (when not running) and waits until its gRPC port answers. */
  async startTemporalService(service: TemporalServiceName, serverBinary = temporalServerTools().server): Promise<void> {
    const name = `temporal-${service}`;
    if (isAlive(this.state.processes[name])) return;
    const ports = this.state.ports.temporal[service];
    const listeners = [
      ports.grpcPort,
      ports.membershipPort,
      ports.metricsPort,
      ...(ports.httpPort ? [ports.httpPort] : []),
    ];
    for (const port of listeners) {
      const deadline = Date.now() + 15_000;
      while (!(await isPortFree(port))) {
        if (Date.now() > deadline)
          throw new StackError(`Cannot start Temporal's ${service} service: port ${port} on ${HOST} is in use.`);
        await delay(250);
      }
    }
    const environment = { ...process.env, ...temporalServiceEnvironment(service, this.temporalSettings()) };
    const daemon = spawnDaemon(serverBinary, ['--allow-no-auth', 'start'], {
      env: environment,
      cwd: this.directory,
      logFile: this.logFile(name),
    });
    this.record(name, daemon);
    const deadline = Date.now() + 90_000;
    while (!(await tcpAnswers(HOST, ports.grpcPort))) {
      if (!isAlive(daemon))
        throw new StackError(
          `Temporal's ${service} service exited while starting. Last lines of ${this.logFile(name)}:\n${tail(this.logFile(name))}`,
        );
      if (Date.now() > deadline)
        throw new StackError(
          `Temporal's ${service} service did not listen on ${HOST}:${ports.grpcPort} within 90 s; see ${this.logFile(name)}`,
        );
      await delay(200);
    }
  }

  private async upTemporal(serverBinary: string, log: (line: string) => void): Promise<void> {
    for (const service of TEMPORAL_SERVICES) {
      if (isAlive(this.state.processes[`temporal-${service}`])) continue;
      const started = Date.now();
      await this.startTemporalService(service, serverBinary);
      log(
        `Temporal ${service}: pid ${this.state.processes[`temporal-${service}`]?.pid} on ${HOST}:${this.state.ports.temporal[service].grpcPort} (${Date.now() - started} ms)`,
      );
    }
  }

  /** Registers the namespace and the project's search attributes (when missing) and waits until a workflow can be started and terminated. */
  private async upNamespace(log: (line: string) => void): Promise<void> {
    const deadline = Date.now() + 180_000;
    let lastProblem = 'no answer yet';
    const started = Date.now();
    while (Date.now() < deadline) {
      const problem = await this.servingProblem(log).catch((error: unknown) =>
        error instanceof Error ? error.message : String(error),
      );
      if (problem === undefined) {
        log(
          `Temporal: namespace ${this.namespace} with the project's search attributes, serving (${Date.now() - started} ms)`,
        );
        return;
      }
      lastProblem = problem;
      await delay(1_000);
    }
    throw new StackError(
      `Temporal at ${this.address} did not become ready within 180 s (last problem: ${lastProblem}); see the logs in ${join(this.directory, 'logs')}`,
    );
  }

  /**
   * Undefined when Temporal serves end to end — the namespace and search attributes exist (they
   * are registered here when missing), a workflow can be started and terminated (frontend,
   * history, PostgreSQL) and matching describes a queue; otherwise what failed. Every call has a
   * deadline: while history is down, calls would otherwise hang.
   */
  async servingProblem(log: (line: string) => void = () => undefined): Promise<string | undefined> {
    const connection = await Connection.connect({ address: this.address, connectTimeout: 3_000 });
    try {
      return await connection.withDeadline(Date.now() + 10_000, async () => {
        const namespace = this.namespace;
        try {
          await connection.workflowService.describeNamespace({ namespace });
        } catch (error) {
          if (!/not found/i.test((error as Error).message)) throw error;
          await connection.workflowService.registerNamespace({
            namespace,
            workflowExecutionRetentionPeriod: msToTs(`${STACK_TOPOLOGY.temporal.retentionDays} days`),
            description: 'react-agent production stack',
          });
          log(`Temporal: registered namespace ${namespace} (retention ${STACK_TOPOLOGY.temporal.retentionDays} days)`);
          return 'namespace just registered';
        }
        const registered =
          (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
        const missing = Object.entries(PROJECT_SEARCH_ATTRIBUTES).filter(([name]) => !(name in registered));
        if (missing.length > 0) {
          await connection.operatorService.addSearchAttributes({
            namespace,
            searchAttributes: Object.fromEntries(
              missing.map(([name, type]) => [
                name,
                INDEXED_VALUE_TYPES[type] as temporal.api.enums.v1.IndexedValueType,
              ]),
            ),
          });
          log(`Temporal: registered search attributes ${missing.map(([name, type]) => `${name}=${type}`).join(', ')}`);
          return 'search attributes just registered';
        }
        // End to end: frontend → history → PostgreSQL, and matching answering for a queue.
        const start = await connection.workflowService.startWorkflowExecution({
          namespace,
          workflowId: PROBE_WORKFLOW_ID,
          workflowType: { name: 'stackReadinessProbe' },
          taskQueue: { name: 'react-agent-stack-probe' },
          requestId: randomBytes(16).toString('hex'),
          identity: 'react-agent stack',
          workflowIdReusePolicy: temporal.api.enums.v1.WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
          workflowIdConflictPolicy:
            temporal.api.enums.v1.WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
        });
        await connection.workflowService.terminateWorkflowExecution({
          namespace,
          workflowExecution: { workflowId: PROBE_WORKFLOW_ID, runId: start.runId },
          reason: 'readiness probe of react-agent stack up',
        });
        await connection.workflowService.describeTaskQueue({
          namespace,
          taskQueue: { name: 'react-agent-stack-probe' },
          taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
        });
        return undefined;
      });
    } finally {
      await connection.close().catch(() => undefined);
    }
  }

  private async upSeaweed(log: (line: string) => void): Promise<void> {
    if (isAlive(this.state.processes.seaweedfs)) return;
    const weed = resolveWeedBinary();
    // `weed mini` refuses a port held on any address, and the machines' relays hold the S3 port on
    // the host ends of their links: they stop here, and `upMachines` starts them again after.
    await this.stopRelays(log);
    for (const port of [this.state.ports.s3, ...this.state.ports.seaweed]) {
      const deadline = Date.now() + 15_000;
      while (!(await isPortFree(port))) {
        if (Date.now() > deadline) throw new StackError(`Cannot start SeaweedFS: port ${port} on ${HOST} is in use.`);
        await delay(250);
      }
    }
    const { accessKeyId, secretAccessKey } = prepareSeaweedDirectory(this.seaweedDirectory);
    const started = Date.now();
    const daemon = spawnDaemon(
      weed,
      weedMiniArguments(this.seaweedDirectory, { s3: this.state.ports.s3, others: this.state.ports.seaweed }),
      {
        env: process.env,
        cwd: this.seaweedDirectory,
        logFile: this.logFile('seaweedfs'),
      },
    );
    this.record('seaweedfs', daemon);
    const deadline = Date.now() + 60_000;
    while (!(await s3PortAnswers(this.state.ports.s3))) {
      if (!isAlive(daemon))
        throw new StackError(
          `SeaweedFS exited while starting. Last lines of ${this.logFile('seaweedfs')}:\n${tail(this.logFile('seaweedfs'))}`,
        );
      if (Date.now() > deadline)
        throw new StackError(
          `SeaweedFS did not answer on ${this.s3Endpoint} within 60 s; see ${this.logFile('seaweedfs')}`,
        );
      await delay(200);
    }
    const client = new S3Client({
      endpoint: this.s3Endpoint,
      region: STACK_TOPOLOGY.s3.region,
      forcePathStyle: true,
      credentials: { accessKeyId, secretAccessKey },
      maxAttempts: 1,
    });
    try {
      for (;;) {
        try {
          await client.send(new CreateBucketCommand({ Bucket: STACK_TOPOLOGY.s3.bucket }));
          break;
        } catch (error) {
          const name = (error as Error).name;
          if (name === 'BucketAlreadyOwnedByYou' || name === 'BucketAlreadyExists') break;
          if (Date.now() > deadline)
            throw new StackError(
              `SeaweedFS did not create the bucket ${STACK_TOPOLOGY.s3.bucket}: ${name} ${(error as Error).message}`,
            );
          await delay(300);
        }
      }
    } finally {
      client.destroy();
    }
    log(
      `SeaweedFS: S3 on ${this.s3Endpoint}, bucket ${STACK_TOPOLOGY.s3.bucket} (pid ${daemon.pid}, ${Date.now() - started} ms)`,
    );
  }

  private async upUi(uiServer: string | undefined, log: (line: string) => void): Promise<void> {
    if (uiServer === undefined) {
      log('Web UI: not built (npm run setup:temporal-server builds it when it can); skipped');
      return;
    }
    if (isAlive(this.state.processes.ui)) return;
    if (!(await isPortFree(this.state.ports.ui)))
      throw new StackError(`Cannot start the Web UI: port ${this.state.ports.ui} on ${HOST} is in use.`);
    const configDirectory = join(this.directory, 'ui-config');
    mkdirSync(configDirectory, { recursive: true });
    writeFileSync(
      join(configDirectory, 'stack.yaml'),
      [
        `temporalGrpcAddress: ${this.address}`,
        `host: ${HOST}`,
        `port: ${this.state.ports.ui}`,
        'enableUi: true',
        'defaultNamespace: default',
        'cors:',
        '  cookieInsecure: true',
        'auth:',
        '  enabled: false',
        '',
      ].join('\n'),
    );
    const daemon = spawnDaemon(
      uiServer,
      ['--root', this.directory, '--config', 'ui-config', '--env', 'stack', 'start'],
      { env: process.env, cwd: this.directory, logFile: this.logFile('ui') },
    );
    this.record('ui', daemon);
    const deadline = Date.now() + 30_000;
    while ((await httpStatus(this.state.ports.ui, '/')) === undefined) {
      if (!isAlive(daemon))
        throw new StackError(
          `The Web UI server exited while starting. Last lines of ${this.logFile('ui')}:\n${tail(this.logFile('ui'))}`,
        );
      if (Date.now() > deadline)
        throw new StackError(`The Web UI did not answer on ${this.uiUrl} within 30 s; see ${this.logFile('ui')}`);
      await delay(200);
    }
    log(`Web UI: ${this.uiUrl} (pid ${daemon.pid})`);
  }

  /** The environment of a worker of `role`: the topology's queues and fleet settings, Temporal, the S3 store, its own data folder (as seen from the host). */
  workerEnvironment(worker: StackWorker): Record<string, string> {
    const fleet = STACK_TOPOLOGY.workers.fleets.find((candidate) => candidate.role === worker.role);
    return {
      ...this.state.workerEnvironment,
      ...STACK_TOPOLOGY.workers.environment,
      ...(fleet?.environment ?? {}),
      REACT_AGENT_WORKER_ROLE: worker.role,
      TEMPORAL_ADDRESS: this.address,
      ...this.s3Environment(),
      REACT_AGENT_DATA_DIR: join(this.directory, 'workers', worker.name),
    };
  }

  /** Everything a worker process gets: this process's environment and {@link workerEnvironment}, its loopback addresses moved across the link on a machine. */
  private processEnvironment(worker: StackWorker): NodeJS.ProcessEnv {
    const environment = { ...process.env, ...this.workerEnvironment(worker) };
    return worker.machine === undefined
      ? environment
      : environmentOnMachine(environment, this.machine(worker.machine).hostAddress);
  }

  /** The ports a machine's relay forwards: every loopback port a worker of any role is given (Temporal's frontend, S3, a model server on loopback). */
  private portsToRelay(): number[] {
    const ports = STACK_TOPOLOGY.workers.fleets.flatMap((fleet) =>
      loopbackPorts({
        ...process.env,
        ...this.workerEnvironment({ name: `worker-${fleet.role}-1`, role: fleet.role }),
      }),
    );
    return [...new Set(ports)].sort((a, b) => a - b);
  }

  /**
   * Makes the `count` machines that do not exist (all anew, in a free subnet, when none does),
   * deletes those beyond `count`, and starts each machine's relay when it is not running or
   * forwards other ports than it should.
   */
  private async upMachines(count: number, log: (line: string) => void): Promise<void> {
    for (const surplus of this.machines.slice(count)) {
      await this.removeMachine(surplus);
      log(`Machine ${surplus.name}: deleted (${surplus.namespace})`);
    }
    if (count === 0) {
      this.state.machines = [];
      this.save();
      return;
    }
    const tag = (this.state.machineTag ??= randomBytes(2).toString('hex'));
    let subnet = this.state.machineSubnet;
    const existing = this.machines.slice(0, count).filter((machine) => machineLinkState(machine) !== 'missing');
    if (existing.length === 0 || subnet === undefined) {
      subnet = chooseSubnet(subnetsInUse(hostAddressListing()), subnet ?? preferredSubnet(tag));
      if (subnet === undefined)
        throw new StackError(`No /24 of 10.231.0.0/16 is free on this host for the worker machines.`);
    }
    this.state.machineSubnet = subnet;
    const made: WorkerMachine[] = [];
    const machines: WorkerMachine[] = [];
    try {
      for (let index = 1; index <= count; index += 1) {
        const machine = machineLayout(tag, subnet, index);
        const state = machineLinkState(machine);
        if (state === 'missing') {
          // Whatever is left of it (a namespace without its link, after a crash) goes first.
          deleteMachine(machine);
          createMachine(machine);
          made.push(machine);
          log(
            `Machine ${machine.name}: network namespace ${machine.namespace}, ${machine.address} (host end ${machine.hostAddress} on ${machine.hostInterface})`,
          );
        } else if (state === 'cut') {
          log(`Machine ${machine.name}: its link is cut ('stack restore ${machine.name}' brings it back)`);
        }
        machines.push(machine);
      }
    } catch (error) {
      for (const machine of made) deleteMachine(machine);
      throw error;
    }
    this.state.machines = machines;
    this.save();
    const ports = this.portsToRelay();
    await Promise.all(machines.map((machine) => this.startRelay(machine, ports, made.includes(machine), log)));
  }

  private relayName(machine: WorkerMachine): string {
    return `relay-${machine.name}`;
  }

  /** Starts the machine's relay unless it runs for these ports on a machine not made anew. */
  private async startRelay(
    machine: WorkerMachine,
    ports: number[],
    madeAnew: boolean,
    log: (line: string) => void,
  ): Promise<void> {
    const name = this.relayName(machine);
    const relayed = this.state.relayedPorts?.[machine.name];
    if (!madeAnew && isAlive(this.state.processes[name]) && relayed?.join(',') === ports.join(',')) return;
    await stopDaemon(this.state.processes[name], 5_000);
    const logFile = this.logFile(name);
    const offset = existsSync(logFile) ? readFileSync(logFile).length : 0;
    const daemon = spawnDaemon(
      process.execPath,
      [
        ...projectEntryArguments('src/processes/production-stack/machine-relay-main.ts'),
        machine.hostAddress,
        ...ports.map(String),
      ],
      {
        env: process.env,
        cwd: PROJECT_ROOT,
        logFile,
      },
    );
    this.record(name, daemon);
    this.state.relayedPorts = { ...this.state.relayedPorts, [machine.name]: ports };
    this.save();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const output = readFileSync(logFile).subarray(offset).toString('utf8');
      if (output.includes('relay: ready')) break;
      if (!isAlive(daemon))
        throw new StackError(
          `The relay of ${machine.name} exited while starting. Last lines of ${logFile}:\n${output.trim().split('\n').slice(-8).join('\n')}`,
        );
      if (Date.now() > deadline)
        throw new StackError(`The relay of ${machine.name} did not start within 60 s; see ${logFile}`);
      await delay(100);
    }
    log(`Machine ${machine.name}: relay on ${machine.hostAddress} for ports ${ports.join(', ')} (pid ${daemon.pid})`);
  }

  /** Stops every machine's relay (the machines' workers lose Temporal, S3 and the model until it runs again). */
  private async stopRelays(log: (line: string) => void): Promise<void> {
    for (const machine of this.machines) {
      const name = this.relayName(machine);
      if (!isAlive(this.state.processes[name])) continue;
      await stopDaemon(this.state.processes[name], 5_000);
      this.record(name, undefined);
      log(`Machine ${machine.name}: relay stopped while SeaweedFS starts`);
    }
  }

  /** Stops the machine's workers and relay and deletes its namespace and veth pair. */
  private async removeMachine(machine: WorkerMachine): Promise<void> {
    await Promise.all(
      this.state.workers
        .filter((worker) => worker.machine === machine.name)
        .map((worker) => stopDaemon(this.state.processes[worker.name], 15_000)),
    );
    await stopDaemon(this.state.processes[this.relayName(machine)], 5_000);
    this.record(this.relayName(machine), undefined);
    deleteMachine(machine);
  }

  /**
   * Decides the workers (when `counts` are given, the machines changed, or there are none yet:
   * the topology's replicas) and starts those not running, a few at a time: on a small machine,
   * many workers loading at once each take long to poll.
   */
  private async upWorkers(
    counts: Partial<Record<WorkerRole, number>> | undefined,
    machinesChanged: boolean,
    log: (line: string) => void,
  ): Promise<void> {
    if (counts !== undefined || machinesChanged || this.state.workers.length === 0) {
      const roles = STACK_TOPOLOGY.workers.fleets.map((fleet) => fleet.role);
      const wantedCounts =
        counts !== undefined
          ? counts
          : this.state.workers.length > 0
            ? workerCounts(this.state.workers)
            : Object.fromEntries(STACK_TOPOLOGY.workers.fleets.map((fleet) => [fleet.role, fleet.replicas]));
      const wanted = placeWorkers(
        roles,
        wantedCounts,
        this.machines.map((machine) => machine.name),
      );
      // Workers no longer wanted, or wanted on another machine, are stopped.
      for (const old of this.state.workers) {
        if (!wanted.some((worker) => worker.name === old.name && worker.machine === old.machine)) {
          await stopDaemon(this.state.processes[old.name], 15_000);
          this.record(old.name, undefined);
        }
      }
      this.state.workers = wanted;
      this.save();
    }
    await forEachAtMost([...this.state.workers], availableParallelism(), (worker) => this.startWorker(worker, log));
  }

  /** Starts the worker when it is not running (inside its machine's namespace when it has one); resolves once it polls. */
  async startWorker(worker: StackWorker, log: (line: string) => void = () => undefined): Promise<void> {
    if (isAlive(this.state.processes[worker.name])) return;
    const environment = this.processEnvironment(worker);
    mkdirSync(environment.REACT_AGENT_DATA_DIR as string, { recursive: true });
    const logFile = this.logFile(worker.name);
    const offset = existsSync(logFile) ? readFileSync(logFile).length : 0;
    const nodeArguments = projectEntryArguments('worker/main.ts');
    const machine = worker.machine === undefined ? undefined : this.machine(worker.machine);
    // `ip netns exec` execs node in the namespace: the recorded pid is the worker's.
    const [command, args] = machine
      ? ['ip', ['netns', 'exec', machine.namespace, process.execPath, ...nodeArguments]]
      : [process.execPath, nodeArguments];
    const started = Date.now();
    const daemon = spawnDaemon(command as string, args as string[], { env: environment, cwd: PROJECT_ROOT, logFile });
    this.record(worker.name, daemon);
    const deadline = Date.now() + 120_000;
    for (;;) {
      const output = readFileSync(logFile).subarray(offset).toString('utf8');
      if (output.includes('react-agent worker:')) break;
      if (!isAlive(daemon))
        throw new StackError(
          `Worker ${worker.name} exited while starting. Last lines of ${logFile}:\n${output.trim().split('\n').slice(-12).join('\n')}`,
        );
      if (Date.now() > deadline)
        throw new StackError(`Worker ${worker.name} did not start within 120 s; see ${logFile}`);
      await delay(200);
    }
    log(
      `Worker ${worker.name} (${worker.role}${machine ? `, on ${machine.name} ${machine.address}` : ''}): pid ${daemon.pid} (${Date.now() - started} ms)`,
    );
  }

  /** `stack cut <machine>`: sets the host's end of the machine's link down; its workers keep running, cut off. */
  cutMachine(name: string): void {
    const machine = this.machine(name);
    if (machineLinkState(machine) === 'missing')
      throw new StackError(`Machine ${name} does not exist now ('stack up' makes it).`);
    cutMachine(machine);
  }

  /** `stack restore <machine>`: sets the machine's link up again. */
  restoreMachine(name: string): void {
    const machine = this.machine(name);
    if (machineLinkState(machine) === 'missing')
      throw new StackError(`Machine ${name} does not exist now ('stack up' makes it).`);
    restoreMachine(machine);
  }

  /** The process record of `name` (`temporal-history`, `seaweedfs`, `worker-model-1`, ...) while it runs. */
  processOf(name: string): DaemonRecord | undefined {
    const record = this.state.processes[name];
    return isAlive(record) ? record : undefined;
  }

  /** SIGKILL a process of the stack (a crash); `up` (or the start methods) bring it back. */
  async kill(name: string): Promise<void> {
    if (name === 'postgresql') throw new StackError('use stopPostgres("immediate") for PostgreSQL');
    await killDaemon(this.state.processes[name]);
  }

  /** SIGTERM, then SIGKILL after `graceMs`. */
  async stop(name: string, graceMs = 15_000): Promise<void> {
    await stopDaemon(this.state.processes[name], graceMs);
  }

  /** `pg_ctl stop -m immediate` (a crash: recovery at the next start) or `fast`. */
  stopPostgres(mode: 'fast' | 'immediate'): void {
    this.postgres().stop(mode);
  }

  startPostgres(): void {
    const postgres = this.postgres();
    if (!postgres.running) postgres.start();
  }

  /** Every process of the stack and whether it answers. */
  async status(): Promise<StackProcessStatus[]> {
    const rows: StackProcessStatus[] = [];
    const postgres = this.postgres();
    const pgPid = postgres.pid;
    rows.push({
      name: 'postgresql',
      ...(pgPid ? { pid: pgPid } : {}),
      running: pgPid !== undefined,
      health: pgPid === undefined ? 'stopped' : postgres.ready() ? 'ready' : 'not accepting connections',
      address: `${HOST}:${postgres.port}`,
    });
    for (const service of TEMPORAL_SERVICES) {
      const name = `temporal-${service}`;
      const record = this.processOf(name);
      const ports = this.state.ports.temporal[service];
      let health = 'stopped';
      if (record) {
        const [grpc, metrics] = await Promise.all([
          tcpAnswers(HOST, ports.grpcPort),
          httpStatus(ports.metricsPort, '/metrics'),
        ]);
        health = !grpc
          ? `gRPC ${ports.grpcPort} not answering`
          : metrics !== 200
            ? `metrics ${ports.metricsPort} not answering`
            : 'ready';
        if (service === 'frontend' && health === 'ready') health = (await this.frontendProblem()) ?? 'ready';
      }
      rows.push({
        name,
        ...(record ? { pid: record.pid } : {}),
        running: record !== undefined,
        health,
        address: `${HOST}:${ports.grpcPort}`,
      });
    }
    const seaweed = this.processOf('seaweedfs');
    rows.push({
      name: 'seaweedfs',
      ...(seaweed ? { pid: seaweed.pid } : {}),
      running: seaweed !== undefined,
      health: seaweed ? ((await s3PortAnswers(this.state.ports.s3)) ? 'ready' : 'S3 not answering') : 'stopped',
      address: this.s3Endpoint,
    });
    const ui = this.processOf('ui');
    if (ui || this.state.processes.ui)
      rows.push({
        name: 'ui',
        ...(ui ? { pid: ui.pid } : {}),
        running: ui !== undefined,
        health: ui ? ((await httpStatus(this.state.ports.ui, '/')) ? 'ready' : 'not answering') : 'stopped',
        address: this.uiUrl,
      });
    for (const machine of this.machines) {
      const relay = this.processOf(this.relayName(machine));
      const link = machineLinkState(machine);
      rows.push({
        name: machine.name,
        ...(relay ? { pid: relay.pid } : {}),
        running: link !== 'missing' && relay !== undefined,
        health: link === 'missing' ? 'no namespace' : link === 'cut' ? 'link cut' : relay ? 'ready' : 'relay stopped',
        address: `${machine.address} (netns ${machine.namespace}; host end ${machine.hostAddress})`,
      });
    }
    for (const worker of this.state.workers) {
      const record = this.processOf(worker.name);
      const machine =
        worker.machine === undefined ? undefined : this.machines.find((candidate) => candidate.name === worker.machine);
      rows.push({
        name: worker.name,
        ...(record ? { pid: record.pid } : {}),
        running: record !== undefined,
        health: record ? 'running' : 'stopped',
        ...(machine ? { address: `${machine.name} ${machine.address}`, machine: machine.name } : {}),
      });
    }
    return rows;
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

  /** SIGKILL every process of the stack, delete its machines and stop PostgreSQL at once, synchronously (for a test's exit hook: nothing may outlive it). */
  killAllNow(): void {
    for (const record of Object.values(this.state.processes)) {
      if (!isAlive(record)) continue;
      try {
        process.kill(-record.pid, 'SIGKILL');
      } catch {
        // gone
      }
    }
    for (const machine of this.machines) deleteMachine(machine);
    try {
      this.postgres().stop('immediate');
    } catch {
      // not running, or not installed
    }
  }

  /** Stops everything (workers first, then the machines' relays, deleting the machines; PostgreSQL last) and keeps the data and the machines' description. */
  async down(log: (line: string) => void = () => undefined): Promise<void> {
    const workerNames = this.state.workers.map((worker) => worker.name);
    await Promise.all(
      workerNames.map(async (name) => {
        if (this.processOf(name)) {
          await stopDaemon(this.state.processes[name], 20_000);
          log(`stopped ${name}`);
        }
      }),
    );
    for (const machine of this.machines) {
      const existed = machineLinkState(machine) !== 'missing';
      await this.removeMachine(machine);
      if (existed) log(`deleted ${machine.name} (network namespace ${machine.namespace} and its veth pair)`);
    }
    for (const name of [
      'ui',
      'seaweedfs',
      ...[...TEMPORAL_SERVICES].reverse().map((service) => `temporal-${service}`),
    ]) {
      if (this.processOf(name)) {
        await stopDaemon(this.state.processes[name], 15_000);
        log(`stopped ${name}`);
      }
    }
    for (const name of Object.keys(this.state.processes))
      if (!isAlive(this.state.processes[name])) delete this.state.processes[name];
    this.save();
    const postgres = this.postgres();
    if (postgres.running) {
      postgres.stop('fast');
      log('stopped postgresql');
    }
  }
}
