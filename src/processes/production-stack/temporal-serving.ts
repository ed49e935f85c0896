import { randomBytes } from 'node:crypto';
import { Connection } from '@temporalio/client';
import { msToTs } from '@temporalio/common/lib/time';
import { temporal } from '@temporalio/proto';
import { PROJECT_SEARCH_ATTRIBUTES } from '../../core/search-attributes';
import { STACK_TOPOLOGY } from '../../config/stack-topology';
import { waitUntilReady } from '../readiness';
import { INDEXED_VALUE_TYPES } from '../search-attribute-types';
import type { StackLog } from './stack-component';

const PROBE_WORKFLOW_ID = 'react-agent-stack-readiness-probe';
const PROBE_TASK_QUEUE = 'react-agent-stack-probe';
/** How long `up` waits for Temporal to serve end to end once its services listen. */
const SERVING_TIMEOUT_MS = 180_000;

/**
 * Undefined when Temporal at `address` serves `namespace` end to end — the namespace and the
 * project's search attributes exist (they are registered here when missing), a workflow can be
 * started and terminated (frontend, history, PostgreSQL) and matching describes a queue;
 * otherwise what failed. Every call has a deadline: while history is down, calls would otherwise hang.
 */
export async function temporalServingProblem(
  address: string,
  namespace: string,
  log: StackLog = () => undefined,
): Promise<string | undefined> {
  const connection = await Connection.connect({ address, connectTimeout: 3_000 });
  try {
    return await connection.withDeadline(Date.now() + 10_000, async () => {
      try {
        await connection.workflowService.describeNamespace({ namespace });
      } catch (error) {
        if (!/not found/i.test((error as Error).message)) throw error;
        await connection.workflowService.registerNamespace({
          namespace,
          workflowExecutionRetentionPeriod: msToTs(`${STACK_TOPOLOGY.temporal.retentionDays} days`),
          description: 'react-agent production stack',
        });
        log(`Temporal: registered namespace ${namespace} (retention ${STACK_TOPOLOGY.temporal.retentionDays} days)`);
        return 'namespace just registered';
      }
      const registered = (await connection.operatorService.listSearchAttributes({ namespace })).customAttributes ?? {};
      const missing = Object.entries(PROJECT_SEARCH_ATTRIBUTES).filter(([name]) => !(name in registered));
      if (missing.length > 0) {
        await connection.operatorService.addSearchAttributes({
          namespace,
          searchAttributes: Object.fromEntries(
            missing.map(([name, type]) => [name, INDEXED_VALUE_TYPES[type] as temporal.api.enums.v1.IndexedValueType]),
          ),
        });
        log(`Temporal: registered search attributes ${missing.map(([name, type]) => `${name}=${type}`).join(', ')}`);
        return 'search attributes just registered';
      }
      // End to end: frontend → history → PostgreSQL, and matching answering for a queue.
      const start = await connection.workflowService.startWorkflowExecution({
        namespace,
        workflowId: PROBE_WORKFLOW_ID,
        workflowType: { name: 'stackReadinessProbe' },
        taskQueue: { name: PROBE_TASK_QUEUE },
        requestId: randomBytes(16).toString('hex'),
        identity: 'react-agent stack',
        workflowIdReusePolicy: temporal.api.enums.v1.WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE,
        workflowIdConflictPolicy:
          temporal.api.enums.v1.WorkflowIdConflictPolicy.WORKFLOW_ID_CONFLICT_POLICY_TERMINATE_EXISTING,
      });
      await connection.workflowService.terminateWorkflowExecution({
        namespace,
        workflowExecution: { workflowId: PROBE_WORKFLOW_ID, runId: start.runId },
        reason: 'readiness probe of react-agent stack up',
      });
      await connection.workflowService.describeTaskQueue({
        namespace,
        taskQueue: { name: PROBE_TASK_QUEUE },
        taskQueueType: temporal.api.enums.v1.TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
      });
      return undefined;
    });
  } finally {
    await connection.close().catch(() => undefined);
  }
}

/** Waits (180 s at most) until {@link temporalServingProblem} finds nothing, registering what is missing on the way. */
export async function waitUntilTemporalServes(
  address: string,
  namespace: string,
  logsDirectory: string,
  log: StackLog,
): Promise<void> {
  const took = await waitUntilReady({
    what: `Temporal at ${address}`,
    probe: () => temporalServingProblem(address, namespace, log),
    timeoutMs: SERVING_TIMEOUT_MS,
    intervalMs: 1_000,
    hint: `see the logs in ${logsDirectory}`,
  });
  log(`Temporal: namespace ${namespace} with the project's search attributes, serving (${took} ms)`);
}
