import { Client, Connection } from '@temporalio/client';
import { loadTracingConfig, type TemporalConnection, type TracingConfig } from '../config';
import { startClientTracing } from './client-tracing';

/**
 * Connects a Temporal client; fails with a message that names the address and how to fix it. With
 * an OTLP endpoint (OTEL_EXPORTER_OTLP_*) the client traces what it starts (src/cli/client-tracing.ts).
 */
export async function connectClient(
  temporal: TemporalConnection,
  tracingConfig: TracingConfig = loadTracingConfig(process.env, 'react-agent'),
): Promise<{ client: Client; close: () => Promise<void> }> {
  let connection: Connection;
  try {
    connection = await Connection.connect({ ...temporal.connectionOptions, connectTimeout: '5 seconds' });
  } catch (error) {
    throw new Error(
      `Cannot reach Temporal at ${temporal.address} (${(error as Error).message}). ` +
        (temporal.isLocalDefault
          ? "Start the local dev server with 'npm run server' (or let 'react-agent run' start it)."
          : 'Check TEMPORAL_ADDRESS, TEMPORAL_NAMESPACE and TLS/API key settings (TEMPORAL_TLS, TEMPORAL_API_KEY, or your temporal.toml profile).'),
    );
  }
  const tracing = startClientTracing(tracingConfig);
  return {
    client: new Client({
      connection,
      namespace: temporal.namespace,
      ...(tracing.workflowInterceptors.length ? { interceptors: { workflow: tracing.workflowInterceptors } } : {}),
    }),
    close: async () => {
      await connection.close();
      await tracing.shutdown();
    },
  };
}

/** Link to a run in the Web UI, when one is known: REACT_AGENT_WEB_UI_URL, the local dev server's UI, or Temporal Cloud. */
export function webUiLink(
  temporal: TemporalConnection,
  workflowId: string,
  environment = process.env,
): string | undefined {
  const configured = environment.REACT_AGENT_WEB_UI_URL?.replace(/\/$/, '');
  const base = configured
    ? configured
    : temporal.isLocalDefault
      ? 'http://localhost:8233'
      : /\.tmprl\.cloud:\d+$/.test(temporal.address)
        ? 'https://cloud.temporal.io'
        : undefined;
  return base
    ? `${base}/namespaces/${encodeURIComponent(temporal.namespace)}/workflows/${encodeURIComponent(workflowId)}`
    : undefined;
}
