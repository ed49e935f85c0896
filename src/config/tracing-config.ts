import { ConfigurationError } from './configuration-error';
import { readBoolean, readPositiveInteger, readString, type Environment } from './environment-values';

/** The standard OpenTelemetry variables that turn tracing on (either one). */
export const OTLP_ENDPOINT_VARIABLE = 'OTEL_EXPORTER_OTLP_ENDPOINT';
export const OTLP_TRACES_ENDPOINT_VARIABLE = 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT';
export const SERVICE_NAME_VARIABLE = 'OTEL_SERVICE_NAME';
/** Puts prompts and completions (truncated) into model spans; off by default. */
export const TRACE_CONTENT_VARIABLE = 'REACT_AGENT_TRACE_CONTENT';
/** Longest prompt or completion text a span carries with REACT_AGENT_TRACE_CONTENT=true. */
export const TRACE_CONTENT_CHARACTERS_VARIABLE = 'REACT_AGENT_TRACE_CONTENT_CHARACTERS';

/** What a process exports as OpenTelemetry traces, read by {@link loadTracingConfig}. */
export interface TracingConfig {
  /**
   * Where spans go over OTLP/HTTP: the traces URL itself (`OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`), or
   * `OTEL_EXPORTER_OTLP_ENDPOINT` with `/v1/traces` appended, as the OpenTelemetry specification says.
   * Undefined: no tracing at all (no SDK started, no span recorded).
   */
  tracesUrl?: string;
  /** `OTEL_SERVICE_NAME`; default the caller's (`react-agent-worker`, `react-agent`). */
  serviceName: string;
  /** Prompt and completion text in model spans (`REACT_AGENT_TRACE_CONTENT=true`), at most this many characters each; undefined: none. */
  contentCharacters?: number;
}

function checkedUrl(variable: string, raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigurationError(
      variable,
      `${variable} must be an http(s) URL of an OTLP/HTTP receiver, such as http://localhost:4318; got ${JSON.stringify(raw)}`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigurationError(
      variable,
      `${variable} must be an http(s) URL of an OTLP/HTTP receiver (this project exports OTLP over HTTP), such as http://localhost:4318; got ${JSON.stringify(raw)}`,
    );
  }
  return url;
}

/**
 * Reads the OTLP variables: tracing is on when `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT` or
 * `OTEL_EXPORTER_OTLP_ENDPOINT` is set (not blank), off otherwise.
 *
 * @param environment Variables to read; default `process.env`.
 * @param defaultServiceName The service name when `OTEL_SERVICE_NAME` is unset.
 * @throws ConfigurationError naming the variable when an endpoint is not an http(s) URL, or REACT_AGENT_TRACE_CONTENT is not a boolean.
 */
export function loadTracingConfig(
  environment: Environment = process.env,
  defaultServiceName = 'react-agent-worker',
): TracingConfig {
  const serviceName = readString(environment, SERVICE_NAME_VARIABLE) ?? defaultServiceName;
  const content = readBoolean(environment, TRACE_CONTENT_VARIABLE, false);
  const contentCharacters = readPositiveInteger(environment, TRACE_CONTENT_CHARACTERS_VARIABLE, 4000);
  const traces = readString(environment, OTLP_TRACES_ENDPOINT_VARIABLE);
  const base = readString(environment, OTLP_ENDPOINT_VARIABLE);
  let tracesUrl: string | undefined;
  if (traces !== undefined) tracesUrl = checkedUrl(OTLP_TRACES_ENDPOINT_VARIABLE, traces).toString();
  else if (base !== undefined)
    tracesUrl = `${checkedUrl(OTLP_ENDPOINT_VARIABLE, base).toString().replace(/\/$/, '')}/v1/traces`;
  return { ...(tracesUrl ? { tracesUrl } : {}), serviceName, ...(content ? { contentCharacters } : {}) };
}
