import topologyData from './stack-topology.json';

/**
 * The production stack's one description (src/config/stack-topology.json, docs/production.md):
 * PostgreSQL, Temporal's four services with their ports, the Web UI, the S3 store and the worker
 * fleets by role. `react-agent stack` starts it natively; docker-compose.yml describes the same
 * services and scripts/validate-compose.mjs fails when it disagrees with this file.
 */
export type TemporalServiceName = 'history' | 'matching' | 'frontend' | 'worker';

/** In the order the stack starts them (and the reverse of the order it stops them). */
export const TEMPORAL_SERVICES: readonly TemporalServiceName[] = ['history', 'matching', 'frontend', 'worker'];

export interface TemporalServicePorts {
  grpcPort: number;
  membershipPort: number;
  /** The frontend's HTTP API. */
  httpPort?: number;
  /** Prometheus metrics of this process. */
  metricsPort: number;
}

export interface WorkerFleet {
  role: 'workflows' | 'model' | 'tools';
  replicas: number;
  environment: Record<string, string>;
}

export interface StackTopology {
  postgresql: {
    version: number;
    port: number;
    user: string;
    database: string;
    visibilityDatabase: string;
    visibilityExtensions: string[];
  };
  temporal: {
    serverVersion: string;
    plugin: string;
    numHistoryShards: number;
    namespace: string;
    retentionDays: number;
    schemas: { temporal: string; visibility: string };
    /** Relative to the project root. */
    dynamicConfig: string;
    services: Record<TemporalServiceName, TemporalServicePorts>;
  };
  ui: { version: string; port: number };
  s3: { port: number; bucket: string; transcriptPrefix: string; region: string };
  workers: { environment: Record<string, string>; fleets: WorkerFleet[] };
}

export const STACK_TOPOLOGY: StackTopology = topologyData as unknown as StackTopology;

/** Where each Temporal service process of a stack listens. */
export interface TemporalServiceSettings {
  /** Address every service binds and announces (membership): 127.0.0.1 natively. */
  bindAddress: string;
  postgresHost: string;
  postgresPort: number;
  postgresPassword: string;
  dynamicConfigFile: string;
  ports: Record<TemporalServiceName, TemporalServicePorts>;
}

/**
 * The environment of one Temporal service process: the variables of the server's embedded
 * configuration template (the same ones the temporalio/server image reads, so docker-compose.yml
 * sets the same names), plus `TEMPORAL_SERVICES` to run just `service`. Every service of a stack
 * gets the same configuration; only `TEMPORAL_SERVICES` and the metrics endpoint differ.
 */
export function temporalServiceEnvironment(
  service: TemporalServiceName,
  settings: TemporalServiceSettings,
  topology: StackTopology = STACK_TOPOLOGY,
): Record<string, string> {
  const { ports } = settings;
  return {
    DB: topology.temporal.plugin,
    DB_PORT: String(settings.postgresPort),
    // The visibility store reads POSTGRES_PORT (the main store DB_PORT): both are set.
    POSTGRES_PORT: String(settings.postgresPort),
    POSTGRES_SEEDS: settings.postgresHost,
    POSTGRES_USER: topology.postgresql.user,
    POSTGRES_PWD: settings.postgresPassword,
    DBNAME: topology.postgresql.database,
    VISIBILITY_DBNAME: topology.postgresql.visibilityDatabase,
    NUM_HISTORY_SHARDS: String(topology.temporal.numHistoryShards),
    BIND_ON_IP: settings.bindAddress,
    TEMPORAL_BROADCAST_ADDRESS: settings.bindAddress,
    FRONTEND_GRPC_PORT: String(ports.frontend.grpcPort),
    FRONTEND_HTTP_PORT: String(ports.frontend.httpPort ?? topology.temporal.services.frontend.httpPort),
    FRONTEND_MEMBERSHIP_PORT: String(ports.frontend.membershipPort),
    HISTORY_GRPC_PORT: String(ports.history.grpcPort),
    HISTORY_MEMBERSHIP_PORT: String(ports.history.membershipPort),
    MATCHING_GRPC_PORT: String(ports.matching.grpcPort),
    MATCHING_MEMBERSHIP_PORT: String(ports.matching.membershipPort),
    WORKER_GRPC_PORT: String(ports.worker.grpcPort),
    WORKER_MEMBERSHIP_PORT: String(ports.worker.membershipPort),
    PROMETHEUS_ENDPOINT: `${settings.bindAddress}:${ports[service].metricsPort}`,
    DYNAMIC_CONFIG_FILE_PATH: settings.dynamicConfigFile,
    LOG_LEVEL: 'warn',
    TEMPORAL_SERVICES: service,
  };
}
