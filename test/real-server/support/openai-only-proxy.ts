import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * A reverse proxy in front of llama-server that passes only the OpenAI-compatible API (`/v1/…`)
 * and `/health`, and answers 404 to everything else (`/props`, `/api/ps`, …): llama-server as a
 * server that does not say its context window (a gateway, a hosted API), so a run finds the
 * window only from a context-length refusal. Streams pass through as they come; a client that
 * disconnects disconnects the upstream request too (llama-server then stops generating).
 */
export class OpenAIOnlyProxy {
  private readonly sockets = new Set<Socket>();

  private constructor(
    private readonly server: Server,
    /** Base URL for the openai client, e.g. http://127.0.0.1:PORT/v1. */
    readonly baseUrl: string,
    /** Requests answered 404, as `METHOD /path`. */
    readonly refused: string[],
  ) {
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
  }

  /** Starts the proxy on a free 127.0.0.1 port in front of `origin` (`http://127.0.0.1:PORT`). */
  static async start(origin: string): Promise<OpenAIOnlyProxy> {
    const refused: string[] = [];
    const server = createServer((request, response) => {
      const path = (request.url ?? '/').split('?')[0] ?? '/';
      if (!path.startsWith('/v1/') && path !== '/health') {
        refused.push(`${request.method ?? '?'} ${path}`);
        request.resume();
        response
          .writeHead(404, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { code: 404, message: 'File Not Found', type: 'not_found_error' } }));
        return;
      }
      const upstream = httpRequest(
        `${origin}${request.url ?? '/'}`,
        { method: request.method, headers: request.headers },
        (upstreamResponse) => {
          response.writeHead(upstreamResponse.statusCode ?? 502, upstreamResponse.headers);
          upstreamResponse.pipe(response);
        },
      );
      upstream.on('error', () => response.destroy());
      response.on('close', () => upstream.destroy());
      request.pipe(upstream);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve());
    });
    return new OpenAIOnlyProxy(server, `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, refused);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
