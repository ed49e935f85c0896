import type { RunLimits } from '../core/run-limits';
import { PROTOCOL_NAMES } from '../core/protocols/protocol';
import { numberOption, type NumberRange, type OptionValues } from './command-line';
import { costOption } from './cost-option';

/**
 * The run options, written once: every flag that sets something of a run (its budgets, tools,
 * model, protocol), with the help each command shows for it. Three kinds of command take them:
 *
 * - `run` and `start`, for one run (help in {@link RunOption.forOneRun});
 * - `batch` and `schedule create|update`, for every run of a batch ({@link RunOption.forEveryRun});
 * - `limits`, which changes the budgets of a running run ({@link RunOption.changesBudget}).
 */
export interface RunOption {
  /** The flag without its dashes. */
  flag: string;
  /** The value's name in the help (N, USD, NAME). */
  value: string;
  /** Help in `run` and `start`, a line each; absent when they do not take the option. */
  forOneRun?: string | readonly string[];
  /** Help in `batch` and `schedule`; absent when they do not take the option. */
  forEveryRun?: string;
  /** The budget it sets (`limits` of the run's input), if it is one. */
  limit?: keyof RunLimits;
  /** Whether `limits` changes it on a running run. Default false. */
  changesBudget?: boolean;
  /** The range `batch` and `schedule` check a number against before anything starts (`run` leaves it to the run's own checks). */
  range?: NumberRange;
}

/** The run options in the order the helps list them. */
export const RUN_OPTIONS = [
  { flag: 'answer', value: 'TEXT', forOneRun: 'reference answer, kept in the result for evaluation' },
  {
    flag: 'max-calls',
    value: 'N',
    limit: 'maxModelCalls',
    changesBudget: true,
    range: { minimum: 1, maximum: 10_000, integer: true },
    forOneRun: 'model-call budget (default 100)',
    forEveryRun: 'model-call budget per run (default 100)',
  },
  {
    flag: 'max-minutes',
    value: 'N',
    limit: 'maxDurationMinutes',
    changesBudget: true,
    range: { minimum: 0.01, maximum: 7 * 24 * 60, integer: false },
    forOneRun: 'wall-time budget in minutes (default 150)',
    forEveryRun: 'wall-time budget per run in minutes (default 150)',
  },
  {
    flag: 'max-tokens',
    value: 'N',
    limit: 'maxContextTokens',
    changesBudget: true,
    range: { minimum: 1, maximum: 10_000_000, integer: true },
    forOneRun: 'context budget in tokens (default 110000)',
    forEveryRun: 'context budget in tokens (default 110000)',
  },
  { flag: 'max-total-tokens', value: 'N', limit: 'maxTotalTokens', changesBudget: true },
  {
    flag: 'max-cost',
    value: 'USD',
    limit: 'maxCostUsd',
    changesBudget: true,
    forOneRun: [
      "cost budget in US dollars at the workers' prices (REACT_AGENT_MODEL_PRICES;",
      'default none): at it the run asks for its final answer and ends cost_limit',
    ],
    forEveryRun: "cost budget per run in US dollars at the workers' prices (default none)",
  },
  {
    flag: 'tools',
    value: 'a,b',
    forOneRun: 'tools the run may use, or none (default: all the worker has)',
    forEveryRun: 'tools the runs may use, or none (default: all the worker has)',
  },
  {
    flag: 'model',
    value: 'NAME',
    forOneRun: "model for this run (default: the worker's REACT_AGENT_MODEL)",
    forEveryRun: "model (default: the worker's REACT_AGENT_MODEL)",
  },
  {
    flag: 'protocol',
    value: 'NAME',
    forOneRun: 'deep-research (default), native (OpenAI tool calls) or classic (Thought/Action)',
    forEveryRun: `${PROTOCOL_NAMES.join(', ')} (default deep-research)`,
  },
  {
    flag: 'subruns',
    value: 'N',
    range: { minimum: 1, maximum: 16, integer: true },
    forOneRun: [
      'let the run delegate sub-questions to sub-runs, N at once (1 to 16; default',
      'off): it is offered the delegate tool; their limits come out of its own',
    ],
    forEveryRun: 'let every run delegate to sub-runs, N at once (1 to 16; default off)',
  },
  {
    flag: 'subrun-depth',
    value: 'D',
    range: { minimum: 1, maximum: 3, integer: true },
    forOneRun: 'levels of sub-runs below the run, with --subruns (1 to 3; default 1)',
    forEveryRun: 'levels of sub-runs below each run, with --subruns (1 to 3; default 1)',
  },
  {
    flag: 'temperature',
    value: 'T',
    range: { minimum: 0, maximum: 2, integer: false },
    forEveryRun: "sampling temperature (default the worker's, 0.6)",
  },
  {
    flag: 'top-p',
    value: 'P',
    range: { minimum: 0, maximum: 1, integer: false },
    forEveryRun: "nucleus sampling (default the worker's, 0.95)",
  },
  {
    flag: 'max-output-tokens',
    value: 'N',
    range: { minimum: 1, maximum: 1_000_000, integer: true },
    forEveryRun: "longest reply (default the worker's, 10000)",
  },
  {
    flag: 'model-share',
    value: 'S',
    range: { minimum: 0.01, maximum: 1, integer: false },
    forEveryRun: "share of the model's shared limits the runs may use (0.01 to 1; default 1)",
  },
  { flag: 'id', value: 'ID', forOneRun: 'workflow id (default: research-<question words>-<time>-<random>)' },
] as const satisfies readonly RunOption[];

type Table = (typeof RUN_OPTIONS)[number];
type Flag<Option> = Option extends { flag: infer F extends string } ? F : never;
/** The flags `run` and `start` take. */
export type OneRunFlag = Flag<Extract<Table, { forOneRun: unknown }>>;
/** The flags `batch` and `schedule` take. */
export type EveryRunFlag = Flag<Extract<Table, { forEveryRun: unknown }>>;
/** The flags `limits` takes. */
export type BudgetFlag = Flag<Extract<Table, { changesBudget: true }>>;

/** parseArgs options for these flags (each takes a value). */
type SpecsOf<F extends string> = { readonly [flag in F]: { readonly type: 'string' } };

function specsOf<F extends string>(taken: (option: RunOption) => boolean): SpecsOf<F> {
  return Object.fromEntries(
    RUN_OPTIONS.filter((option: RunOption) => taken(option)).map((option) => [option.flag, { type: 'string' }]),
  ) as SpecsOf<F>;
}

/** The parseArgs options of `run` and `start`. */
export const oneRunOptionSpecs = specsOf<OneRunFlag>((option) => option.forOneRun !== undefined);
/** The parseArgs options every run of a batch takes (`batch`, `schedule create|update`). */
export const everyRunOptionSpecs = specsOf<EveryRunFlag>((option) => option.forEveryRun !== undefined);
/** The parseArgs options of `limits`. */
export const budgetOptionSpecs = specsOf<BudgetFlag>((option) => option.changesBudget === true);

/** The help lines of the options that have a text for this use, the texts starting at `column`. */
function helpLines(text: (option: RunOption) => string | readonly string[] | undefined, column: number): string {
  return RUN_OPTIONS.flatMap((option: RunOption) => {
    const given = text(option);
    if (given === undefined) return [];
    const [first, ...more] = typeof given === 'string' ? [given] : given;
    return [
      `  --${option.flag} ${option.value}`.padEnd(column) + first,
      ...more.map((line) => `${' '.repeat(column)}${line}`),
    ];
  }).join('\n');
}

/** The run options in the help of `run` and `start`. */
export const oneRunOptionsHelp = helpLines((option) => option.forOneRun, 23);
/** The run options in the help of `batch` and `schedule`. */
export const everyRunOptionsHelp = `Run options (every run of the batch):\n${helpLines((option) => option.forEveryRun, 25)}`;
/** The budget options as the usage line of `limits` shows them: `[--max-calls N] ...`. */
export const budgetOptionsUsage = RUN_OPTIONS.filter((option: RunOption) => option.changesBudget)
  .map((option) => `[--${option.flag} ${option.value}]`)
  .join(' ');

/** How {@link budgetsFrom} reads numbers. */
export interface BudgetReading {
  /**
   * Check each number against its {@link RunOption.range} (a batch checks every run's options
   * before anything starts). When false, a number is read as written and the run's own checks
   * (`validateRunInput`, the `setLimits` update) judge it.
   */
  checkRanges: boolean;
}

/** The budgets given among `flags`, as a run's `limits`; `--max-cost` is always read by {@link costOption}. */
export function budgetsFrom(
  values: OptionValues,
  flags: readonly string[],
  help: string,
  reading: BudgetReading,
): Partial<RunLimits> {
  const budgets: Partial<RunLimits> = {};
  for (const option of RUN_OPTIONS as readonly RunOption[]) {
    const raw = values[option.flag];
    if (!option.limit || !flags.includes(option.flag) || raw === undefined) continue;
    if (option.limit === 'maxCostUsd') budgets.maxCostUsd = costOption(typeof raw === 'string' ? raw : undefined, help);
    else
      budgets[option.limit] =
        reading.checkRanges && option.range
          ? (numberOption(values, option.flag, help, option.range) as number)
          : Number(raw);
  }
  return budgets;
}

/** A number option of every run (`--temperature`, `--top-p`, `--max-output-tokens`, `--model-share`), checked against its range. */
export function everyRunNumber(
  values: OptionValues,
  flag: 'temperature' | 'top-p' | 'max-output-tokens' | 'model-share',
  help: string,
): number | undefined {
  const option = RUN_OPTIONS.find((candidate) => candidate.flag === flag) as RunOption;
  return numberOption(values, flag, help, option.range as NumberRange);
}
