import { describe, expect, it } from '@jest/globals';
import { describeRequestsPerRun, requestCounts, requestsBetween } from '../../benchmarks/peers/server-requests';

const BEFORE = [
  '# HELP service_requests service_requests counter',
  '# TYPE service_requests counter',
  'service_requests{namespace="default",operation="PollWorkflowTaskQueue",service_name="frontend"} 4',
  'service_requests{namespace="default",operation="PollWorkflowTaskQueue",service_name="matching"} 4',
  'persistence_requests{namespace="default",operation="UpdateWorkflowExecution",service_name="history"} 10',
  'service_latency_bucket{operation="PollWorkflowTaskQueue",le="0.1"} 3',
  'service_requests{namespace="default",service_name="frontend"} 99',
  'garbage line',
].join('\n');

const AFTER = [
  'service_requests{namespace="default",operation="PollWorkflowTaskQueue",service_name="frontend"} 8',
  'service_requests{namespace="default",operation="PollWorkflowTaskQueue",service_name="matching"} 8',
  'service_requests{namespace="default",operation="RecordActivityTaskHeartbeat",service_name="frontend"} 2',
  'persistence_requests{namespace="default",operation="UpdateWorkflowExecution",service_name="history"} 10',
].join('\n');

describe('server requests from the dev server metrics', () => {
  it('sums each counter over services by operation, leaving out other metrics and lines without an operation', () => {
    expect(Object.fromEntries(requestCounts(BEFORE))).toEqual({
      'service_requests PollWorkflowTaskQueue': 8,
      'persistence_requests UpdateWorkflowExecution': 10,
    });
  });

  it('keeps only what grew between two scrapes, counting a new operation from zero', () => {
    expect(Object.fromEntries(requestsBetween(requestCounts(BEFORE), requestCounts(AFTER)))).toEqual({
      'service_requests PollWorkflowTaskQueue': 8,
      'service_requests RecordActivityTaskHeartbeat': 2,
    });
  });

  it('describes the requests per run, largest first, one line per metric', () => {
    const between = requestsBetween(requestCounts(BEFORE), requestCounts(AFTER));
    expect(describeRequestsPerRun(between, 2)).toEqual([
      'service_requests 5.0/run: PollWorkflowTaskQueue 4.0, RecordActivityTaskHeartbeat 1.0',
      'persistence_requests 0.0/run: ',
    ]);
  });
});
