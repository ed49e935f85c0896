import { createServer, type RequestListener } from 'node:http';
import type { AddressInfo } from 'node:net';
import { LiveTextServer, type LiveTextServerOptions } from '../../../activities/live-text/live-text-server';
import type { LiveTextNotice } from '../../../src/client/live-text';

/*
 * What the live text attack tests share: the servers a test starts (closed after it: each file
 * calls `afterEach(closeServers)`), a worker's live text server, a hostile one that answers as its
 * handler says, and reading the notices a watcher gave.
 */

const servers: Array<{ close(): unknown }> = [];

/** Closes every server the test started. */
export async function closeServers(): Promise<void> {
  for (const server of servers.splice(0)) await server.close();
}

/** A worker's live text server on loopback, closed after the test. */
export async function liveServer(options: LiveTextServerOptions = {}): Promise<LiveTextServer> {
  const server = await LiveTextServer.start(options);
  servers.push(server);
  return server;
}

/** A server on loopback that answers as `handler` says, closed (its connections cut) after the test; its base URL. */
export async function hostileServer(handler: RequestListener): Promise<string> {
  const server = createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push({
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Waits until `check` holds of the notices (polled every 10 ms), failing after `ms`. */
export async function until(notices: LiveTextNotice[], check: (notices: LiveTextNotice[]) => boolean, ms = 5_000) {
  const deadline = Date.now() + ms;
  while (!check(notices)) {
    if (Date.now() > deadline) throw new Error(`not in time: ${JSON.stringify(notices)}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The text the notices carried, of one activity's calls if given. */
export const textOf = (notices: LiveTextNotice[], activityId?: string) =>
  notices
    .map((notice) =>
      notice.type === 'text' && (activityId === undefined || notice.activityId === activityId) ? notice.text : '',
    )
    .join('');
