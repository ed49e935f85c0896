/**
 * Tool module for the chaos harness's workers (REACT_AGENT_TOOL_MODULES): `lookup`, `sleepy` and
 * `flaky` from test-tools.ts, each logging start/stop to REACT_AGENT_TEST_TOOL_LOG.
 */
export { chaosTools as tools } from './test-tools';
