import type { VersioningBehavior, WorkflowDefinitionOptions } from '@temporalio/common';
import { setWorkflowOptions, workflowInfo } from '@temporalio/workflow';
import { evaluation } from './evaluation';
import { modelLimiter } from './model-limiter';
import { researchAgent } from './research-agent';
import { researchBatch } from './research-batch';

/**
 * The behaviour on a versioned worker only: the server refuses a workflow task completed with a
 * versioning behaviour by a worker without a deployment ("versioning behavior cannot be specified
 * without deployment options"), and an unversioned worker's deployment name is empty.
 */
function onVersionedWorkers(versioningBehavior: VersioningBehavior): () => WorkflowDefinitionOptions {
  return () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior } : {});
}

/**
 * What each workflow type does when a new build becomes the deployment's current version (Worker
 * Versioning; docs/deploys.md). Read only by versioned workers (REACT_AGENT_DEPLOYMENT_NAME set);
 * a run whose first task an unversioned worker completed gets the worker's default, PINNED.
 *
 * - `researchAgent` PINNED: a run, and each run it continues as new into, finishes on the build it
 *   started on. Its state (carried through continue-as-new too) and its loop's commands are that
 *   build's; an in-flight run never replays on other code.
 * - `researchBatch` AUTO_UPGRADE: a nightly batch outlives deploys; it moves to the current build
 *   at its next workflow task, so its new child runs start on that build (each then pinned there)
 *   and the old build is held only by its own runs, not for the batch's whole length. Its code is
 *   an orchestrator whose changes go behind `patched()`, proved by the replay tests, as before.
 * - `evaluation` PINNED: bounded (no continue-as-new), it judges a finished set of runs; pinned,
 *   every verdict of one evaluation comes from one build's judge and scoring code.
 * - `modelLimiter` AUTO_UPGRADE: one per model, it lives as long as calls come (continuing as new
 *   every few hundred messages) and every build's model calls talk to it; it moves to the current
 *   build at its next workflow task. Its state is plain data carried through continue-as-new.
 */
setWorkflowOptions(onVersionedWorkers('PINNED'), researchAgent);
setWorkflowOptions(onVersionedWorkers('AUTO_UPGRADE'), researchBatch);
setWorkflowOptions(onVersionedWorkers('PINNED'), evaluation);
setWorkflowOptions(onVersionedWorkers('AUTO_UPGRADE'), modelLimiter);
