/**
 * A model server's response body, bounded and cut into whole server-sent events before the
 * openai client reads it (issue 28).
 *
 * openai 6's SSE reader (`iterSSEChunks`) copied everything it held into a new buffer for every
 * network chunk and searched it again from the start for the blank line that ends an event:
 * quadratic in the bytes of an unfinished event. A server sending 200 MB without a newline kept a
 * worker's main thread busy for minutes (20 MB: 14 s, 200 MB: over 20 minutes), every other run on
 * it frozen. openai 7's reader grows its buffer by doubling and is linear (20 MB: 0.6 s), but it
 * still holds an unfinished event however large and reads a body of any length, so the limits
 * below are this wrapper's alone.
 * This wrapper, given to the client as its `fetch`, passes the body through a
 * {@link ServerSentEventFramer}: one pass over each byte, each event handed on as one chunk that
 * ends with its blank line, so the client finds the end at once and holds nothing over; and it
 * refuses a line longer than `maxLineBytes` and a body longer than `maxStreamBytes` by erroring
 * the body with a {@link ModelStreamLimitError} (the request is then cancelled).
 */

/** What a model server's response body may hold. */
export interface ModelStreamLimits {
  /** Longest line of the body, in bytes (one SSE `data:` line: one chunk's JSON). */
  maxLineBytes: number;
  /** Longest body, in bytes, framing included. */
  maxStreamBytes: number;
}

/** Thrown into the body's reader when the server sent more than a {@link ModelStreamLimits} allows. */
export class ModelStreamLimitError extends Error {
  constructor(
    /** Which limit: one line, or the whole body. */
    readonly limit: 'line' | 'stream',
    /** The limit, in bytes. */
    readonly limitBytes: number,
  ) {
    super(
      limit === 'line'
        ? `The model server sent a line longer than ${limitBytes} bytes.`
        : `The model server sent more than ${limitBytes} bytes.`,
    );
    this.name = 'ModelStreamLimitError';
  }
}

const LF = 0x0a;
const CR = 0x0d;

/**
 * Cuts a byte stream into server-sent events where the openai client's reader ends them (a
 * blank line: `\n\n`, `\r\r` or `\r\n\r\n`), counting the bytes of each line and of the whole
 * stream. Linear: every byte is looked at once and copied at most once.
 */
export class ServerSentEventFramer {
  private pending: Uint8Array[] = [];
  private pendingBytes = 0;
  private lineBytes = 0;
  private streamBytes = 0;
  /** The last three bytes since the last event ended (most recent first); -1 where there are none. */
  private previous1 = -1;
  private previous2 = -1;
  private previous3 = -1;

  constructor(private readonly limits: ModelStreamLimits) {}

  /**
   * The events that `chunk` completes, each ending with its blank line.
   *
   * @throws ModelStreamLimitError past a limit.
   */
  push(chunk: Uint8Array): Uint8Array[] {
    this.streamBytes += chunk.length;
    if (this.streamBytes > this.limits.maxStreamBytes)
      throw new ModelStreamLimitError('stream', this.limits.maxStreamBytes);
    const events: Uint8Array[] = [];
    let eventStart = 0;
    let lineStart = 0;
    for (let index = 0; index < chunk.length; index += 1) {
      const byte = chunk[index] as number;
      if (byte !== LF && byte !== CR) continue;
      const lineLength = this.lineBytes + index - lineStart;
      this.checkLine(lineLength);
      // Another byte came just before this line end: it follows no line end.
      if (lineLength > 0) this.previous1 = this.previous2 = this.previous3 = -1;
      this.lineBytes = 0;
      lineStart = index + 1;
      const ends =
        (byte === LF && this.previous1 === LF) ||
        (byte === CR && this.previous1 === CR) ||
        (byte === LF && this.previous1 === CR && this.previous2 === LF && this.previous3 === CR);
      if (ends) {
        events.push(this.take(chunk.subarray(eventStart, index + 1)));
        eventStart = index + 1;
        this.previous1 = this.previous2 = this.previous3 = -1;
      } else {
        this.remember(byte);
      }
    }
    // Bytes after the last line end begin the next line.
    this.lineBytes += chunk.length - lineStart;
    this.checkLine(this.lineBytes);
    if (eventStart < chunk.length) {
      this.pending.push(chunk.subarray(eventStart));
      this.pendingBytes += chunk.length - eventStart;
    }
    return events;
  }

  /** What is left when the stream ends (an event without its blank line), if anything. */
  flush(): Uint8Array | undefined {
    return this.pendingBytes ? this.take(new Uint8Array()) : undefined;
  }

  private remember(byte: number): void {
    this.previous3 = this.previous2;
    this.previous2 = this.previous1;
    this.previous1 = byte;
  }

  private checkLine(bytes: number): void {
    if (bytes > this.limits.maxLineBytes) throw new ModelStreamLimitError('line', this.limits.maxLineBytes);
  }

  /** The pending bytes and `last` as one array; nothing pending after. */
  private take(last: Uint8Array): Uint8Array {
    if (!this.pendingBytes) return last;
    const event = new Uint8Array(this.pendingBytes + last.length);
    let offset = 0;
    for (const part of this.pending) {
      event.set(part, offset);
      offset += part.length;
    }
    event.set(last, offset);
    this.pending = [];
    this.pendingBytes = 0;
    return event;
  }
}

/** `body` through a {@link ServerSentEventFramer}: one chunk per event, erroring past the limits. */
export function framedEventStream(
  body: ReadableStream<Uint8Array>,
  limits: ModelStreamLimits,
): ReadableStream<Uint8Array> {
  const framer = new ServerSentEventFramer(limits);
  return body.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        for (const event of framer.push(chunk)) controller.enqueue(event);
      },
      flush(controller) {
        const rest = framer.flush();
        if (rest) controller.enqueue(rest);
      },
    }),
  );
}

/**
 * A `fetch` for the openai client whose response bodies go through {@link framedEventStream}:
 * every body, errors included, since the client reads a streamed reply as SSE whatever its
 * content type says. Erroring the body cancels it, which closes the connection.
 */
export function boundedEventStreamFetch(
  limits: ModelStreamLimits,
  fetchImplementation: typeof fetch = fetch,
): typeof fetch {
  return async (input, init) => {
    const response = await fetchImplementation(input, init);
    if (!response.body) return response;
    return new Response(framedEventStream(response.body, limits), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
