#!/usr/bin/env node
// Validates docker-compose.yml without a Docker engine: `docker-compose config` (1.29.2, installed
// by scripts/setup-compose-validator.mjs) parses it, interpolates its variables and checks it
// against the compose schema; then this script checks the production shape on the resolved file:
// Temporal on PostgreSQL, the Web UI, an S3-compatible store, the search attributes of
// src/core/search-attributes.ts registered by a one-shot service, worker fleets by role with
// replicas, and the workers' store and queue variables; and that it describes the same stack as
// src/config/stack-topology.json, which `react-agent stack up` starts natively (versions, Temporal's
// four services and their ports, schemas, namespace, Web UI, S3 port and bucket, queues, fleets),
// so the two cannot drift apart.
//
//   npm run validate:compose                    (docker-compose.yml)
//   node scripts/validate-compose.mjs FILE      (another file; exit 1 with every problem listed)
//
// It runs nothing: no image is pulled and no container started.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const projectRoot = join(dirname(fileURLToPath(import.meta.url)), '..');
const file = resolve(process.argv[2] ?? join(projectRoot, 'docker-compose.yml'));
const venv = join(projectRoot, '.tools', 'compose-venv', 'bin');
const compose = process.env.DOCKER_COMPOSE || join(venv, 'docker-compose');

/** The project's search attributes, name → type, read from PROJECT_SEARCH_ATTRIBUTES. */
function projectSearchAttributes() {
  const source = readFileSync(join(projectRoot, 'src', 'core', 'search-attributes.ts'), 'utf8');
  const body = /PROJECT_SEARCH_ATTRIBUTES\s*=\s*\{([^}]*)\}/.exec(source)?.[1];
  if (!body) throw new Error('PROJECT_SEARCH_ATTRIBUTES not found in src/core/search-attributes.ts');
  return Object.fromEntries([...body.matchAll(/(\w+)\s*:\s*'(\w+)'/g)].map((match) => [match[1], match[2]]));
}

/** src/config/stack-topology.json: the stack `react-agent stack` starts natively. */
function stackTopology() {
  return JSON.parse(readFileSync(join(projectRoot, 'src', 'config', 'stack-topology.json'), 'utf8'));
}

/** `docker-compose config` of the file, as an object (converted from YAML by the venv's PyYAML). */
function resolvedConfig() {
  // Required secrets get a placeholder: the check is of the file, not of this shell's variables.
  const environment = {
    ...process.env,
    REACT_AGENT_S3_SECRET_ACCESS_KEY: process.env.REACT_AGENT_S3_SECRET_ACCESS_KEY || 'validation-only-placeholder',
  };
  const config = spawnSync(compose, ['--file', file, '--project-directory', dirname(file), 'config'], {
    encoding: 'utf8',
    env: environment,
  });
  if (config.error || config.status !== 0) {
    const reason =
      config.error?.code === 'ENOENT'
        ? `${compose} not found: run 'npm run setup' (installs docker-compose into .tools/compose-venv)`
        : config.stderr.trim();
    return { problems: [`docker-compose config failed: ${reason}`] };
  }
  const python = process.env.DOCKER_COMPOSE ? 'python3' : join(venv, 'python');
  const json = spawnSync(python, ['-c', 'import sys, json, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'], {
    input: config.stdout,
    encoding: 'utf8',
  });
  if (json.status !== 0) return { problems: [`could not read docker-compose config's output: ${json.stderr.trim()}`] };
  return { config: JSON.parse(json.stdout), problems: [] };
}

/** A service's image, its entrypoint and command as one line, and its environment as an object (compose allows a list of KEY=value too). */
const image = (service) => String(service.image ?? '');
const text = (service) => [service.entrypoint, service.command].flat().filter(Boolean).join(' ');
const environmentOf = (service) =>
  Array.isArray(service.environment)
    ? Object.fromEntries(service.environment.map((line) => line.split(/=(.*)/s)))
    : (service.environment ?? {});

/** Problems of the production shape, empty when it holds. */
export function shapeProblems(config, searchAttributes) {
  const problems = [];
  const services = config.services ?? {};
  const entries = Object.entries(services);

  const temporal = entries.find(([, service]) => /^temporalio\/(auto-setup|server)\b/.test(image(service)));
  if (!temporal) problems.push('no Temporal server service (image temporalio/auto-setup or temporalio/server)');
  else {
    const environment = environmentOf(temporal[1]);
    if (!/^postgres/.test(String(environment.DB ?? '')))
      problems.push(`the Temporal server does not use PostgreSQL (DB=${environment.DB})`);
    const seeds = String(environment.POSTGRES_SEEDS ?? '');
    if (!services[seeds] || !/^postgres\b/.test(image(services[seeds])))
      problems.push(`POSTGRES_SEEDS=${seeds} is not a postgres service`);
  }
  if (!entries.some(([, service]) => /^temporalio\/ui\b/.test(image(service))))
    problems.push('no Temporal Web UI service (image temporalio/ui)');
  if (
    !entries.some(([, service]) => /seaweedfs|minio/.test(image(service)) && /-s3\b|\bs3\b|server/.test(text(service)))
  )
    problems.push('no S3-compatible store service (SeaweedFS or MinIO)');

  const registrar = entries.find(([, service]) => text(service).includes('search-attribute create'));
  if (!registrar) problems.push('no service runs `temporal operator search-attribute create`');
  else {
    for (const [name, type] of Object.entries(searchAttributes)) {
      if (!new RegExp(`\\b${name}=${type}\\b|--name\\s+"?${name}"?\\s+--type\\s+"?${type}`).test(text(registrar[1])))
        problems.push(`search attribute ${name} (${type}) is not registered by ${registrar[0]}`);
    }
  }

  const workers = entries.filter(([, service]) => environmentOf(service).REACT_AGENT_WORKER_ROLE);
  for (const role of ['workflows', 'model', 'tools']) {
    const fleet = workers.filter(([, service]) => environmentOf(service).REACT_AGENT_WORKER_ROLE === role);
    if (fleet.length === 0) problems.push(`no worker service with REACT_AGENT_WORKER_ROLE=${role}`);
    for (const [name, service] of fleet)
      if (!(Number(service.deploy?.replicas) >= 1)) problems.push(`${name} has no deploy.replicas`);
  }
  for (const [name, service] of workers) {
    const environment = environmentOf(service);
    if (!['workflows', 'model', 'tools', 'all'].includes(environment.REACT_AGENT_WORKER_ROLE))
      problems.push(
        `${name}: REACT_AGENT_WORKER_ROLE=${environment.REACT_AGENT_WORKER_ROLE} is not workflows, model, tools or all`,
      );
    if (!/^s3:\/\/[^/]+/.test(String(environment.REACT_AGENT_TRANSCRIPT_STORE ?? '')))
      problems.push(`${name}: REACT_AGENT_TRANSCRIPT_STORE is not s3://bucket/...`);
    for (const variable of [
      'AWS_ENDPOINT_URL',
      'AWS_ACCESS_KEY_ID',
      'AWS_SECRET_ACCESS_KEY',
      'TEMPORAL_ADDRESS',
      'REACT_AGENT_MODEL_TASK_QUEUE',
      'REACT_AGENT_TOOL_TASK_QUEUE',
    ]) {
      if (!environment[variable]) problems.push(`${name}: ${variable} is not set`);
    }
    if (
      environment.REACT_AGENT_MODEL_TASK_QUEUE === environment.REACT_AGENT_TASK_QUEUE ||
      environment.REACT_AGENT_TOOL_TASK_QUEUE === environment.REACT_AGENT_TASK_QUEUE
    ) {
      problems.push(
        `${name}: a single role needs its own queue (REACT_AGENT_MODEL_TASK_QUEUE / REACT_AGENT_TOOL_TASK_QUEUE differ from REACT_AGENT_TASK_QUEUE)`,
      );
    }
    const dependsOn = service.depends_on ?? {};
    if (registrar && !dependsOn[registrar[0]]) problems.push(`${name} does not wait for ${registrar[0]}`);
    else if (registrar && dependsOn[registrar[0]].condition !== 'service_completed_successfully')
      problems.push(`${name} waits for ${registrar[0]} without condition service_completed_successfully`);
  }
  return problems;
}

/** Where the compose file and the native stack's topology (src/config/stack-topology.json) disagree; empty when they describe the same stack. */
export function topologyProblems(config, topology) {
  const problems = [];
  const services = config.services ?? {};
  const entries = Object.entries(services);
  const published = (service) =>
    (service.ports ?? []).map((port) => (typeof port === 'object' ? `${port.published}:${port.target}` : String(port)));

  const postgres = entries.find(([, service]) => /^postgres:/.test(image(service)));
  if (!postgres) problems.push('topology: no postgres service');
  else if (!image(postgres[1]).startsWith(`postgres:${topology.postgresql.version}`))
    problems.push(
      `topology: ${postgres[0]} runs ${image(postgres[1])}, the stack PostgreSQL ${topology.postgresql.version}`,
    );

  const temporal = topology.temporal;
  for (const [name, ports] of Object.entries(temporal.services)) {
    const matches = entries.filter(([, service]) => environmentOf(service).TEMPORAL_SERVICES === name);
    if (matches.length !== 1) {
      problems.push(
        `topology: ${matches.length === 0 ? 'no' : 'more than one'} service with TEMPORAL_SERVICES=${name} (Temporal's ${name} service runs in a container of its own)`,
      );
      continue;
    }
    const [serviceName, service] = matches[0];
    const environment = environmentOf(service);
    if (image(service) !== `temporalio/server:${temporal.serverVersion}`)
      problems.push(
        `topology: ${serviceName} runs ${image(service)}, the stack temporalio/server:${temporal.serverVersion}`,
      );
    const expected = {
      DB: temporal.plugin,
      POSTGRES_USER: topology.postgresql.user,
      DBNAME: topology.postgresql.database,
      VISIBILITY_DBNAME: topology.postgresql.visibilityDatabase,
      NUM_HISTORY_SHARDS: String(temporal.numHistoryShards),
    };
    for (const [other, otherPorts] of Object.entries(temporal.services)) {
      const prefix = other.toUpperCase();
      expected[`${prefix}_GRPC_PORT`] = String(otherPorts.grpcPort);
      expected[`${prefix}_MEMBERSHIP_PORT`] = String(otherPorts.membershipPort);
      if (otherPorts.httpPort) expected[`${prefix}_HTTP_PORT`] = String(otherPorts.httpPort);
    }
    for (const [variable, value] of Object.entries(expected)) {
      if (String(environment[variable] ?? '') !== value)
        problems.push(
          `topology: ${serviceName} has ${variable}=${environment[variable] ?? '(unset)'}, the stack ${value}`,
        );
    }
    if (!String(environment.PROMETHEUS_ENDPOINT ?? '').endsWith(`:${ports.metricsPort}`))
      problems.push(
        `topology: ${serviceName} has PROMETHEUS_ENDPOINT=${environment.PROMETHEUS_ENDPOINT ?? '(unset)'}, the stack port ${ports.metricsPort}`,
      );
    const dynamicConfig = String(environment.DYNAMIC_CONFIG_FILE_PATH ?? '');
    const mounted = (service.volumes ?? []).map((volume) =>
      typeof volume === 'object' ? `${volume.source}:${volume.target}` : String(volume),
    );
    if (!mounted.some((volume) => volume.includes(temporal.dynamicConfig) && volume.includes(`:${dynamicConfig}`)))
      problems.push(
        `topology: ${serviceName} does not mount ${temporal.dynamicConfig} at DYNAMIC_CONFIG_FILE_PATH (${dynamicConfig || 'unset'})`,
      );
    if (name === 'frontend' && !published(service).includes(`${ports.grpcPort}:${ports.grpcPort}`))
      problems.push(`topology: ${serviceName} does not publish ${ports.grpcPort}:${ports.grpcPort}`);
  }

  const schema = entries.find(([, service]) => text(service).includes('setup-schema'));
  if (!schema) problems.push('topology: no service runs temporal-sql-tool setup-schema');
  else {
    for (const [database, schemaName] of [
      [topology.postgresql.database, temporal.schemas.temporal],
      [topology.postgresql.visibilityDatabase, temporal.schemas.visibility],
    ]) {
      if (!new RegExp(`--db ${database} setup-schema -v 0\\.0`).test(text(schema[1])))
        problems.push(`topology: ${schema[0]} does not run setup-schema -v 0.0 on ${database}`);
      if (!new RegExp(`--db ${database} update-schema --schema-name ${schemaName}(\\s|$)`).test(text(schema[1])))
        problems.push(`topology: ${schema[0]} does not update ${database} to ${schemaName}`);
    }
    for (const extension of topology.postgresql.visibilityExtensions)
      if (!text(schema[1]).includes(extension))
        problems.push(`topology: ${schema[0]} does not mention the ${extension} extension the visibility schema needs`);
  }

  const namespace = entries.find(([, service]) => text(service).includes('namespace create'));
  if (
    !namespace ||
    !text(namespace[1]).includes(`--namespace ${temporal.namespace} --retention ${temporal.retentionDays}d`)
  )
    problems.push(
      `topology: no service creates the namespace ${temporal.namespace} with --retention ${temporal.retentionDays}d`,
    );

  const ui = entries.find(([, service]) => /^temporalio\/ui\b/.test(image(service)));
  if (ui) {
    if (image(ui[1]) !== `temporalio/ui:${topology.ui.version}`)
      problems.push(`topology: ${ui[0]} runs ${image(ui[1])}, the stack's Web UI ${topology.ui.version}`);
    if (!published(ui[1]).some((port) => port.startsWith(`${topology.ui.port}:`)))
      problems.push(`topology: ${ui[0]} is not published on ${topology.ui.port}`);
  }

  const store = entries.find(([, service]) => /seaweedfs/.test(image(service)) && /-s3\b/.test(text(service)));
  if (store && !text(store[1]).includes(`-s3.port=${topology.s3.port}`))
    problems.push(`topology: ${store[0]} does not serve S3 on ${topology.s3.port}`);
  if (!entries.some(([, service]) => text(service).includes(`s3.bucket.create -name ${topology.s3.bucket}`)))
    problems.push(`topology: no service creates the bucket ${topology.s3.bucket}`);

  const frontendAddress = `:${temporal.services.frontend.grpcPort}`;
  for (const fleet of topology.workers.fleets) {
    const matches = entries.filter(([, service]) => environmentOf(service).REACT_AGENT_WORKER_ROLE === fleet.role);
    if (matches.length !== 1) {
      problems.push(
        `topology: ${matches.length} worker services with REACT_AGENT_WORKER_ROLE=${fleet.role}, the stack has one fleet per role`,
      );
      continue;
    }
    const [serviceName, service] = matches[0];
    const environment = environmentOf(service);
    if (Number(service.deploy?.replicas) !== fleet.replicas)
      problems.push(`topology: ${serviceName} has ${service.deploy?.replicas} replicas, the stack ${fleet.replicas}`);
    for (const [variable, value] of Object.entries({ ...topology.workers.environment, ...fleet.environment })) {
      if (String(environment[variable] ?? '') !== value)
        problems.push(
          `topology: ${serviceName} has ${variable}=${environment[variable] ?? '(unset)'}, the stack ${value}`,
        );
    }
    if (environment.REACT_AGENT_TRANSCRIPT_STORE !== `s3://${topology.s3.bucket}/${topology.s3.transcriptPrefix}`)
      problems.push(
        `topology: ${serviceName} has REACT_AGENT_TRANSCRIPT_STORE=${environment.REACT_AGENT_TRANSCRIPT_STORE}, the stack s3://${topology.s3.bucket}/${topology.s3.transcriptPrefix}`,
      );
    if (!String(environment.AWS_ENDPOINT_URL ?? '').endsWith(`:${topology.s3.port}`))
      problems.push(
        `topology: ${serviceName} has AWS_ENDPOINT_URL=${environment.AWS_ENDPOINT_URL}, the stack's S3 port ${topology.s3.port}`,
      );
    if (!String(environment.TEMPORAL_ADDRESS ?? '').endsWith(frontendAddress))
      problems.push(
        `topology: ${serviceName} has TEMPORAL_ADDRESS=${environment.TEMPORAL_ADDRESS}, the stack's frontend port ${temporal.services.frontend.grpcPort}`,
      );
  }
  return problems;
}

function main() {
  const { config, problems } = resolvedConfig();
  if (config)
    problems.push(...shapeProblems(config, projectSearchAttributes()), ...topologyProblems(config, stackTopology()));
  if (problems.length) {
    console.error(`${file}: ${problems.length} problem${problems.length === 1 ? '' : 's'}`);
    for (const problem of problems) console.error(`  - ${problem}`);
    process.exit(1);
  }
  const services = Object.entries(config.services);
  const replicas = services.reduce((total, [, service]) => total + Number(service.deploy?.replicas ?? 1), 0);
  console.log(
    `${file}: valid (docker-compose config ${spawnSync(compose, ['version', '--short'], { encoding: 'utf8' }).stdout.trim()}); ${services.length} services, ${replicas} containers at the declared replicas; nothing was started`,
  );
}

main();
