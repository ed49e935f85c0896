import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** A request the stand-in received. */
export interface RecordedSearchRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: string;
}

/** What the stand-in answers: a status, a JSON (or raw text) body, optional delay. */
export interface SearchApiReply {
  status?: number;
  json?: unknown;
  text?: string;
  delayMs?: number;
}

/**
 * A stand-in for the SearXNG and Serper APIs on 127.0.0.1: each request is answered by
 * `reply(request)`, and every request is recorded. Close it at the end of each test.
 */
export class SearchApiServer {
  readonly requests: RecordedSearchRequest[] = [];
  private readonly sockets = new Set<import('node:net').Socket>();
  private readonly delayedReplies = new Set<NodeJS.Timeout>();

  private constructor(
    private readonly server: Server,
    readonly baseUrl: string,
  ) {}

  static async start(reply: (request: RecordedSearchRequest) => SearchApiReply): Promise<SearchApiServer> {
    let instance: SearchApiServer | undefined;
    const server = createServer((request: IncomingMessage, response: ServerResponse) => {
      let body = '';
      request.on('data', (data: Buffer) => (body += data.toString()));
      request.on('end', () => {
        const url = new URL(request.url ?? '/', 'http://127.0.0.1');
        const recorded: RecordedSearchRequest = {
          method: request.method ?? 'GET',
          path: url.pathname,
          query: url.searchParams,
          headers: request.headers,
          body,
        };
        instance?.requests.push(recorded);
        const answer = reply(recorded);
        const send = () => {
          if (response.destroyed) return;
          response.writeHead(answer.status ?? 200, {
            'content-type': answer.json === undefined ? 'text/plain' : 'application/json',
          });
          response.end(answer.json === undefined ? (answer.text ?? '') : JSON.stringify(answer.json));
        };
        if (!answer.delayMs) return send();
        const timer = setTimeout(() => {
          instance?.delayedReplies.delete(timer);
          send();
        }, answer.delayMs);
        instance?.delayedReplies.add(timer);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    instance = new SearchApiServer(server, `http://127.0.0.1:${port}`);
    server.on('connection', (socket) => {
      instance?.sockets.add(socket);
      socket.on('close', () => instance?.sockets.delete(socket));
    });
    return instance;
  }

  async close(): Promise<void> {
    for (const timer of this.delayedReplies) clearTimeout(timer);
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** A SearXNG `/search?format=json` body as the real API shapes it. */
export function searxngResponse(
  query: string,
  results: Array<{ title: string; url: string; content: string }>,
  unresponsiveEngines: unknown[] = [],
) {
  return {
    query,
    number_of_results: 0,
    results: results.map((result, index) => ({
      ...result,
      engine: 'duckduckgo',
      engines: ['duckduckgo'],
      positions: [index + 1],
      score: 1 / (index + 1),
      category: 'general',
      parsed_url: ['https', new URL(result.url).host, new URL(result.url).pathname, '', '', ''],
    })),
    answers: [],
    corrections: [],
    infoboxes: [],
    suggestions: [],
    unresponsive_engines: unresponsiveEngines,
  };
}

/** A Serper `/search` body as the real API shapes it. */
export function serperResponse(query: string, organic: Array<{ title: string; link: string; snippet: string }>) {
  return {
    searchParameters: { q: query, type: 'search', engine: 'google' },
    knowledgeGraph: { title: 'BYD Auto', type: 'Automobile manufacturer' },
    organic: organic.map((result, index) => ({ ...result, position: index + 1 })),
    peopleAlsoAsk: [],
    relatedSearches: [{ query: `${query} news` }],
    credits: 1,
  };
}
