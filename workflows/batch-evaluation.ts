import { executeChild } from '@temporalio/workflow';
import type { BatchSummary, ResearchBatchInput } from '../src/core/batch-contract';
import { EXACT_MATCH_JUDGE } from '../src/core/evaluation/evaluation-contract';
import { WorkflowTypes, type EvaluationWorkflow } from '../src/core/workflow-types';
import { rootMessage } from './failures';

/** Evaluates the batch's output as a child `evaluation` workflow; a failed evaluation is reported, not the batch's failure. */
export async function evaluateBatch(
  batchId: string,
  output: string,
  evaluate: NonNullable<ResearchBatchInput['evaluate']>,
): Promise<NonNullable<BatchSummary['evaluation']>> {
  const evaluationId = `${batchId}/evaluation`;
  try {
    const outcome = await executeChild<EvaluationWorkflow>(WorkflowTypes.evaluation, {
      workflowId: evaluationId,
      args: [
        {
          paths: [output],
          output: `${output.replace(/\/+$/, '')}/evaluation`,
          judge: evaluate.judge ?? EXACT_MATCH_JUDGE,
          batchId,
          ...(evaluate.concurrency !== undefined ? { concurrency: evaluate.concurrency } : {}),
          ...(evaluate.judgeAttempts !== undefined ? { judgeAttempts: evaluate.judgeAttempts } : {}),
        },
      ],
      staticSummary: `evaluation of ${batchId}`.slice(0, 200),
    });
    return {
      evaluationId,
      reportPath: outcome.reportPath,
      headline: outcome.headline,
      ...(outcome.refused ? { failed: outcome.refused } : {}),
    };
  } catch (error) {
    return { evaluationId, failed: rootMessage(error) };
  }
}
