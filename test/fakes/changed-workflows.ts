/**
 * A changed workflow build for test/integration/worker-versioning.test.ts: the project's workflows,
 * but `researchAgent` starts with a 1 ms timer. A new command first, so a run recorded by the
 * unchanged build would fail to replay on this one: only Worker Versioning keeps it off.
 */
import { setWorkflowOptions, sleep, workflowInfo } from '@temporalio/workflow';
import type { ResearchRunInput } from '../../src/core/run-input';
import type { ResearchRunResult } from '../../src/core/run-result';
import { researchAgent as unchangedResearchAgent } from '../../workflows';

export * from '../../workflows';

export async function researchAgent(input: ResearchRunInput): Promise<ResearchRunResult> {
  await sleep(1);
  return unchangedResearchAgent(input);
}
setWorkflowOptions(
  () => (workflowInfo().currentDeploymentVersion?.deploymentName ? { versioningBehavior: 'PINNED' } : {}),
  researchAgent,
);
