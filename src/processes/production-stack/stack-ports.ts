import {
  STACK_TOPOLOGY,
  TEMPORAL_SERVICES,
  type TemporalServiceName,
  type TemporalServicePorts,
} from '../../config/stack-topology';
import { findFreePort, isPortFree } from '../ports';
import { StackError } from './stack-error';
import type { StackPorts } from './stack-state';

/** How many listeners `weed mini` has besides S3. */
const SEAWEED_LISTENERS = 9;

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

function topologyPorts(): Omit<StackPorts, 'seaweed'> {
  const services = STACK_TOPOLOGY.temporal.services;
  return {
    postgres: STACK_TOPOLOGY.postgresql.port,
    temporal: JSON.parse(JSON.stringify(services)) as Record<TemporalServiceName, TemporalServicePorts>,
    ui: STACK_TOPOLOGY.ui.port,
    s3: STACK_TOPOLOGY.s3.port,
  };
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

/**
 * The ports of a new stack: the topology's (7233, 5432, ...), or with `free` free ones in
 * 20000–32767; SeaweedFS's other listeners are free ones either way.
 */
export async function newStackPorts(free: boolean): Promise<StackPorts> {
  const ports = free ? await freePorts() : topologyPorts();
  const seaweed: number[] = [];
  for (let index = 0; index < SEAWEED_LISTENERS; index += 1)
    seaweed.push(free ? await freeLowPort() : await findFreePort());
  return { ...ports, seaweed };
}
