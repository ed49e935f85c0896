/** What a chaos run does; every field has a default (see {@link DEFAULT_CHAOS_OPTIONS}). */
export interface ChaosOptions {
  /** Research runs started (spread over `spreadSeconds`). */
  runs: number;
  /** Worker processes SIGKILLed (each is restarted). */
  workerKills: number;
  /** Times the dev server is SIGKILLed and restarted on its database file. */
  serverRestarts: number;
  /** Runs cancelled, alternately through the Temporal client and `temporal workflow cancel` (default 8, at most `runs`). */
  cancels: number;
  /** Worker processes kept running. */
  workers: number;
  /** Seed of every random choice (scenarios, latencies, the chaos schedule). */
  seed: number;
  /**
   * Runs start at random moments within this many seconds; worker kills fall within it plus 10 s.
   * Default: 3 s per run (at least 10 s), so with the default 20 kills a killed worker is back
   * (about 5 s) well before the next kill, and a kill lands on a random worker of a balanced pair.
   */
  spreadSeconds: number;
  /** Share of runs using the `native` protocol (the rest use `deep-research`). */
  nativeShare: number;
  /** Worker REACT_AGENT_MODEL_HEARTBEAT_SECONDS: how soon a model call on a killed worker is retried. */
  modelHeartbeatSeconds: number;
  /** A cancelled run must have no tool running this long after the cancel request. */
  cancelStopSeconds: number;
  /** How long to wait, after the chaos ends, for every run to reach a terminal state. */
  settleSeconds: number;
  /** Keep the temp dir (database, logs, transcripts) instead of deleting it. */
  keep: boolean;
  /** Print each chaos event as it happens. */
  verbose: boolean;
}

export const DEFAULT_CHAOS_OPTIONS: ChaosOptions = {
  runs: 50,
  workerKills: 20,
  serverRestarts: 3,
  cancels: 8,
  workers: 2,
  seed: 1,
  spreadSeconds: 0,
  nativeShare: 0.3,
  modelHeartbeatSeconds: 5,
  cancelStopSeconds: 10,
  settleSeconds: 300,
  keep: false,
  verbose: false,
};

/** Fills in defaults (the spread follows the number of runs) and checks the values; throws a RangeError naming the bad one. */
export function resolveChaosOptions(partial: Partial<ChaosOptions> = {}): ChaosOptions {
  const options: ChaosOptions = { ...DEFAULT_CHAOS_OPTIONS, ...partial };
  if (!partial.spreadSeconds) options.spreadSeconds = Math.max(10, Math.round(options.runs * 3));
  if (partial.cancels === undefined) options.cancels = Math.min(options.cancels, options.runs);
  const integer = (name: keyof ChaosOptions, minimum: number) => {
    const value = options[name];
    if (typeof value !== 'number' || !Number.isInteger(value) || value < minimum)
      throw new RangeError(`chaos: ${flagOf(name)} must be an integer of at least ${minimum}, got ${String(value)}`);
  };
  integer('runs', 1);
  integer('workerKills', 0);
  integer('serverRestarts', 0);
  integer('cancels', 0);
  integer('workers', 1);
  integer('seed', 0);
  integer('modelHeartbeatSeconds', 1);
  if (options.cancels > options.runs)
    throw new RangeError(`chaos: --cancels (${options.cancels}) cannot exceed --runs (${options.runs})`);
  for (const name of ['spreadSeconds', 'cancelStopSeconds', 'settleSeconds'] as const) {
    if (!Number.isFinite(options[name]) || options[name] <= 0)
      throw new RangeError(`chaos: ${flagOf(name)} must be a positive number, got ${String(options[name])}`);
  }
  if (!(options.nativeShare >= 0 && options.nativeShare <= 1))
    throw new RangeError(`chaos: --native-share must be from 0 to 1, got ${String(options.nativeShare)}`);
  return options;
}

function flagOf(name: string): string {
  return `--${name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`)}`;
}

export const CHAOS_USAGE = `Usage: npx tsx scripts/chaos.ts [options]

Starts a dev server (SQLite in a temp dir), worker processes and a scripted model server with
random latencies, runs research runs while killing workers, restarting the server and cancelling
runs, then checks every run's invariants. Exits 1 on any violation.

  --runs N              research runs (default 50)
  --worker-kills N      worker SIGKILLs, each followed by a restart (default 20)
  --server-restarts N   dev server SIGKILL + restart on the same database (default 3)
  --cancels N           cancelled runs, half via the client, half via the temporal CLI (default 8)
  --workers N           worker processes (default 2)
  --seed N              random seed (default 1)
  --spread-seconds S    runs start within S seconds (default 3 s per run, at least 10)
  --native-share F      share of runs using the native protocol (default 0.3)
  --model-heartbeat-seconds S   worker model heartbeat timeout (default 5)
  --settle-seconds S    wait this long for the runs to end after the chaos (default 300)
  --keep                keep the temp dir (database, server log, transcripts, tool log)
  --verbose             print each chaos event
  --help`;

/** Parses command-line flags (see {@link CHAOS_USAGE}); returns `help: true` for --help. Throws on unknown flags or bad values. */
export function parseChaosArguments(argv: readonly string[]): { options: ChaosOptions; help: boolean } {
  const numeric: Record<string, keyof ChaosOptions> = {
    '--runs': 'runs',
    '--worker-kills': 'workerKills',
    '--server-restarts': 'serverRestarts',
    '--cancels': 'cancels',
    '--workers': 'workers',
    '--seed': 'seed',
    '--spread-seconds': 'spreadSeconds',
    '--native-share': 'nativeShare',
    '--model-heartbeat-seconds': 'modelHeartbeatSeconds',
    '--cancel-stop-seconds': 'cancelStopSeconds',
    '--settle-seconds': 'settleSeconds',
  };
  const partial: Record<string, unknown> = {};
  let help = false;
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index] as string;
    const [flag, inline] = argument.includes('=')
      ? [argument.slice(0, argument.indexOf('=')), argument.slice(argument.indexOf('=') + 1)]
      : [argument, undefined];
    if (flag === '--help' || flag === '-h') help = true;
    else if (flag === '--keep') partial.keep = true;
    else if (flag === '--verbose') partial.verbose = true;
    else if (flag in numeric) {
      const raw = inline ?? argv[++index];
      const value = raw === undefined ? Number.NaN : Number(raw);
      if (raw === undefined || raw.trim() === '' || !Number.isFinite(value))
        throw new RangeError(
          `chaos: ${flag} needs a number, got ${raw === undefined ? 'nothing' : JSON.stringify(raw)}`,
        );
      partial[numeric[flag] as string] = value;
    } else {
      throw new RangeError(`chaos: unknown option ${JSON.stringify(argument)}\n\n${CHAOS_USAGE}`);
    }
  }
  return { options: resolveChaosOptions(partial as Partial<ChaosOptions>), help };
}
