/**
 * What a system asks of the dev server, from the server's Prometheus metrics: the gRPC requests
 * (`service_requests`) and the database requests (`persistence_requests`) by operation, counted
 * between two scrapes (`benchmark:peers --server-requests`). Pure: the scrape is the caller's.
 */

/** Requests by `<metric> <operation>`, summed over services and namespaces. */
export type RequestCounts = ReadonlyMap<string, number>;

const COUNTED = new Set(['service_requests', 'persistence_requests']);
const SAMPLE = /^([a-z_]+)\{([^}]*)\}\s+([0-9.e+-]+)$/;
const OPERATION = /(?:^|,)operation="([^"]*)"/;

/** The request counters in a Prometheus text exposition; other metrics and malformed lines are left out. */
export function requestCounts(exposition: string): RequestCounts {
  const counts = new Map<string, number>();
  for (const line of exposition.split('\n')) {
    const sample = SAMPLE.exec(line.trim());
    if (!sample || !COUNTED.has(sample[1] ?? '')) continue;
    const operation = OPERATION.exec(sample[2] ?? '')?.[1];
    const value = Number(sample[3]);
    if (operation === undefined || !Number.isFinite(value)) continue;
    const key = `${sample[1]} ${operation}`;
    counts.set(key, (counts.get(key) ?? 0) + value);
  }
  return counts;
}

/** `after − before` per key, keeping only keys that grew. */
export function requestsBetween(before: RequestCounts, after: RequestCounts): Map<string, number> {
  const grown = new Map<string, number>();
  for (const [key, value] of after) {
    const delta = value - (before.get(key) ?? 0);
    if (delta > 0) grown.set(key, delta);
  }
  return grown;
}

/** One line per metric: its total per run, then each operation's per run, largest first (`service_requests 61.0/run: PollWorkflowTaskQueue 20.0, ...`). */
export function describeRequestsPerRun(requests: ReadonlyMap<string, number>, runs: number): string[] {
  return [...COUNTED].map((metric) => {
    const operations = [...requests]
      .filter(([key]) => key.startsWith(`${metric} `))
      .map(([key, value]) => ({ operation: key.slice(metric.length + 1), perRun: value / runs }))
      .sort((a, b) => b.perRun - a.perRun || a.operation.localeCompare(b.operation));
    const total = operations.reduce((sum, { perRun }) => sum + perRun, 0);
    return `${metric} ${total.toFixed(1)}/run: ${operations.map(({ operation, perRun }) => `${operation} ${perRun.toFixed(1)}`).join(', ')}`;
  });
}
