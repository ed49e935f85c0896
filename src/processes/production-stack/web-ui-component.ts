import { mkdirSync, writeFileSync } from 'node:fs';
import { isPortFree } from '../ports';
import { waitUntilReady } from '../readiness';
import { httpStatus, STACK_HOST } from './network-probes';
import type { StackComponent, StackLog, StackProcessStatus } from './stack-component';
import { StackDaemon } from './stack-daemon';
import { StackError } from './stack-error';
import type { StackFolder } from './stack-state';
import { temporalServerTools } from './temporal-server-tools';

const START_TIMEOUT_MS = 30_000;
const STOP_GRACE_MS = 15_000;

/**
 * Temporal's Web UI (`temporal-ui-server`, when `npm run setup:temporal-server` could build it) on
 * the stack's UI port, pointed at the frontend. Ready when it answers HTTP.
 */
export class WebUiComponent implements StackComponent {
  readonly name = 'ui';
  private readonly daemon: StackDaemon;

  /** @param frontendAddress The frontend it shows (`127.0.0.1:<port>`). */
  constructor(
    private readonly folder: StackFolder,
    private readonly frontendAddress: string,
  ) {
    this.daemon = new StackDaemon(folder, this.name);
  }

  /** `http://127.0.0.1:<UI port>`. */
  get url(): string {
    return `http://${STACK_HOST}:${this.folder.state.ports.ui}`;
  }

  /** Starts the UI server unless it runs or is not built (then says so), and resolves once it answers. */
  async start(log: StackLog): Promise<void> {
    const uiServer = temporalServerTools().uiServer;
    if (uiServer === undefined) {
      log('Web UI: not built (npm run setup:temporal-server builds it when it can); skipped');
      return;
    }
    if (this.daemon.running) return;
    const port = this.folder.state.ports.ui;
    if (!(await isPortFree(port)))
      throw new StackError(`Cannot start the Web UI: port ${port} on ${STACK_HOST} is in use.`);
    const configDirectory = this.folder.path('ui-config');
    mkdirSync(configDirectory, { recursive: true });
    writeFileSync(
      this.folder.path('ui-config', 'stack.yaml'),
      [
        `temporalGrpcAddress: ${this.frontendAddress}`,
        `host: ${STACK_HOST}`,
        `port: ${port}`,
        'enableUi: true',
        'defaultNamespace: default',
        'cors:',
        '  cookieInsecure: true',
        'auth:',
        '  enabled: false',
        '',
      ].join('\n'),
    );
    const spawned = this.daemon.spawn(
      uiServer,
      ['--root', this.folder.directory, '--config', 'ui-config', '--env', 'stack', 'start'],
      { env: process.env, cwd: this.folder.directory },
    );
    await waitUntilReady({
      what: `The Web UI at ${this.url}`,
      probe: () => this.ready(),
      timeoutMs: START_TIMEOUT_MS,
      process: spawned.readiness,
    });
    log(`Web UI: ${this.url} (pid ${spawned.pid})`);
  }

  async ready(): Promise<string | undefined> {
    return (await httpStatus(this.folder.state.ports.ui, '/')) === undefined ? 'not answering' : undefined;
  }

  async stop(log: StackLog): Promise<void> {
    await this.daemon.stopIfRunning(log, STOP_GRACE_MS);
  }

  /** Its row once it was ever started; none for a stack without a UI. */
  async status(): Promise<StackProcessStatus | undefined> {
    if (!this.daemon.running && this.folder.state.processes[this.name] === undefined) return undefined;
    return this.daemon.statusRow(async () => (await this.ready()) ?? 'ready', { address: this.url });
  }
}
