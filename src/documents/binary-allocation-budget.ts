/** The constructors of binary buffers whose allocations {@link limitBinaryAllocations} counts. */
const BINARY_CONSTRUCTORS = [
  'ArrayBuffer',
  'Uint8Array',
  'Uint8ClampedArray',
  'Int8Array',
  'Uint16Array',
  'Int16Array',
  'Uint32Array',
  'Int32Array',
  'Float32Array',
  'Float64Array',
  'BigInt64Array',
  'BigUint64Array',
] as const;

/** What {@link limitBinaryAllocations} reports. */
export interface BinaryAllocationBudget {
  /** Bytes allocated so far through the counted constructors. */
  readonly allocated: number;
  /** True once an allocation was refused. */
  readonly exceeded: boolean;
  /** Starts counting again from zero with this many bytes allowed (one document each). */
  reset(maxBytes: number): void;
}

/**
 * Counts the bytes of every `new Uint8Array(n)`, `new ArrayBuffer(n)` (and the other typed
 * arrays) made through the globals from now on, and refuses (throws `error()`) any that would
 * take the total past the bytes `reset` last allowed (no limit before it is first called). Meant for the document-extraction thread only, installed
 * before the PDF reader is loaded: pdf.js inflates a document's streams into typed arrays,
 * which live outside the V8 heap, so the thread's heap limit does not bound them (a 0.5 MB PDF
 * inflating to 512 MB grew the process by 1.7 GB with 30 MB of heap). The total is cumulative,
 * not what is alive, so it bounds the work as well as the memory. Buffers Node makes for itself
 * (file reads, zlib) are not counted; those are bounded by the byte and inflation limits.
 */
export function limitBinaryAllocations(error: () => Error): BinaryAllocationBudget {
  let maxBytes = Number.POSITIVE_INFINITY;
  const state = {
    allocated: 0,
    exceeded: false,
    reset(bytes: number) {
      maxBytes = bytes;
      state.allocated = 0;
      state.exceeded = false;
    },
  };
  const globals = globalThis as unknown as Record<string, unknown>;
  for (const name of BINARY_CONSTRUCTORS) {
    const original = globals[name] as (new (...args: unknown[]) => object) & { BYTES_PER_ELEMENT?: number };
    if (typeof original !== 'function') continue;
    globals[name] = new Proxy(original, {
      construct(target, args: unknown[], newTarget: object) {
        const length = args[0];
        if (typeof length === 'number' && Number.isFinite(length) && length > 0) {
          const bytes = length * (target.BYTES_PER_ELEMENT ?? 1);
          if (state.allocated + bytes > maxBytes) {
            state.exceeded = true;
            throw error();
          }
          state.allocated += bytes;
        }
        return Reflect.construct(target, args, newTarget as typeof target) as object;
      },
    });
  }
  return state;
}
