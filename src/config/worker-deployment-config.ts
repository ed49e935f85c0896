import { ConfigurationError } from './configuration-error';
import { readString, type Environment } from './environment-values';

/**
 * Temporal Worker Versioning of a worker process (docs/deploys.md), read by
 * {@link loadWorkerDeploymentConfig}. Every Worker of the process (each queue of its role) belongs
 * to the same Worker Deployment Version: `deploymentName` + `buildId`.
 */
export interface WorkerDeploymentConfig {
  /**
   * The Worker Deployment this worker belongs to: one name for every worker of one fleet, of every
   * role, across builds. `REACT_AGENT_DEPLOYMENT_NAME`; default unset: the worker is unversioned,
   * as before (any worker on the queue takes any run).
   */
  deploymentName: string;
  /**
   * The build of this worker within the deployment. `REACT_AGENT_BUILD_ID`; default undefined,
   * which the worker replaces with the hash of its workflow bundle's sources
   * (`workflowBuildId` in worker/workflow-bundle.ts), so every change of the workflow code is a
   * new build id.
   */
  buildId?: string;
}

/** Letters, digits, `_` and `-` (no `.`: Temporal once joined name and build id with one). */
const DEPLOYMENT_NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,199}$/;
/** Letters, digits, `.`, `_` and `-` (`1.4.2`, `2026-12-02`, a git sha, the bundle hash). */
const BUILD_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/;

/**
 * Reads the worker's deployment and build id. Unset deployment name: undefined (unversioned).
 *
 * @param environment Variables to read; default `process.env`.
 * @throws ConfigurationError naming the variable: a malformed name or build id, or
 *   `REACT_AGENT_BUILD_ID` without `REACT_AGENT_DEPLOYMENT_NAME`.
 */
export function loadWorkerDeploymentConfig(environment: Environment = process.env): WorkerDeploymentConfig | undefined {
  const deploymentName = readString(environment, 'REACT_AGENT_DEPLOYMENT_NAME');
  const buildId = readString(environment, 'REACT_AGENT_BUILD_ID');
  if (deploymentName === undefined) {
    if (buildId !== undefined) {
      throw new ConfigurationError(
        'REACT_AGENT_DEPLOYMENT_NAME',
        'REACT_AGENT_BUILD_ID is set but REACT_AGENT_DEPLOYMENT_NAME is not: a build id belongs to a Worker Deployment. ' +
          'Set REACT_AGENT_DEPLOYMENT_NAME (e.g. react-agent) to version this worker, or unset REACT_AGENT_BUILD_ID.',
      );
    }
    return undefined;
  }
  if (!DEPLOYMENT_NAME.test(deploymentName)) {
    throw new ConfigurationError(
      'REACT_AGENT_DEPLOYMENT_NAME',
      `REACT_AGENT_DEPLOYMENT_NAME must be letters, digits, "_" and "-" (at most 200, no "."), got ${JSON.stringify(deploymentName)}`,
    );
  }
  if (buildId !== undefined) validateBuildId(buildId, 'REACT_AGENT_BUILD_ID');
  return { deploymentName, ...(buildId === undefined ? {} : { buildId }) };
}

/**
 * Checks a build id (letters, digits, `.`, `_`, `-`; at most 200 characters).
 * @throws ConfigurationError naming `variable`.
 */
export function validateBuildId(buildId: string, variable: string): string {
  if (!BUILD_ID.test(buildId)) {
    throw new ConfigurationError(
      variable,
      `${variable} must be letters, digits, ".", "_" and "-" (at most 200), got ${JSON.stringify(buildId)}`,
    );
  }
  return buildId;
}
