// Node-only configuration from environment variables. See README.md for the import rule.
export { ConfigurationError } from './configuration-error';
export {
  readNumberInRange,
  readPositiveInteger,
  readPositiveNumber,
  readString,
  type Environment,
} from './environment-values';
export * from './model-config';
export * from './worker-config';
export * from './temporal-connection-config';
export * from './research-tools-config';
export * from './visit-config';
export * from './document-config';
export * from './python-config';
export * from './enabled-tools-config';
export * from './transcript-store-config';
export * from './worker-fleet-config';
export * from './judge-config';
export * from './summary-model-config';
export * from './mcp-config';
export * from './metrics-config';
export * from './live-text-config';
export * from './tracing-config';
export * from './model-prices-config';
export * from './worker-deployment-config';
export * from './data-roots-config';
export * from './model-limits-config';
