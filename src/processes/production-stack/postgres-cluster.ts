import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo } from 'node:os';
import { join } from 'node:path';

/** PostgreSQL is missing, or one of its steps failed; the message names the step and the fix. */
export class PostgresError extends Error {
  override readonly name = 'PostgresError';
}

/** The folder of PostgreSQL's server programs (initdb, pg_ctl, postgres, pg_isready): `REACT_AGENT_PG_BIN`, else the newest /usr/lib/postgresql/<n>/bin, else `pg_config --bindir`. */
export function findPostgresBin(environment: NodeJS.ProcessEnv = process.env, wantedVersion?: number): string {
  const configured = environment.REACT_AGENT_PG_BIN?.trim();
  if (configured) {
    if (!existsSync(join(configured, 'initdb')))
      throw new PostgresError(`REACT_AGENT_PG_BIN=${configured} has no initdb.`);
    return configured;
  }
  const root = '/usr/lib/postgresql';
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((name) => /^\d+$/.test(name) && existsSync(join(root, name, 'bin', 'initdb')))
        .map(Number)
        .sort((a, b) => b - a)
    : [];
  const chosen = wantedVersion !== undefined && versions.includes(wantedVersion) ? wantedVersion : versions[0];
  if (chosen !== undefined) return join(root, String(chosen), 'bin');
  const pgConfig = spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' });
  const bindir = pgConfig.status === 0 ? pgConfig.stdout.trim() : '';
  if (bindir && existsSync(join(bindir, 'initdb'))) return bindir;
  throw new PostgresError(
    `PostgreSQL is not installed: no initdb in ${root}/<version>/bin or from pg_config. Install it (Debian: apt-get install postgresql-${wantedVersion ?? 15}) or set REACT_AGENT_PG_BIN to its bin folder.`,
  );
}

/** The system user PostgreSQL runs as when this process is root (PostgreSQL refuses to run as root). */
const POSTGRES_USER = 'postgres';

export interface PostgresClusterOptions {
  /** The cluster's data folder (created by initdb). */
  dataDirectory: string;
  port: number;
  /** Password of the `postgres` superuser inside the cluster (TCP on 127.0.0.1 only, scram-sha-256). */
  superuserPassword: string;
  logFile: string;
  bin: string;
}

/**
 * A PostgreSQL cluster of the stack's own: its data folder under the stack's state folder, TCP on
 * 127.0.0.1 only (no Unix socket, so it never collides with a system cluster), passwords for
 * every connection. When this process is root the server programs run as the `postgres` system
 * user (through `setpriv`); when root's home is private to root, they get the one capability
 * that lets them reach the data folder there (CAP_DAC_READ_SEARCH), and nothing else.
 */
export class PostgresCluster {
  constructor(private readonly options: PostgresClusterOptions) {}

  get dataDirectory(): string {
    return this.options.dataDirectory;
  }

  get port(): number {
    return this.options.port;
  }

  /** initdb when the data folder holds no cluster yet; true when it created one. */
  initialise(): boolean {
    const { dataDirectory, superuserPassword } = this.options;
    if (existsSync(join(dataDirectory, 'PG_VERSION'))) return false;
    mkdirSync(dataDirectory, { recursive: true, mode: 0o700 });
    this.giveToServerUser(dataDirectory);
    const passwordFile = join(dataDirectory, '..', 'postgres-initdb-password');
    writeFileSync(passwordFile, `${superuserPassword}\n`, { mode: 0o600 });
    this.giveToServerUser(passwordFile);
    try {
      this.check(
        'initdb',
        this.runAsServerUser(join(this.options.bin, 'initdb'), [
          '-D',
          dataDirectory,
          '-U',
          'postgres',
          '--auth-host=scram-sha-256',
          '--auth-local=scram-sha-256',
          `--pwfile=${passwordFile}`,
          '-E',
          'UTF8',
          '--locale=C.UTF-8',
        ]),
      );
    } finally {
      spawnSync('rm', ['-f', passwordFile]);
    }
    return true;
  }

  /** `pg_ctl start -w`: loopback only, no Unix socket; resolves when it accepts connections. */
  start(): void {
    const { dataDirectory, port, logFile } = this.options;
    if (!existsSync(logFile)) {
      writeFileSync(logFile, '');
      this.giveToServerUser(logFile);
    }
    const serverOptions = `-c listen_addresses=127.0.0.1 -p ${port} -c unix_socket_directories='' -c max_connections=200 -c fsync=on`;
    this.check(
      'pg_ctl start',
      this.runAsServerUser(join(this.options.bin, 'pg_ctl'), [
        'start',
        '-w',
        '-t',
        '60',
        '-D',
        dataDirectory,
        '-l',
        logFile,
        '-o',
        serverOptions,
      ]),
      logFile,
    );
  }

  /** `pg_ctl stop -m <mode>`: `fast` (the default) closes connections cleanly; `immediate` is a crash (recovery at the next start). */
  stop(mode: 'fast' | 'immediate' = 'fast'): void {
    if (!this.running) return;
    this.check(
      `pg_ctl stop -m ${mode}`,
      this.runAsServerUser(join(this.options.bin, 'pg_ctl'), [
        'stop',
        '-w',
        '-t',
        '60',
        '-m',
        mode,
        '-D',
        this.options.dataDirectory,
      ]),
    );
  }

  /** The postmaster's pid from postmaster.pid when that process runs. */
  get pid(): number | undefined {
    try {
      const pid = Number(readFileSync(join(this.options.dataDirectory, 'postmaster.pid'), 'utf8').split('\n')[0]);
      if (!Number.isInteger(pid) || pid <= 0) return undefined;
      process.kill(pid, 0);
      return pid;
    } catch {
      return undefined;
    }
  }

  get running(): boolean {
    return this.pid !== undefined;
  }

  /** `pg_isready` on the port: true when it accepts connections. */
  ready(): boolean {
    const result = spawnSync(
      join(this.options.bin, 'pg_isready'),
      ['-q', '-h', '127.0.0.1', '-p', String(this.options.port), '-t', '3'],
      { timeout: 10_000 },
    );
    return result.status === 0;
  }

  /** Runs SQL as the superuser through psql over TCP; returns its output (unaligned, tuples only). */
  sql(statement: string, database = 'postgres'): string {
    const psql = existsSync(join(this.options.bin, 'psql')) ? join(this.options.bin, 'psql') : 'psql';
    const result = spawnSync(
      psql,
      [
        '-X',
        '-q',
        '-A',
        '-t',
        '-v',
        'ON_ERROR_STOP=1',
        '-h',
        '127.0.0.1',
        '-p',
        String(this.options.port),
        '-U',
        'postgres',
        '-d',
        database,
        '-c',
        statement,
      ],
      {
        encoding: 'utf8',
        env: { ...process.env, PGPASSWORD: this.options.superuserPassword, PGCONNECT_TIMEOUT: '10' },
        timeout: 60_000,
      },
    );
    this.check(`psql (${statement.split(/\s+/).slice(0, 3).join(' ')} …)`, result);
    return result.stdout.trim();
  }

  /** The login role Temporal connects as, created (or its password set) idempotently; CREATEDB so the SQL tool can create its databases. */
  ensureRole(name: string, password: string): void {
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new PostgresError(`bad role name ${name}`);
    const quoted = password.replace(/'/g, "''");
    const exists = this.sql(`SELECT 1 FROM pg_roles WHERE rolname = '${name}'`) === '1';
    this.sql(`${exists ? 'ALTER' : 'CREATE'} ROLE ${name} WITH LOGIN CREATEDB PASSWORD '${quoted}'`);
  }

  private get asRoot(): boolean {
    return userInfo().uid === 0;
  }

  private giveToServerUser(path: string): void {
    if (!this.asRoot) return;
    const user = spawnSync('id', ['-u', POSTGRES_USER], { encoding: 'utf8' });
    const group = spawnSync('id', ['-g', POSTGRES_USER], { encoding: 'utf8' });
    if (user.status !== 0)
      throw new PostgresError(
        `This runs as root and PostgreSQL refuses to run as root, but there is no '${POSTGRES_USER}' system user to run it as (the postgresql package creates it).`,
      );
    chownSync(path, Number(user.stdout.trim()), Number(group.stdout.trim()));
  }

  /** Runs a PostgreSQL program as `postgres` when root (setpriv), else as this user. */
  private runAsServerUser(program: string, args: string[]): SpawnSyncReturns<string> {
    if (!this.asRoot) return spawnSync(program, args, { encoding: 'utf8', timeout: 120_000 });
    const reach = spawnSync('setpriv', [
      '--reuid',
      POSTGRES_USER,
      '--regid',
      POSTGRES_USER,
      '--init-groups',
      'test',
      '-x',
      join(this.options.dataDirectory, '..'),
    ]);
    // The data folder lives under root's home, which postgres may not traverse: then (only then)
    // the server keeps CAP_DAC_READ_SEARCH, which lets it look up paths there.
    const capability =
      reach.status === 0 ? [] : ['--inh-caps', '+dac_read_search', '--ambient-caps', '+dac_read_search'];
    return spawnSync(
      'setpriv',
      ['--reuid', POSTGRES_USER, '--regid', POSTGRES_USER, '--init-groups', ...capability, program, ...args],
      { encoding: 'utf8', timeout: 120_000, cwd: '/' },
    );
  }

  private check(step: string, result: SpawnSyncReturns<string>, logFile?: string): void {
    if (result.error) throw new PostgresError(`PostgreSQL: ${step} could not run: ${result.error.message}`);
    if (result.status !== 0) {
      const log =
        logFile && existsSync(logFile)
          ? `\nLast lines of ${logFile}:\n${readFileSync(logFile, 'utf8').trim().split('\n').slice(-10).join('\n')}`
          : '';
      throw new PostgresError(
        `PostgreSQL: ${step} failed (exit ${result.status}): ${`${result.stderr ?? ''}${result.stdout ?? ''}`.trim()}${log}`,
      );
    }
  }
}
