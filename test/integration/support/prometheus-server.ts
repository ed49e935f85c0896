import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { findFreePort } from '../../../src/processes/dev-server';
import { OwnedProcess } from '../../../src/processes/owned-process';

/** Debian's `prometheus` package puts its binaries here; `PROMETHEUS_PATH` / `PROMTOOL_PATH` override. */
export const PROMETHEUS = process.env.PROMETHEUS_PATH ?? '/usr/bin/prometheus';
export const PROMTOOL = process.env.PROMTOOL_PATH ?? '/usr/bin/promtool';
export const INSTALL_HINT =
  "apt-get install -y prometheus (Debian's package: /usr/bin/prometheus and /usr/bin/promtool; .ci/run installs it)";

/** Why Prometheus cannot run here, or undefined when it can. */
export function prometheusMissing(): string | undefined {
  if (!existsSync(PROMETHEUS)) return `${PROMETHEUS} is not installed: ${INSTALL_HINT}`;
  const version = spawnSync(PROMETHEUS, ['--version'], { encoding: 'utf8' });
  return version.status === 0
    ? undefined
    : `${PROMETHEUS} --version failed: ${version.stderr || version.error?.message}`;
}

/** Why promtool cannot run here, or undefined when it can. */
export function promtoolMissing(): string | undefined {
  return existsSync(PROMTOOL) ? undefined : `${PROMTOOL} is not installed: ${INSTALL_HINT}`;
}

/** One sample of an instant query: its labels and value. */
export interface Sample {
  labels: Record<string, string>;
  value: number;
}

export interface PrometheusServerOptions {
  /** Folder for the configuration, the TSDB and the log (a test's temp directory). */
  directory: string;
  /** `host:port` targets scraped as job `react-agent`. */
  targets: string[];
  /** Rule files loaded (and evaluated every scrape interval), e.g. ops/prometheus/alerts.yml. */
  ruleFiles?: string[];
  /** Scrape and rule evaluation interval; default 1s. */
  interval?: string;
}

/**
 * A real Prometheus (Debian's package) in its own process group: its own configuration, storage
 * directory and loopback port, scraping the given targets every second. `stop()` ends it.
 */
export class PrometheusServer {
  private constructor(
    private readonly process: OwnedProcess,
    readonly url: string,
    private readonly logFile: string,
  ) {}

  static async start(options: PrometheusServerOptions): Promise<PrometheusServer> {
    const interval = options.interval ?? '1s';
    mkdirSync(options.directory, { recursive: true });
    const configFile = join(options.directory, 'prometheus.yml');
    const config = [
      'global:',
      `  scrape_interval: ${interval}`,
      `  evaluation_interval: ${interval}`,
      ...(options.ruleFiles?.length
        ? ['rule_files:', ...options.ruleFiles.map((file) => `  - ${JSON.stringify(file)}`)]
        : []),
      'scrape_configs:',
      '  - job_name: react-agent',
      `    scrape_timeout: ${interval}`,
      '    static_configs:',
      `      - targets: [${options.targets.map((target) => JSON.stringify(target)).join(', ')}]`,
      '',
    ].join('\n');
    writeFileSync(configFile, config);
    const port = await findFreePort();
    const logFile = join(options.directory, 'prometheus.log');
    const log = openSync(logFile, 'a');
    const child = OwnedProcess.spawn(
      PROMETHEUS,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(options.directory, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--log.level=warn',
      ],
      { stdio: ['ignore', log, log] },
    );
    const server = new PrometheusServer(child, `http://127.0.0.1:${port}`, logFile);
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (!child.running) throw new Error(`prometheus exited at start:\n${server.log()}`);
      const ready = await fetch(`${server.url}/-/ready`).then(
        (response) => response.ok,
        () => false,
      );
      if (ready) return server;
      if (Date.now() > deadline) {
        await server.stop();
        throw new Error(`prometheus was not ready within 30 s:\n${server.log()}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  log(): string {
    return existsSync(this.logFile) ? readFileSync(this.logFile, 'utf8').slice(-4_000) : '';
  }

  /** An instant query through the HTTP API (`/api/v1/query`); rejects on an error answer. */
  async query(expression: string): Promise<Sample[]> {
    const response = await fetch(`${this.url}/api/v1/query?query=${encodeURIComponent(expression)}`);
    const body = (await response.json()) as {
      status: string;
      error?: string;
      data?: { resultType: string; result: Array<{ metric: Record<string, string>; value: [number, string] }> };
    };
    if (body.status !== 'success' || body.data?.resultType !== 'vector')
      throw new Error(`query ${expression} failed: ${body.error ?? JSON.stringify(body)}`);
    return body.data.result.map((sample) => ({ labels: { ...sample.metric }, value: Number(sample.value[1]) }));
  }

  /** The value of a query that yields one sample (0 when it yields none). */
  async value(expression: string): Promise<number> {
    const samples = await this.query(expression);
    if (samples.length > 1) throw new Error(`query ${expression} gave ${samples.length} samples`);
    return samples[0]?.value ?? 0;
  }

  /** Polls `expression` until `accept` holds for its value; returns the last value either way after `timeoutMs`. */
  async waitForValue(expression: string, accept: (value: number) => boolean, timeoutMs = 20_000): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await this.value(expression);
      if (accept(value) || Date.now() > deadline) return value;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }

  /** The rule groups as loaded, with each rule's health and last error (`/api/v1/rules`). */
  async rules(): Promise<Array<{ name: string; type: string; health: string; lastError?: string; query: string }>> {
    const response = await fetch(`${this.url}/api/v1/rules`);
    const body = (await response.json()) as {
      data: {
        groups: Array<{
          rules: Array<{ name: string; type: string; health: string; lastError?: string; query: string }>;
        }>;
      };
    };
    return body.data.groups.flatMap((group) => group.rules.map((rule) => ({ ...rule })));
  }

  /** The last scrape of each target: health and error (`/api/v1/targets`). */
  async targets(): Promise<Array<{ scrapeUrl: string; health: string; lastError: string; lastScrape: string }>> {
    const response = await fetch(`${this.url}/api/v1/targets`);
    const body = (await response.json()) as {
      data: { activeTargets: Array<{ scrapeUrl: string; health: string; lastError: string; lastScrape: string }> };
    };
    return body.data.activeTargets.map((target) => ({ ...target }));
  }

  async stop(): Promise<void> {
    await this.process.stop(5_000);
  }
}

/** Runs `promtool` with `args`; its exit status and output. */
export function promtool(args: string[]): { status: number | null; output: string } {
  const result = spawnSync(PROMTOOL, args, { encoding: 'utf8' });
  return {
    status: result.status,
    output: `${result.stdout ?? ''}${result.stderr ?? ''}${result.error ? String(result.error) : ''}`,
  };
}
