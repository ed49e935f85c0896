/** A readable, unique workflow id for a new run: `research-20261130-184501-k3f9`. */
export function newRunId(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  return `research-${stamp}-${Math.random().toString(36).slice(2, 6)}`;
}
