/**
 * Records the history of a `modelLimiter` workflow (issue 33) into
 * test/fixtures/histories/model-limiter.json, for the replay tests that guard deploys of
 * workflows/model-limiter.ts: a limiter started by update-with-start, reservations that start at
 * once and one booked behind them, a settlement, a provider's pause (and a second one during it,
 * which changes nothing), a malformed reservation refused by the validator, then cancelled.
 *
 *   npx tsx scripts/record-model-limiter-history.ts [NAME] [--untraced]   (default model-limiter: NAME.json;
 *   `model-limiter-untraced --untraced` made model-limiter-untraced.json)
 *
 * `--untraced` records on a worker running the untraced bundle (UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
 * what a worker without an OTLP endpoint runs; issue 34) instead of the traced one:
 * `model-limiter-untraced.json`.
 *
 * `model-limiter.json` was recorded before the limiter's reservations completed after their effect
 * (issue 34, marker `reservations-complete-after-their-effect`);
 * `model-limiter-after-their-effect.json` after.
 *
 * Keep fixtures recorded from older code; re-record only for a change meant to be incompatible.
 */
import { historyToJSON } from '@temporalio/common/lib/proto-utils';
import { WithStartWorkflowOperation } from '@temporalio/client';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  modelLimiterStateQuery,
  pauseModelLimitSignal,
  reserveModelLimitUpdate,
  settleModelLimitSignal,
} from '../src/core/model-limits/limiter-messages';
import { modelLimiterWorkflowId, type ModelLimitReservationRequest } from '../src/core/model-limits/model-limit';
import { WorkflowTypes } from '../src/core/workflow-types';
import {
  TRACING_WORKFLOW_INTERCEPTOR_MODULES,
  UNTRACED_WORKFLOW_INTERCEPTOR_MODULES,
} from '../src/config/workflow-interceptors';
import { AgentEnvironment } from '../test/integration/support/agent-environment';
import { cachedWorkflowBundle } from '../test/integration/support/workflow-bundle';

async function main(): Promise<void> {
  const untraced = process.argv.includes('--untraced');
  const name = process.argv.slice(2).find((argument) => argument !== '--untraced') ?? 'model-limiter';
  const environment = await AgentEnvironment.start({ script: () => ({ content: 'unused' }) });
  try {
    // Recorded on the traced bundle, as the fixtures always were, unless `--untraced`.
    await environment.startWorker({
      REACT_AGENT_WORKFLOW_BUNDLE: await cachedWorkflowBundle(
        undefined,
        untraced ? UNTRACED_WORKFLOW_INTERCEPTOR_MODULES : TRACING_WORKFLOW_INTERCEPTOR_MODULES,
      ),
    });
    const client = environment.client;
    const workflowId = modelLimiterWorkflowId('recorded-model');
    const limit = { tokensPerMinute: 6_000, requestsPerMinute: 100, leaseSeconds: 60 };
    const reserve = (request: Omit<ModelLimitReservationRequest, 'limit'>) =>
      client.workflow.executeUpdateWithStart(reserveModelLimitUpdate, {
        args: [{ limit, ...request }],
        startWorkflowOperation: new WithStartWorkflowOperation(WorkflowTypes.modelLimiter, {
          workflowId,
          taskQueue: environment.taskQueue,
          args: [{ model: 'recorded-model' }],
          workflowIdConflictPolicy: 'USE_EXISTING',
        }),
      });
    const first = await reserve({ tokens: 4_000 });
    const second = await reserve({ tokens: 1_500, share: 0.5 });
    const behind = await reserve({ tokens: 2_000 });
    console.log('grants', first, second, behind);
    const handle = client.workflow.getHandle(workflowId);
    await handle.signal(settleModelLimitSignal, { leaseId: first.leaseId, tokens: 1_000 });
    await handle.signal(pauseModelLimitSignal, { retryAfterMs: 2_000 });
    await handle.signal(pauseModelLimitSignal, { retryAfterMs: 9_000 });
    await reserve({ tokens: -1 }).then(
      () => console.log('the malformed reservation was taken?'),
      (error: Error) => console.log(`refused: ${error.message}`),
    );
    console.log('after the pause', await reserve({ tokens: 100 }));
    console.log('state', JSON.stringify(await handle.query(modelLimiterStateQuery)));
    await handle.cancel();
    await handle.result().catch(() => undefined);
    const history = await handle.fetchHistory();
    writeFileSync(
      join(__dirname, '..', 'test', 'fixtures', 'histories', `${name}.json`),
      `${historyToJSON(history)}\n`,
    );
    console.log(`recorded ${name}.json: ${history.events?.length} events`);
  } finally {
    await environment.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
