import { condition, executeChild, workflowInfo } from '@temporalio/workflow';
import type { BatchItem } from '../../src/domain/batch-input';
import type { ResearchRunResult } from '../../src/core/run-result';
import { WorkflowTypes, type ResearchAgentWorkflow } from '../../src/core/workflow-types';

/**
 * The naive batch the batch benchmark compares against: the questions come in the workflow's
 * input, every run's result is kept in the workflow's state and returned at the end, and the
 * batch never continues as new. Same children, same concurrency; only where results live differs.
 */
export async function naiveResearchBatch(
  questions: BatchItem[],
  rollouts: number,
  concurrency: number,
): Promise<{ results: Array<ResearchRunResult & { index: number; rollout: number }> }> {
  const results: Array<ResearchRunResult & { index: number; rollout: number }> = [];
  const total = questions.length * rollouts;
  let running = 0;
  const pending: Promise<void>[] = [];
  for (let ordinal = 0; ordinal < total; ordinal += 1) {
    await condition(() => running < concurrency);
    const index = ordinal % questions.length;
    const rollout = Math.floor(ordinal / questions.length) + 1;
    const item = questions[index] as BatchItem;
    running += 1;
    pending.push(
      executeChild<ResearchAgentWorkflow>(WorkflowTypes.researchAgent, {
        workflowId: `${workflowInfo().workflowId}/q${index}-r${rollout}`,
        args: [{ question: item.question, ...(item.answer ? { answer: item.answer } : {}) }],
      }).then((result) => {
        results.push({ ...result, index, rollout });
        running -= 1;
      }),
    );
  }
  await Promise.all(pending);
  return { results };
}
