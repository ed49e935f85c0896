import assert from 'node:assert/strict';
import { test } from '@jest/globals';
import { PROJECT_SEARCH_ATTRIBUTES } from '../../src/core/search-attributes';
import { STACK_TOPOLOGY, TEMPORAL_SERVICES, temporalServiceEnvironment } from '../../src/config/stack-topology';
import { loadWorkerFleetConfig } from '../../src/config/worker-fleet-config';

const settings = {
  bindAddress: '127.0.0.1',
  postgresHost: '127.0.0.1',
  postgresPort: 25432,
  postgresPassword: 'secret',
  dynamicConfigFile: '/tmp/stack/dynamicconfig.yaml',
  ports: STACK_TOPOLOGY.temporal.services,
};

test('every Temporal service gets the same configuration but for the service it runs and its metrics port', () => {
  const environments = TEMPORAL_SERVICES.map((service) => temporalServiceEnvironment(service, settings));
  const shared = (environment: Record<string, string>) =>
    Object.fromEntries(
      Object.entries(environment).filter(([name]) => name !== 'TEMPORAL_SERVICES' && name !== 'PROMETHEUS_ENDPOINT'),
    );
  for (const environment of environments.slice(1))
    assert.deepEqual(shared(environment), shared(environments[0] as Record<string, string>));
  assert.deepEqual(
    environments.map((environment) => environment.TEMPORAL_SERVICES),
    ['history', 'matching', 'frontend', 'worker'],
  );
  assert.deepEqual(
    new Set(environments.map((environment) => environment.PROMETHEUS_ENDPOINT)).size,
    4,
    'each process has its own metrics port',
  );
  const history = environments[0] as Record<string, string>;
  assert.equal(history.HISTORY_GRPC_PORT, '7234');
  assert.equal(history.FRONTEND_GRPC_PORT, '7233');
  assert.equal(history.DB, 'postgres12');
  // Both port variables: the main store reads DB_PORT, the visibility store POSTGRES_PORT.
  assert.equal(history.DB_PORT, '25432');
  assert.equal(history.POSTGRES_PORT, '25432');
  assert.equal(history.DYNAMIC_CONFIG_FILE_PATH, '/tmp/stack/dynamicconfig.yaml');
});

test('the topology has distinct ports and worker fleets the worker configuration accepts', () => {
  const ports = [
    STACK_TOPOLOGY.postgresql.port,
    STACK_TOPOLOGY.ui.port,
    STACK_TOPOLOGY.s3.port,
    ...Object.values(STACK_TOPOLOGY.temporal.services).flatMap((service) => [
      service.grpcPort,
      service.membershipPort,
      service.metricsPort,
      ...(service.httpPort ? [service.httpPort] : []),
    ]),
  ];
  assert.equal(new Set(ports).size, ports.length, `ports repeat: ${ports.join(', ')}`);
  // Temporal keeps membership ports in a PostgreSQL smallint.
  for (const service of Object.values(STACK_TOPOLOGY.temporal.services)) assert.ok(service.membershipPort < 32_768);
  assert.deepEqual(
    STACK_TOPOLOGY.workers.fleets.map((fleet) => fleet.role),
    ['workflows', 'model', 'tools'],
  );
  for (const fleet of STACK_TOPOLOGY.workers.fleets) {
    const config = loadWorkerFleetConfig({
      ...STACK_TOPOLOGY.workers.environment,
      ...fleet.environment,
      REACT_AGENT_WORKER_ROLE: fleet.role,
    });
    assert.equal(config.role, fleet.role);
  }
  // The visibility store offers 3 Int columns on PostgreSQL: the project must not need more.
  assert.ok(Object.values(PROJECT_SEARCH_ATTRIBUTES).filter((type) => type === 'Int').length <= 3);
});
