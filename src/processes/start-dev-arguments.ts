/** The ports of one `temporal server start-dev`. */
export interface StartDevPorts {
  grpc: number;
  /** The Web UI's; none for a headless server. */
  ui?: number | undefined;
  http: number;
  metrics: number;
}

/** What `temporal server start-dev` is started with. */
export interface StartDevSettings {
  databaseFile: string;
  /** The address every listener binds to. */
  host: string;
  ports: StartDevPorts;
  /** Created at start unless it is `default`, which always exists. */
  namespace: string;
  /** Name to type, registered in a new database. */
  searchAttributes: Readonly<Record<string, string>>;
  /** `--dynamic-config-value KEY=VALUE`, the value as JSON. */
  dynamicConfig: Readonly<Record<string, string | number | boolean>>;
}

/** The arguments of the `temporal` CLI that start the dev server with `settings`, logging warnings and worse. */
export function startDevArguments(settings: StartDevSettings): string[] {
  const { ports } = settings;
  return [
    'server',
    'start-dev',
    '--db-filename',
    settings.databaseFile,
    '--ip',
    settings.host,
    '--port',
    String(ports.grpc),
    '--http-port',
    String(ports.http),
    '--metrics-port',
    String(ports.metrics),
    ...(ports.ui === undefined ? ['--headless'] : ['--ui-port', String(ports.ui)]),
    ...(settings.namespace === 'default' ? [] : ['--namespace', settings.namespace]),
    ...Object.entries(settings.searchAttributes).flatMap(([name, type]) => ['--search-attribute', `${name}=${type}`]),
    ...Object.entries(settings.dynamicConfig).flatMap(([key, value]) => [
      '--dynamic-config-value',
      `${key}=${JSON.stringify(value)}`,
    ]),
    '--log-level',
    'warn',
  ];
}

/** The listeners of a start-dev server by what an error calls them (`gRPC port`, ...), in the order they are checked. */
export function startDevListeners(ports: StartDevPorts): { name: string; port: number }[] {
  return [
    { name: 'gRPC port', port: ports.grpc },
    ...(ports.ui === undefined ? [] : [{ name: 'UI port', port: ports.ui }]),
    { name: 'HTTP port', port: ports.http },
    { name: 'metrics port', port: ports.metrics },
  ];
}
