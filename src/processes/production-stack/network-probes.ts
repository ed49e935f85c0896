import { request } from 'node:http';
import { connect } from 'node:net';

/** Every service of the stack listens on the host's loopback only. */
export const STACK_HOST = '127.0.0.1';

/** True when something accepts a TCP connection on `host`:`port` within `timeoutMs`. */
export function tcpAnswers(host: string, port: number, timeoutMs = 1_500): Promise<boolean> {
  return new Promise((resolveAnswer) => {
    const socket = connect({ host, port, timeout: timeoutMs });
    socket.once('connect', () => {
      socket.destroy();
      resolveAnswer(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolveAnswer(false);
    });
    socket.once('error', () => resolveAnswer(false));
  });
}

/** The status code of `GET <path>` on 127.0.0.1:`port`, or undefined when nothing answers HTTP within `timeoutMs`. */
export function httpStatus(port: number, path: string, timeoutMs = 2_000): Promise<number | undefined> {
  return new Promise((resolveStatus) => {
    const probe = request({ host: STACK_HOST, port, path, method: 'GET', timeout: timeoutMs }, (response) => {
      response.resume();
      resolveStatus(response.statusCode);
    });
    probe.on('timeout', () => probe.destroy());
    probe.on('error', () => resolveStatus(undefined));
    probe.end();
  });
}
