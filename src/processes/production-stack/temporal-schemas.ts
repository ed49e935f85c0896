import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { STACK_TOPOLOGY } from '../../config/stack-topology';
import { STACK_HOST } from './network-probes';
import type { PostgresCluster } from './postgres-cluster';
import type { StackLog } from './stack-component';
import { StackError } from './stack-error';

/** What Temporal's schemas are applied with. */
export interface TemporalSchemaSettings {
  /** The stack's cluster, running. */
  postgres: PostgresCluster;
  /** `temporal-sql-tool` (temporal-server-tools.ts). */
  sqlTool: string;
  /** The password of the role Temporal connects as. */
  temporalPassword: string;
  /** Written once the schemas are applied, so later `up`s skip them: `<stack>/postgresql/schema-ready`. */
  doneFile: string;
}

/**
 * The role Temporal uses, its two databases (the visibility one with its extensions) and the
 * latest schemas in them, as docker-compose.yml's temporal-schema does: `create-database` when
 * missing, `setup-schema -v 0.0` (which leaves a newer schema as it is), `update-schema`. Once;
 * later calls see the done file and return.
 */
export function applyTemporalSchemas(settings: TemporalSchemaSettings, log: StackLog): void {
  if (existsSync(settings.doneFile)) return; // Applied at an earlier up; update-schema would be a no-op.
  const { postgres, sqlTool, temporalPassword } = settings;
  const { user, database, visibilityDatabase, visibilityExtensions } = STACK_TOPOLOGY.postgresql;
  postgres.ensureRole(user, temporalPassword);
  const sql = (databaseName: string, args: string[]) => {
    const result = spawnSync(
      sqlTool,
      [
        '--plugin',
        STACK_TOPOLOGY.temporal.plugin,
        '--ep',
        STACK_HOST,
        '--port',
        String(postgres.port),
        '--user',
        user,
        '--password',
        temporalPassword,
        '--db',
        databaseName,
        ...args,
      ],
      { encoding: 'utf8', timeout: 300_000 },
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
    sql(name, ['setup-schema', '-v', '0.0']);
    sql(name, ['update-schema', '--schema-name', schema]);
    log(`PostgreSQL: ${name} at the latest ${schema} schema`);
  }
  writeFileSync(settings.doneFile, `${new Date().toISOString()}\n`);
}
