/**
 * A worker process's V8 heaps read through its inspector (the process started with `--inspect=0`):
 * the main thread's and each worker thread's (the SDK's workflow thread among them), through the
 * DevTools protocol's `NodeWorker` domain, each after a full garbage collection if asked. Used by
 * run-memory.ts to tell what a run in flight keeps alive in the workflow thread from the rest of
 * the process's resident memory (the SDK's native core, V8's unused heap, garbage not yet collected).
 */

/** One isolate's heap: used and total (reserved) bytes, as `Runtime.getHeapUsage` reports them. */
export interface HeapUsage {
  thread: string;
  usedBytes: number;
  totalBytes: number;
}

interface Message {
  id?: number;
  method?: string;
  params?: Record<string, unknown>;
  result?: Record<string, unknown>;
  error?: { message: string };
}

/** The `ws://` address the process printed (`Debugger listening on ws://…`), or undefined. */
export function inspectorAddress(log: string): string | undefined {
  return /Debugger listening on (ws:\/\/\S+)/.exec(log)?.[1];
}

/** A DevTools protocol session with a process and the worker threads attached to it. */
export class WorkerInspector {
  private sequence = 0;
  private readonly replies = new Map<number, (message: Message) => void>();
  private readonly workers = new Map<string, string>();

  private constructor(private readonly socket: WebSocket) {
    socket.addEventListener('message', (event) => this.receive(JSON.parse(String(event.data)) as Message));
  }

  static async connect(address: string): Promise<WorkerInspector> {
    const socket = new WebSocket(address);
    await new Promise<void>((resolve, reject) => {
      socket.addEventListener('open', () => resolve(), { once: true });
      socket.addEventListener('error', () => reject(new Error(`cannot connect to the inspector at ${address}`)), {
        once: true,
      });
    });
    const inspector = new WorkerInspector(socket);
    await inspector.call('NodeWorker.enable', { waitForDebuggerOnStart: false });
    await new Promise((resolve) => setTimeout(resolve, 500));
    return inspector;
  }

  /** The main thread's heap and each worker thread's, each after a full collection when `collect`. */
  async heaps(collect: boolean): Promise<HeapUsage[]> {
    const usages: HeapUsage[] = [];
    if (collect) await this.call('HeapProfiler.collectGarbage');
    const main = await this.call('Runtime.getHeapUsage');
    usages.push({ thread: 'main', usedBytes: Number(main.usedSize), totalBytes: Number(main.totalSize) });
    for (const [sessionId, title] of this.workers) {
      if (collect) await this.callInWorker(sessionId, 'HeapProfiler.collectGarbage');
      const usage = await this.callInWorker(sessionId, 'Runtime.getHeapUsage');
      usages.push({ thread: title, usedBytes: Number(usage.usedSize), totalBytes: Number(usage.totalSize) });
    }
    return usages;
  }

  close(): void {
    this.socket.close();
  }

  private call(method: string, params: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
    const id = ++this.sequence;
    this.socket.send(JSON.stringify({ id, method, params }));
    return this.reply(id, method);
  }

  private callInWorker(sessionId: string, method: string): Promise<Record<string, unknown>> {
    const id = ++this.sequence;
    const message = JSON.stringify({ id, method, params: {} });
    this.socket.send(
      JSON.stringify({ id: ++this.sequence, method: 'NodeWorker.sendMessageToWorker', params: { sessionId, message } }),
    );
    return this.reply(id, method);
  }

  private reply(id: number, method: string): Promise<Record<string, unknown>> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no answer to ${method} within 120 s`)), 120_000);
      this.replies.set(id, (message) => {
        clearTimeout(timer);
        if (message.error) reject(new Error(`${method}: ${message.error.message}`));
        else resolve(message.result ?? {});
      });
    });
  }

  private receive(message: Message): void {
    if (message.method === 'NodeWorker.attachedToWorker') {
      const { sessionId, workerInfo } = message.params as { sessionId: string; workerInfo: { url: string } };
      this.workers.set(sessionId, workerInfo.url.replace(/^.*\//, ''));
      // A thread's own domains answer only once enabled.
      const enable = JSON.stringify({ id: ++this.sequence, method: 'Runtime.enable', params: {} });
      this.socket.send(
        JSON.stringify({
          id: ++this.sequence,
          method: 'NodeWorker.sendMessageToWorker',
          params: { sessionId, message: enable },
        }),
      );
      return;
    }
    if (message.method === 'NodeWorker.detachedFromWorker') {
      this.workers.delete((message.params as { sessionId: string }).sessionId);
      return;
    }
    if (message.method === 'NodeWorker.receivedMessageFromWorker') {
      this.receive(JSON.parse((message.params as { message: string }).message) as Message);
      return;
    }
    if (message.id !== undefined) {
      this.replies.get(message.id)?.(message);
      this.replies.delete(message.id);
    }
  }
}
