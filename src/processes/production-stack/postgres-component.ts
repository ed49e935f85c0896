import { mkdirSync } from 'node:fs';
import { STACK_TOPOLOGY } from '../../config/stack-topology';
import { isPortFree } from '../ports';
import { STACK_HOST } from './network-probes';
import { findPostgresBin, PostgresCluster } from './postgres-cluster';
import type { StackComponent, StackLog, StackProcessStatus } from './stack-component';
import { StackError } from './stack-error';
import type { StackFolder } from './stack-state';

/**
 * The stack's PostgreSQL (postgres-cluster.ts): its cluster in `<stack>/postgresql/data`, made at
 * the first start, on the stack's port. `pg_ctl` finds it again through its data folder, so it is
 * not among the stack's recorded processes; the schemas Temporal needs are temporal-schemas.ts's.
 */
export class PostgresComponent implements StackComponent {
  readonly name = 'postgresql';

  constructor(private readonly folder: StackFolder) {}

  /** The cluster, with the stack's port, secret and PostgreSQL programs (the topology's version when installed). */
  cluster(): PostgresCluster {
    return new PostgresCluster({
      dataDirectory: this.folder.path('postgresql', 'data'),
      port: this.folder.state.ports.postgres,
      superuserPassword: this.folder.state.secrets.postgresSuperuser,
      logFile: this.folder.path('postgresql', 'postgresql.log'),
      bin: findPostgresBin(process.env, STACK_TOPOLOGY.postgresql.version),
    });
  }

  /** Makes the cluster when there is none and starts it unless it runs (`pg_ctl start -w`: ready when it returns). */
  async start(log: StackLog): Promise<void> {
    const postgres = this.cluster();
    mkdirSync(this.folder.path('postgresql'), { recursive: true });
    if (postgres.initialise()) log(`PostgreSQL: new cluster in ${postgres.dataDirectory}`);
    if (postgres.running) return;
    if (!(await isPortFree(postgres.port)))
      throw new StackError(
        `Cannot start PostgreSQL: port ${postgres.port} on ${STACK_HOST} is in use (another PostgreSQL? Stop it, or make a new stack with --free-ports).`,
      );
    const started = Date.now();
    postgres.start();
    log(`PostgreSQL: started on ${STACK_HOST}:${postgres.port} (pid ${postgres.pid}, ${Date.now() - started} ms)`);
  }

  async ready(): Promise<string | undefined> {
    const postgres = this.cluster();
    if (!postgres.running) return 'stopped';
    return postgres.ready() ? undefined : 'not accepting connections';
  }

  /** `pg_ctl stop -m fast`: connections closed cleanly. */
  async stop(log: StackLog): Promise<void> {
    const postgres = this.cluster();
    if (!postgres.running) return;
    postgres.stop('fast');
    log('stopped postgresql');
  }

  /** `pg_ctl stop -m immediate`: a crash (recovery at the next start). */
  crash(): void {
    this.cluster().stop('immediate');
  }

  async status(): Promise<StackProcessStatus> {
    const postgres = this.cluster();
    const pid = postgres.pid;
    return {
      name: this.name,
      ...(pid ? { pid } : {}),
      running: pid !== undefined,
      health: pid === undefined ? 'stopped' : ((await this.ready()) ?? 'ready'),
      address: `${STACK_HOST}:${postgres.port}`,
    };
  }
}
