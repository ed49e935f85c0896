import type { Metadata, TLSConfig } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import { ConfigurationError } from './configuration-error';
import type { Environment } from './environment-values';

/** Address used when neither TEMPORAL_ADDRESS nor a config-file profile names one. */
export const DEFAULT_TEMPORAL_ADDRESS = 'localhost:7233';
/** Namespace used when neither TEMPORAL_NAMESPACE nor a config-file profile names one. */
export const DEFAULT_TEMPORAL_NAMESPACE = 'default';

const LOCAL_DEFAULT_ADDRESSES = new Set(['localhost:7233', '127.0.0.1:7233', '[::1]:7233']);

/**
 * Options accepted by both `Connection.connect` (@temporalio/client) and
 * `NativeConnection.connect` (@temporalio/worker).
 */
export interface TemporalConnectionOptions {
  /** `host:port` of the frontend. `TEMPORAL_ADDRESS` or profile `address`; default `localhost:7233`. */
  address: string;
  /**
   * TLS settings. On with `TEMPORAL_TLS=true`, any `TEMPORAL_TLS_*` certificate variable, or an API key;
   * off with `TEMPORAL_TLS=false`; unset means plaintext.
   */
  tls?: TLSConfig | boolean;
  /** API key (Temporal Cloud). `TEMPORAL_API_KEY` or profile `api_key`; none by default. */
  apiKey?: string;
  /** gRPC headers. `TEMPORAL_GRPC_META_<NAME>` or profile `grpc_meta`; none by default. */
  metadata?: Metadata;
}

/** Where and how to reach Temporal, read by {@link loadTemporalConnection}. */
export interface TemporalConnection {
  /** Pass to `Connection.connect` or `NativeConnection.connect`. */
  connectionOptions: TemporalConnectionOptions;
  /** `TEMPORAL_NAMESPACE` or profile `namespace`; default `'default'`. */
  namespace: string;
  /** Same as `connectionOptions.address`. */
  address: string;
  /** True when the address is the local default (localhost:7233 / 127.0.0.1:7233), i.e. a dev server may be started there. */
  isLocalDefault: boolean;
}

/**
 * Resolves the Temporal connection the way the `temporal` CLI does, via @temporalio/envconfig:
 * a TOML profile (`TEMPORAL_CONFIG_FILE`, default `~/.config/temporalio/temporal.toml`; profile
 * `TEMPORAL_PROFILE`, default `default`), overridden by `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`,
 * `TEMPORAL_API_KEY`, `TEMPORAL_TLS`, `TEMPORAL_TLS_*` and `TEMPORAL_GRPC_META_*`.
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError when the config file cannot be read/parsed or the profile is missing.
 */
export function loadTemporalConnection(environment: Environment = process.env): TemporalConnection {
  const overrideEnvVars: Record<string, string> = {};
  for (const [name, value] of Object.entries(environment)) {
    if (value !== undefined) overrideEnvVars[name] = value;
  }
  let loaded: ReturnType<typeof loadClientConnectConfig>;
  try {
    loaded = loadClientConnectConfig({ overrideEnvVars });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    const profile = environment['TEMPORAL_PROFILE'];
    if (profile !== undefined && /profile/i.test(reason)) {
      throw new ConfigurationError(
        'TEMPORAL_PROFILE',
        `TEMPORAL_PROFILE=${profile} is not a profile in the Temporal config file (${reason}). Fix the profile name or unset TEMPORAL_PROFILE.`,
      );
    }
    throw new ConfigurationError(
      'TEMPORAL_CONFIG_FILE',
      `Could not load the Temporal client config file${environment['TEMPORAL_CONFIG_FILE'] ? ` ${environment['TEMPORAL_CONFIG_FILE']}` : ''}: ${reason}. ` +
        'Fix the file, point TEMPORAL_CONFIG_FILE at a valid one, or set TEMPORAL_ADDRESS and TEMPORAL_NAMESPACE instead.',
    );
  }
  const options = loaded.connectionOptions;
  const address = nonEmpty(options.address) ?? DEFAULT_TEMPORAL_ADDRESS;
  const connectionOptions: TemporalConnectionOptions = { address };
  if (options.tls !== undefined && options.tls !== null) connectionOptions.tls = options.tls;
  const apiKey = typeof options.apiKey === 'string' ? nonEmpty(options.apiKey) : undefined;
  if (apiKey !== undefined) connectionOptions.apiKey = apiKey;
  if (options.metadata !== undefined && Object.keys(options.metadata).length > 0)
    connectionOptions.metadata = { ...options.metadata };
  return {
    connectionOptions,
    namespace: nonEmpty(loaded.namespace) ?? DEFAULT_TEMPORAL_NAMESPACE,
    address,
    isLocalDefault: LOCAL_DEFAULT_ADDRESSES.has(address.toLowerCase()),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  return trimmed === undefined || trimmed === '' ? undefined : trimmed;
}
