import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { findFreePort } from '../../../src/processes/dev-server';

const root = resolve(__dirname, '../../..');
const HOST = '127.0.0.1';

/** Where `npm run setup:llama-server` puts llama.cpp's server and the tiny models. */
export const LLAMA_SERVER_DIRECTORY = join(root, '.tools', 'llama-server');
export const LLAMA_SERVER_BINARY = join(LLAMA_SERVER_DIRECTORY, 'bin', 'llama-server');
export const TINY_MODEL_DIRECTORY = join(LLAMA_SERVER_DIRECTORY, 'models');
/** The GBNF grammars of this tier (test/real-server/grammars/). */
export const GRAMMAR_DIRECTORY = join(root, 'test', 'real-server', 'grammars');

/** The models `make-tiny-model.py` writes: ChatML with tools, and the same with a Qwen3-style thinking template. */
export type TinyModel = 'tiny-chatml' | 'tiny-thinking';

/** How the server returns thinking (`--reasoning-format`). */
export type ReasoningFormat = 'none' | 'deepseek' | 'deepseek-legacy' | 'auto';

export interface LlamaServerOptions {
  /** A tiny model by name, or the path of any GGUF file. Default `'tiny-chatml'`. */
  model?: TinyModel | string;
  /** Context each request can use (a slot's `n_ctx`), in tokens; the server gets `-c` contextSize × parallel. Default 8192. */
  contextSize?: number;
  /**
   * Default sampling grammar (`--grammar-file`): a file name in test/real-server/grammars/
   * (`'deep-research.gbnf'`), an absolute path, or GBNF text (anything containing `::=`).
   * It applies to every request that sends no tools; a request with tools (and tool_choice other
   * than `none`) gets the chat template's tool-call grammar instead. Default: none.
   */
  grammar?: string;
  /** `--jinja`: apply the model's chat template with tools and parse tool calls. Default true. */
  jinja?: boolean;
  /** `--reasoning-format`. Default `'deepseek'` for tiny-thinking, else the server's own default (`auto`). */
  reasoningFormat?: ReasoningFormat;
  /** Sampling seed (`--seed`), so replies repeat. Default 42. */
  seed?: number;
  /** Requests served at once (`--parallel`), each in a slot of `contextSize` tokens. Default 1. */
  parallel?: number;
  /** CPU threads (`--threads`). Default 1 (the tiny model needs no more; the machine is shared). */
  threads?: number;
  /** Model name the server reports (`--alias`). Default the model's name. */
  alias?: string;
  /** More command-line arguments, appended as they are. Default none. */
  extraArguments?: string[];
  /** How long to wait for `/health` to answer 200, in milliseconds. Default 60,000. */
  startTimeoutMs?: number;
}

/** What was asked for, with defaults filled in and the grammar resolved to a file. */
interface ResolvedOptions {
  modelPath: string;
  alias: string;
  contextSize: number;
  grammarFile: string | undefined;
  jinja: boolean;
  reasoningFormat: ReasoningFormat | undefined;
  seed: number;
  parallel: number;
  threads: number;
  extraArguments: string[];
  startTimeoutMs: number;
}

const SETUP_HINT =
  "Run 'npm run setup:llama-server' (it builds llama.cpp's llama-server once per machine into ~/.cache/react-agent/llama-server/, linked from .tools/llama-server/, about 6–9 minutes on 2 cores, and writes the tiny models).";
const STOP_GRACE_MS = 5_000;
const LOG_LIMIT = 64 * 1024;

/** The error a real-server test fails with when the tools are not set up. */
export class LlamaServerMissingError extends Error {
  override readonly name = 'LlamaServerMissingError';
}

/** Throws LlamaServerMissingError (saying how to fix it) unless the binary runs. */
export function assertLlamaServerBuilt(): void {
  if (!existsSync(LLAMA_SERVER_BINARY))
    throw new LlamaServerMissingError(`llama-server is not built (${LLAMA_SERVER_BINARY} is missing). ${SETUP_HINT}`);
  const check = spawnSync(LLAMA_SERVER_BINARY, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  if (check.status !== 0)
    throw new LlamaServerMissingError(
      `${LLAMA_SERVER_BINARY} --version fails (${check.error?.message ?? `exit ${check.status}`}): ${check.stderr.trim()}. ${SETUP_HINT}`,
    );
}

/** Servers still running: SIGKILLed when the test process exits, so none outlives it. */
const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** The server process and how it ended. */
interface ServerProcess {
  child: ChildProcess;
  /** Resolves with a description of how it ended (or why it could not start). */
  exited: Promise<string>;
  exit?: string;
}

function startProcess(args: string[]): ServerProcess {
  const child = spawn(LLAMA_SERVER_BINARY, args, { cwd: root, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  const server: ServerProcess = {
    child,
    exited: new Promise<string>((resolveExit) => {
      child.once('exit', (code, signal) =>
        resolveExit(signal ? `was killed by ${signal}` : `exited with code ${code}`),
      );
      child.once('error', (error) => resolveExit(`could not be started (${error.message})`));
    }),
  };
  void server.exited.then((exit) => {
    server.exit = exit;
    running.delete(child);
  });
  return server;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolveSleep) => setTimeout(resolveSleep, ms));
}

/**
 * llama.cpp's OpenAI-compatible server (built by `npm run setup:llama-server`) serving a tiny
 * model on a free loopback port, as a child process the test owns: `close()` stops it, and it is
 * killed when the test process exits. `restart()` starts it again on the same port with other
 * options (another grammar, context size, model), so workers pointed at `baseUrl` keep working.
 */
export class LlamaServer {
  private process: ServerProcess | undefined;
  private output = '';
  private temporaryDirectory: string | undefined;
  private current!: ResolvedOptions;

  private constructor(
    /** The port the server listens on, on 127.0.0.1. */
    readonly port: number,
  ) {}

  /**
   * Starts the server and resolves once `/health` answers 200 (the model is loaded).
   * @throws LlamaServerMissingError when the binary or the model is missing, with the setup command.
   */
  static async start(options: LlamaServerOptions = {}): Promise<LlamaServer> {
    assertLlamaServerBuilt();
    const server = new LlamaServer(await findFreePort());
    server.current = server.resolve(options);
    await server.launch();
    return server;
  }

  /** OpenAI-compatible base URL, `http://127.0.0.1:PORT/v1` (what OPENAI_BASE_URL takes). */
  get baseUrl(): string {
    return `${this.origin}/v1`;
  }

  /** `http://127.0.0.1:PORT`, for llama-server's own endpoints (`/health`, `/props`, `/slots`). */
  get origin(): string {
    return `http://${HOST}:${this.port}`;
  }

  /** Model name the server reports; send it as `model` (any name works with one model loaded). */
  get modelName(): string {
    return this.current.alias;
  }

  /** Context each request can use, in tokens (what a context overflow's `n_ctx` says). */
  get contextSize(): number {
    return this.current.contextSize;
  }

  /** The server's stdout and stderr so far (the last 64 KiB). */
  get log(): string {
    return this.output;
  }

  /** Process id of the running server. */
  get pid(): number | undefined {
    return this.process?.child.pid;
  }

  /** GET /props: the server's settings as it reports them (n_ctx, chat_template, default_generation_settings, ...). */
  async props(): Promise<Record<string, unknown>> {
    const response = await fetch(`${this.origin}/props`);
    if (!response.ok) throw new Error(`GET /props answered ${response.status}: ${await response.text()}`);
    return (await response.json()) as Record<string, unknown>;
  }

  /**
   * How many prompt tokens the server counts for a chat request (`messages`, `tools`): its chat
   * template applied (POST /apply-template), then tokenized (POST /tokenize). What it reports as
   * `usage.prompt_tokens` for that request.
   */
  async promptTokens(request: { messages: unknown[]; tools?: unknown[] }): Promise<number> {
    const template = await this.postJson('/apply-template', request);
    const tokens = await this.postJson('/tokenize', {
      content: (template as { prompt: string }).prompt,
      add_special: false,
      parse_special: true,
    });
    return (tokens as { tokens: number[] }).tokens.length;
  }

  /** Token ids of `text`, as the server tokenizes a prompt (special tokens parsed). */
  async tokenize(text: string): Promise<number[]> {
    return (
      (await this.postJson('/tokenize', { content: text, add_special: false, parse_special: true })) as {
        tokens: number[];
      }
    ).tokens;
  }

  private async postJson(path: string, body: unknown): Promise<unknown> {
    const response = await fetch(`${this.origin}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (!response.ok) throw new Error(`POST ${path} answered ${response.status}: ${await response.text()}`);
    return response.json();
  }

  /** Stops the server and starts it again on the same port with `changes` applied to its options. */
  async restart(changes: LlamaServerOptions = {}): Promise<void> {
    const { alias: _alias, ...unchanged } = this.unresolve();
    // Another model gets its own name unless an alias is asked for again.
    const next = this.resolve({ ...(changes.model === undefined ? this.unresolve() : unchanged), ...changes });
    await this.stopProcess();
    this.current = next;
    await this.launch();
  }

  /** SIGTERM, SIGKILL after 5 s; removes the grammar files it wrote. Idempotent. */
  async close(): Promise<void> {
    await this.stopProcess();
    if (this.temporaryDirectory) rmSync(this.temporaryDirectory, { recursive: true, force: true });
    this.temporaryDirectory = undefined;
  }

  private async stopProcess(): Promise<void> {
    const server = this.process;
    this.process = undefined;
    if (server === undefined || server.exit !== undefined) return;
    server.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const stopped = await Promise.race([
      server.exited.then(() => true),
      new Promise<boolean>((resolveTimeout) => (timer = setTimeout(() => resolveTimeout(false), STOP_GRACE_MS))),
    ]);
    clearTimeout(timer);
    if (!stopped) {
      server.child.kill('SIGKILL');
      await server.exited;
    }
  }

  private unresolve(): LlamaServerOptions {
    const current = this.current;
    return {
      model: current.modelPath,
      alias: current.alias,
      contextSize: current.contextSize,
      ...(current.grammarFile ? { grammar: current.grammarFile } : {}),
      jinja: current.jinja,
      ...(current.reasoningFormat ? { reasoningFormat: current.reasoningFormat } : {}),
      seed: current.seed,
      parallel: current.parallel,
      threads: current.threads,
      extraArguments: current.extraArguments,
      startTimeoutMs: current.startTimeoutMs,
    };
  }

  private resolve(options: LlamaServerOptions): ResolvedOptions {
    const model = options.model ?? 'tiny-chatml';
    const modelPath =
      model === 'tiny-chatml' || model === 'tiny-thinking'
        ? join(TINY_MODEL_DIRECTORY, `${model}.gguf`)
        : resolve(model);
    if (!existsSync(modelPath)) throw new LlamaServerMissingError(`The model ${modelPath} is missing. ${SETUP_HINT}`);
    const modelName =
      modelPath
        .split('/')
        .pop()
        ?.replace(/\.gguf$/, '') ?? 'model';
    return {
      modelPath,
      alias: options.alias ?? modelName,
      contextSize: options.contextSize ?? 8192,
      grammarFile: options.grammar === undefined ? undefined : this.grammarFile(options.grammar),
      jinja: options.jinja ?? true,
      reasoningFormat: options.reasoningFormat ?? (modelName === 'tiny-thinking' ? 'deepseek' : undefined),
      seed: options.seed ?? 42,
      parallel: options.parallel ?? 1,
      threads: options.threads ?? 1,
      extraArguments: options.extraArguments ?? [],
      startTimeoutMs: options.startTimeoutMs ?? 60_000,
    };
  }

  /** A grammar file for `grammar`: a file of the grammars folder, a path, or GBNF text written to a temporary file. */
  private grammarFile(grammar: string): string {
    if (grammar.includes('::=')) {
      this.temporaryDirectory ??= mkdtempSync(join(tmpdir(), 'llama-server-grammar-'));
      const file = join(
        this.temporaryDirectory,
        `grammar-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.gbnf`,
      );
      writeFileSync(file, grammar);
      return file;
    }
    const path = grammar.includes('/') ? resolve(grammar) : join(GRAMMAR_DIRECTORY, grammar);
    if (!existsSync(path)) throw new Error(`LlamaServer: grammar file ${path} does not exist`);
    return path;
  }

  private arguments(): string[] {
    const options = this.current;
    return [
      '--model',
      options.modelPath,
      '--alias',
      options.alias,
      '--host',
      HOST,
      '--port',
      String(this.port),
      '--ctx-size',
      String(options.contextSize * options.parallel),
      '--parallel',
      String(options.parallel),
      '--threads',
      String(options.threads),
      '--seed',
      String(options.seed),
      '--no-warmup',
      ...(options.jinja ? ['--jinja'] : []),
      ...(options.reasoningFormat ? ['--reasoning-format', options.reasoningFormat] : []),
      ...(options.grammarFile ? ['--grammar-file', options.grammarFile] : []),
      ...options.extraArguments,
    ];
  }

  private async launch(): Promise<void> {
    const args = this.arguments();
    this.output = '';
    const server = startProcess(args);
    this.process = server;
    const collect = (data: Buffer) => {
      this.output += data.toString();
      if (this.output.length > LOG_LIMIT) this.output = this.output.slice(-LOG_LIMIT);
    };
    server.child.stdout?.on('data', collect);
    server.child.stderr?.on('data', collect);

    const fail = async (reason: string): Promise<never> => {
      await this.stopProcess();
      const tail = this.output.trim().split('\n').slice(-30).join('\n');
      throw new Error(
        `llama-server (${LLAMA_SERVER_BINARY} ${args.join(' ')}) ${reason}. Last lines of its log:\n${tail}`,
      );
    };
    const deadline = Date.now() + this.current.startTimeoutMs;
    for (;;) {
      if (server.exit !== undefined) return fail(server.exit);
      if (Date.now() > deadline) return fail(`did not answer /health within ${this.current.startTimeoutMs} ms`);
      try {
        const response = await fetch(`${this.origin}/health`, { signal: AbortSignal.timeout(2_000) });
        if (response.status === 200) return;
      } catch {
        // not listening yet
      }
      await Promise.race([sleep(100), server.exited]);
    }
  }
}
