/**
 * A workflow interceptor module for `benchmark:tracing-replay` (benchmarks/tracing-replay.ts):
 * loaded before the OpenTelemetry interceptors, it turns their spans' sampling off in the workflow
 * sandbox (the OpenTelemetry SDK's browser build reads `OTEL_TRACES_SAMPLER` from `globalThis`), so
 * the spans are created but neither recorded nor exported, while the interceptors' promise turns
 * stay what they are. It adds no interceptor of its own.
 */
(globalThis as Record<string, unknown>).OTEL_TRACES_SAMPLER = 'always_off';

export const interceptors = (): Record<string, never> => ({});
