import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';

/*
 * Headless Chromium for tests that look at a page as a browser draws it: find the browser, run it
 * once per command (its own process group and profile directory, killed with its whole group on
 * timeout or when the test process exits), take a screenshot or dump the DOM, and read a PNG's
 * size and pixels with node:zlib (no image library).
 */

const INSTALL_HINT =
  'install it with `apt-get install -y --no-install-recommends chromium` (.ci/run does this when it is missing)';

/** Chromium process groups still running: killed when the test process exits. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) killGroup(child);
});

/** SIGKILLs a browser's whole process group (it was spawned detached); gone already is fine. */
export function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
}

/** Keeps a browser process to be killed with its group if the test process exits first; `forget` once it is stopped. */
export const browserProcesses = {
  remember: (child: ChildProcess) => void running.add(child),
  forget: (child: ChildProcess) => void running.delete(child),
};

/**
 * The path of the `chromium` executable (or CHROMIUM_PATH when set). Throws, saying how to
 * install it, when there is none: the browser tests fail rather than skip.
 */
export function requireChromium(): string {
  const configured = process.env.CHROMIUM_PATH;
  if (configured) return configured;
  const found = spawnSync('sh', ['-c', 'command -v chromium || command -v chromium-browser'], { encoding: 'utf8' });
  const path = found.stdout.trim().split('\n')[0];
  if (found.status !== 0 || !path) {
    throw new Error(`headless Chromium is needed by this test and \`chromium\` is not on PATH: ${INSTALL_HINT}.`);
  }
  return path;
}

/** What one Chromium command printed and how it ended. */
export interface ChromiumOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** Options of {@link runHeadlessChromium}. */
export interface ChromiumOptions {
  /** Kill the browser (its whole process group) after this long and reject. Default 60 s. */
  timeoutMs?: number;
  /** Browser window size. Default 1280×2400. */
  width?: number;
  height?: number;
  /** How long the page may run in virtual time before the command acts. Default 15 s. */
  virtualTimeBudgetMs?: number;
}

/**
 * Runs headless Chromium once on `url` with `action` flags (`--screenshot=…`, `--dump-dom`), in a
 * throw-away profile directory and its own process group. Resolves with its output when it exits
 * 0; rejects with its stderr otherwise, or after the timeout, when the group is SIGKILLed.
 */
export async function runHeadlessChromium(
  url: string,
  action: string[],
  options: ChromiumOptions = {},
): Promise<ChromiumOutcome> {
  const executable = requireChromium();
  const profile = mkdtempSync(join(tmpdir(), 'chromium-profile-'));
  const timeoutMs = options.timeoutMs ?? 60_000;
  const argumentsList = [
    '--headless',
    '--no-sandbox',
    '--disable-gpu',
    '--disable-dev-shm-usage',
    '--no-first-run',
    '--no-default-browser-check',
    '--disable-extensions',
    '--hide-scrollbars',
    `--user-data-dir=${profile}`,
    `--virtual-time-budget=${options.virtualTimeBudgetMs ?? 15_000}`,
    `--window-size=${options.width ?? 1280},${options.height ?? 2400}`,
    ...action,
    url,
  ];
  const child = spawn(executable, argumentsList, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  browserProcesses.remember(child);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (data: Buffer) => (stdout += data.toString()));
  child.stderr?.on('data', (data: Buffer) => (stderr += data.toString()));
  try {
    const outcome = await new Promise<ChromiumOutcome>((resolve, reject) => {
      const timer = setTimeout(() => {
        killGroup(child);
        reject(
          new Error(
            `headless Chromium did not finish within ${timeoutMs} ms (killed): ${argumentsList.join(' ')}\n${stderr.slice(-2000)}`,
          ),
        );
      }, timeoutMs);
      child.once('error', (error) => {
        clearTimeout(timer);
        reject(new Error(`could not start ${executable} (${error.message}); ${INSTALL_HINT}`));
      });
      child.once('exit', (code, signal) => {
        clearTimeout(timer);
        resolve({ code, signal, stdout, stderr });
      });
    });
    if (outcome.code !== 0)
      throw new Error(
        `headless Chromium exited with ${outcome.code ?? outcome.signal}: ${argumentsList.join(' ')}\n${stderr.slice(-2000)}`,
      );
    return outcome;
  } finally {
    // the browser's helpers (zygote, GPU, renderer processes) share its group
    killGroup(child);
    browserProcesses.forget(child);
    rmSync(profile, { recursive: true, force: true });
  }
}

/** Takes a screenshot of `url` into `pngPath` (the window size of `options`). */
export async function screenshotPage(
  url: string,
  pngPath: string,
  options: ChromiumOptions = {},
): Promise<ChromiumOutcome> {
  return runHeadlessChromium(url, [`--screenshot=${pngPath}`], options);
}

/** The page's DOM as Chromium serialises it after loading `url`. */
export async function dumpPageDom(url: string, options: ChromiumOptions = {}): Promise<string> {
  return (await runHeadlessChromium(url, ['--dump-dom'], options)).stdout;
}

/** A decoded 8-bit RGB(A) PNG: width, height and RGBA pixels, row by row. */
export interface DecodedPng {
  width: number;
  height: number;
  /** 4 bytes per pixel (alpha 255 for RGB images). */
  rgba: Uint8Array;
}

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from a PNG's IHDR chunk; throws when `png` is not a PNG. */
export function pngSize(png: Buffer): { width: number; height: number } {
  if (png.length < 24 || !png.subarray(0, 8).equals(PNG_SIGNATURE) || png.toString('latin1', 12, 16) !== 'IHDR') {
    throw new Error('not a PNG file');
  }
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

function paeth(left: number, up: number, upLeft: number): number {
  const estimate = left + up - upLeft;
  const toLeft = estimate > left ? estimate - left : left - estimate;
  const toUp = estimate > up ? estimate - up : up - estimate;
  const toUpLeft = estimate > upLeft ? estimate - upLeft : upLeft - estimate;
  if (toLeft <= toUp && toLeft <= toUpLeft) return left;
  return toUp <= toUpLeft ? up : upLeft;
}

/**
 * Decodes a non-interlaced 8-bit RGB or RGBA PNG (what Chromium's screenshots are): concatenated
 * IDAT chunks inflated, each row's filter (none, sub, up, average, Paeth) undone.
 */
export function decodePng(png: Buffer): DecodedPng {
  const { width, height } = pngSize(png);
  const bitDepth = png[24];
  const colourType = png[25];
  const interlace = png[28];
  if (bitDepth !== 8 || (colourType !== 2 && colourType !== 6) || interlace !== 0) {
    throw new Error(`unsupported PNG (bit depth ${bitDepth}, colour type ${colourType}, interlace ${interlace})`);
  }
  const channels = colourType === 6 ? 4 : 3;
  const chunks: Buffer[] = [];
  for (let offset = 8; offset < png.length;) {
    const length = png.readUInt32BE(offset);
    const type = png.toString('latin1', offset + 4, offset + 8);
    if (type === 'IDAT') chunks.push(png.subarray(offset + 8, offset + 8 + length));
    if (type === 'IEND') break;
    offset += 12 + length;
  }
  // a copy in this realm: under jest, element access to Node-realm buffers is many times slower
  const raw = new Uint8Array(inflateSync(Buffer.concat(chunks)));
  const stride = width * channels;
  const pixels = new Uint8Array(stride * height);
  for (let row = 0; row < height; row += 1) {
    const filter = raw[row * (stride + 1)];
    const source = row * (stride + 1) + 1;
    const target = row * stride;
    const previous = target - stride;
    if (filter === 0) {
      pixels.set(raw.subarray(source, source + stride), target);
    } else if (filter === 1) {
      for (let index = 0; index < stride; index += 1) {
        pixels[target + index] = raw[source + index]! + (index >= channels ? pixels[target + index - channels]! : 0);
      }
    } else if (filter === 2) {
      for (let index = 0; index < stride; index += 1)
        pixels[target + index] = raw[source + index]! + (row > 0 ? pixels[previous + index]! : 0);
    } else if (filter === 3) {
      for (let index = 0; index < stride; index += 1) {
        const left = index >= channels ? pixels[target + index - channels]! : 0;
        const up = row > 0 ? pixels[previous + index]! : 0;
        pixels[target + index] = raw[source + index]! + ((left + up) >> 1);
      }
    } else if (filter === 4) {
      for (let index = 0; index < stride; index += 1) {
        const left = index >= channels ? pixels[target + index - channels]! : 0;
        const up = row > 0 ? pixels[previous + index]! : 0;
        const upLeft = row > 0 && index >= channels ? pixels[previous + index - channels]! : 0;
        pixels[target + index] = raw[source + index]! + paeth(left, up, upLeft);
      }
    } else {
      throw new Error(`bad PNG filter ${filter} in row ${row}`);
    }
  }
  if (channels === 4) return { width, height, rgba: pixels };
  const rgba = new Uint8Array(width * height * 4);
  for (let pixel = 0; pixel < width * height; pixel += 1) {
    rgba.set(pixels.subarray(pixel * 3, pixel * 3 + 3), pixel * 4);
    rgba[pixel * 4 + 3] = 255;
  }
  return { width, height, rgba };
}

/** How many pixels are within `tolerance` (per channel) of the colour `#rrggbb`. */
export function countPixelsNear(image: DecodedPng, hex: string, tolerance = 12): number {
  const [red, green, blue] = [1, 3, 5].map((start) => Number.parseInt(hex.slice(start, start + 2), 16)) as [
    number,
    number,
    number,
  ];
  const rgba = image.rgba;
  let count = 0;
  for (let offset = 0; offset < rgba.length; offset += 4) {
    const redDifference = rgba[offset]! - red;
    const greenDifference = rgba[offset + 1]! - green;
    const blueDifference = rgba[offset + 2]! - blue;
    if (
      redDifference <= tolerance &&
      redDifference >= -tolerance &&
      greenDifference <= tolerance &&
      greenDifference >= -tolerance &&
      blueDifference <= tolerance &&
      blueDifference >= -tolerance
    ) {
      count += 1;
    }
  }
  return count;
}

/** Share of pixels (0..1) that are not (near) white. */
export function nonWhiteShare(image: DecodedPng): number {
  const rgba = image.rgba;
  let count = 0;
  const pixels = rgba.length / 4;
  for (let offset = 0; offset < rgba.length; offset += 4) {
    if (rgba[offset]! < 245 || rgba[offset + 1]! < 245 || rgba[offset + 2]! < 245) count += 1;
  }
  return pixels === 0 ? 0 : count / pixels;
}
