import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable, Writable } from 'node:stream';
import { browserProcesses, killGroup, requireChromium } from './headless-chromium';

/*
 * Headless Chromium driven through the DevTools protocol over a pipe (`--remote-debugging-pipe`:
 * JSON messages separated by NUL bytes on file descriptors 3 and 4), for pages that need a step
 * before the picture: a Web UI whose list columns live in localStorage. No WebSocket, no npm
 * browser package: the Debian `chromium` the browser tier already uses. The browser runs in its
 * own process group with a throw-away profile; the group is killed on close, on timeout and when
 * the test process exits.
 */

interface DevToolsMessage {
  id?: number;
  method?: string;
  sessionId?: string;
  result?: Record<string, unknown>;
  error?: { message: string };
  params?: Record<string, unknown>;
}

/** One page of a headless Chromium, driven through the DevTools protocol. */
export class ChromiumPage {
  private nextId = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (result: Record<string, unknown>) => void; reject: (error: Error) => void }
  >();
  private readonly listeners = new Set<(message: DevToolsMessage) => void>();
  private sessionId = '';
  private stderr = '';

  private constructor(
    private readonly child: ChildProcess,
    private readonly profile: string,
    private readonly timeoutMs: number,
  ) {
    const input = child.stdio[4] as Readable;
    let buffered = Buffer.alloc(0);
    input.on('data', (data: Buffer) => {
      buffered = Buffer.concat([buffered, data]);
      for (let end = buffered.indexOf(0); end >= 0; end = buffered.indexOf(0)) {
        const message = JSON.parse(buffered.subarray(0, end).toString('utf8')) as DevToolsMessage;
        buffered = buffered.subarray(end + 1);
        this.receive(message);
      }
    });
    child.stderr?.on('data', (data: Buffer) => (this.stderr = (this.stderr + data.toString()).slice(-4000)));
    child.once('exit', () => {
      for (const { reject } of this.waiting.values()) reject(new Error(`Chromium exited: ${this.stderr.slice(-1000)}`));
      this.waiting.clear();
    });
  }

  /** Starts Chromium with one blank page of `width`×`height`; each command after gives up after `timeoutMs`. */
  static async open({
    width = 1280,
    height = 720,
    timeoutMs = 30_000,
  }: { width?: number; height?: number; timeoutMs?: number } = {}): Promise<ChromiumPage> {
    const profile = mkdtempSync(join(tmpdir(), 'chromium-devtools-'));
    const child = spawn(
      requireChromium(),
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-dev-shm-usage',
        '--no-first-run',
        '--no-default-browser-check',
        '--disable-extensions',
        '--hide-scrollbars',
        '--force-color-profile=srgb',
        `--user-data-dir=${profile}`,
        `--window-size=${width},${height}`,
        '--remote-debugging-pipe',
        'about:blank',
      ],
      { detached: true, stdio: ['ignore', 'ignore', 'pipe', 'pipe', 'pipe'] },
    );
    browserProcesses.remember(child);
    const page = new ChromiumPage(child, profile, timeoutMs);
    try {
      const { targetId } = (await page.send('Target.createTarget', { url: 'about:blank' }, false)) as {
        targetId: string;
      };
      const { sessionId } = (await page.send('Target.attachToTarget', { targetId, flatten: true }, false)) as {
        sessionId: string;
      };
      page.sessionId = sessionId;
      await page.send('Page.enable');
      await page.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
      return page;
    } catch (error) {
      await page.close();
      throw error;
    }
  }

  /** Sets the viewport's size (what the next screenshot shows). */
  async resize(width: number, height: number): Promise<void> {
    await this.send('Emulation.setDeviceMetricsOverride', { width, height, deviceScaleFactor: 1, mobile: false });
  }

  /** Loads `url` and resolves on its load event. */
  async navigate(url: string): Promise<void> {
    const loaded = this.event('Page.loadEventFired');
    const { errorText } = (await this.send('Page.navigate', { url })) as { errorText?: string };
    if (errorText) throw new Error(`could not load ${url}: ${errorText}`);
    await loaded;
  }

  /** The value of a JavaScript expression evaluated in the page (awaited when it is a promise). */
  async evaluate<T>(expression: string): Promise<T> {
    const { result, exceptionDetails } = (await this.send('Runtime.evaluate', {
      expression,
      returnByValue: true,
      awaitPromise: true,
    })) as {
      result: { value: T };
      exceptionDetails?: { text: string; exception?: { description?: string } };
    };
    if (exceptionDetails)
      throw new Error(`${expression}: ${exceptionDetails.exception?.description ?? exceptionDetails.text}`);
    return result.value;
  }

  /** Polls a boolean expression until it is true; rejects after `timeoutMs` saying which. */
  async waitFor(expression: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await this.evaluate<boolean>(`Boolean(${expression})`))) {
      if (Date.now() > deadline) throw new Error(`the page did not reach ${expression} within ${timeoutMs} ms`);
      await new Promise((resolveWait) => setTimeout(resolveWait, 200));
    }
  }

  /** The page as Chromium serialises it now. */
  dom(): Promise<string> {
    return this.evaluate<string>('document.documentElement.outerHTML');
  }

  /** A PNG of the viewport. */
  async screenshot(): Promise<Buffer> {
    const { data } = (await this.send('Page.captureScreenshot', { format: 'png' })) as { data: string };
    return Buffer.from(data, 'base64');
  }

  /** Stops the browser (its whole process group) and removes its profile. */
  async close(): Promise<void> {
    killGroup(this.child);
    for (const stream of [this.child.stdio[3], this.child.stdio[4]]) (stream as Readable | Writable | null)?.destroy();
    browserProcesses.forget(this.child);
    rmSync(this.profile, { recursive: true, force: true });
  }

  private receive(message: DevToolsMessage): void {
    if (message.id !== undefined) {
      const waiting = this.waiting.get(message.id);
      this.waiting.delete(message.id);
      if (message.error) waiting?.reject(new Error(message.error.message));
      else waiting?.resolve(message.result ?? {});
      return;
    }
    for (const listener of this.listeners) listener(message);
  }

  private event(method: string): Promise<void> {
    return new Promise((resolveEvent, reject) => {
      const timer = setTimeout(() => {
        this.listeners.delete(listener);
        reject(new Error(`no ${method} within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      const listener = (message: DevToolsMessage) => {
        if (message.method !== method || message.sessionId !== this.sessionId) return;
        clearTimeout(timer);
        this.listeners.delete(listener);
        resolveEvent();
      };
      this.listeners.add(listener);
    });
  }

  private send(
    method: string,
    params: Record<string, unknown> = {},
    inSession = true,
  ): Promise<Record<string, unknown>> {
    const id = ++this.nextId;
    const output = this.child.stdio[3] as Writable;
    return new Promise((resolveSend, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`DevTools ${method} did not answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.waiting.set(id, {
        resolve: (result) => {
          clearTimeout(timer);
          resolveSend(result);
        },
        reject: (error) => {
          clearTimeout(timer);
          reject(error);
        },
      });
      output.write(`${JSON.stringify({ id, method, params, ...(inSession ? { sessionId: this.sessionId } : {}) })}\0`);
    });
  }
}
