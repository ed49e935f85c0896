/**
 * A V8 heap snapshot (`.heapsnapshot`, as `--heapsnapshot-signal` or `v8.writeHeapSnapshot` write
 * it) summed by kind of object, the way the Memory tab of Chrome's developer tools sums it: self
 * size and count per constructor name (objects), per node type otherwise (strings, closures,
 * arrays, code, …), the largest first. Also the strings that are stack traces (`    at …` lines,
 * what the SDK's promise hook keeps per pending promise) counted apart. Used by run-memory.ts.
 *
 *   npx tsx benchmarks/heap-snapshot-summary.ts FILE [BEFORE-FILE RUNS-BETWEEN]
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** Self size and count per kind of object, and the stack-trace strings, of one heap snapshot. */
export interface HeapSummary {
  bytes: number;
  objects: number;
  stackStrings: { count: number; bytes: number };
  kinds: Map<string, { count: number; bytes: number }>;
}

/** Sums the heap snapshot in `file` by kind (constructor name for objects, node type otherwise). */
export function readHeapSummary(file: string): HeapSummary {
  const snapshot = JSON.parse(readFileSync(file, 'utf8')) as Snapshot;
  const fields = snapshot.snapshot.meta.node_fields;
  const types = snapshot.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeField = fields.indexOf('type');
  const nameField = fields.indexOf('name');
  const sizeField = fields.indexOf('self_size');
  const summary: HeapSummary = {
    bytes: 0,
    objects: snapshot.nodes.length / width,
    stackStrings: { count: 0, bytes: 0 },
    kinds: new Map(),
  };
  for (let offset = 0; offset < snapshot.nodes.length; offset += width) {
    const type = types[snapshot.nodes[offset + typeField] as number] as string;
    const name = snapshot.strings[snapshot.nodes[offset + nameField] as number] ?? '';
    const bytes = snapshot.nodes[offset + sizeField] as number;
    summary.bytes += bytes;
    const kind = type === 'object' || type === 'native' ? name : `(${type})`;
    const entry = summary.kinds.get(kind) ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += bytes;
    summary.kinds.set(kind, entry);
    if ((type === 'string' || type === 'concatenated string') && /^\s+at /.test(name)) {
      summary.stackStrings.count += 1;
      summary.stackStrings.bytes += bytes;
    }
  }
  return summary;
}

/**
 * Lines of the summary of `after`, the `top` largest kinds first; with `before` (a snapshot of
 * the same process with `runs` fewer runs in flight), what grew between the two, per run.
 */
export function describeHeap(
  after: HeapSummary,
  options: { before?: HeapSummary; runs?: number; top?: number } = {},
): string {
  const { before, runs = 1, top = 25 } = options;
  const kiB = (bytes: number) => `${(bytes / 1024).toFixed(1)} KiB`;
  const per = (value: number) => value / runs;
  const grown = [...after.kinds].map(([kind, { count, bytes }]) => {
    const earlier = before?.kinds.get(kind) ?? { count: 0, bytes: 0 };
    return { kind, count: count - earlier.count, bytes: bytes - earlier.bytes };
  });
  const total = after.bytes - (before?.bytes ?? 0);
  const stacks = after.stackStrings.count - (before?.stackStrings.count ?? 0);
  const stackBytes = after.stackStrings.bytes - (before?.stackStrings.bytes ?? 0);
  const lines = [
    `${before ? 'heap grown' : 'heap'}: ${kiB(total)} in ${after.objects - (before?.objects ?? 0)} objects${runs > 1 ? `; ${kiB(per(total))} and ${per(after.objects - (before?.objects ?? 0)).toFixed(0)} objects per run` : ''}`,
    `stack-trace strings: ${stacks} (${per(stacks).toFixed(1)} per run), ${kiB(stackBytes)} (${kiB(per(stackBytes))} per run)`,
    `kind | count${runs > 1 ? ' per run' : ''} | self size${runs > 1 ? ' per run' : ''}`,
  ];
  for (const { kind, count, bytes } of grown.sort((left, right) => right.bytes - left.bytes).slice(0, top))
    lines.push(`${kind.slice(0, 60)} | ${per(count).toFixed(1)} | ${kiB(per(bytes))}`);
  return lines.join('\n');
}

if (require.main === module) {
  const [file, before, runs] = process.argv.slice(2);
  if (!file) throw new Error('usage: heap-snapshot-summary.ts FILE [BEFORE-FILE RUNS-BETWEEN]');
  console.log(
    describeHeap(readHeapSummary(file), before ? { before: readHeapSummary(before), runs: Number(runs ?? 1) } : {}),
  );
}
