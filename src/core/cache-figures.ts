import { formatUsd } from './cost-figures';

/**
 * What prompt caching did for a set of runs (issue 31), as an evaluation report shows it beside
 * their cost: the share of their prompt tokens the server read from its cache, and what that
 * saved in USD. Only runs that reported cache tokens count; figures over runs none of which did
 * are absent, never 0%. Workflow-safe: pure functions.
 */

/** One run's usage as far as caching goes (a line's `usage`). */
export interface RunCacheUsage {
  /** The run's prompt tokens; absent when its line records no usage. */
  promptTokens?: number;
  /** Of those, read from the server's cache; absent when the server reported none. */
  cachedPromptTokens?: number;
  /** What caching saved the run in USD (`usage.cacheSavedUsd`); absent when its model had no price. */
  cacheSavedUsd?: number;
}

/** Cache figures of a set of runs. Present only when at least one of them reported cache tokens. */
export interface CacheFigures {
  /** Runs the figures are over, and those of them that reported cache tokens (the others' servers said nothing about a cache). */
  runs: number;
  cachedRuns: number;
  /** Their prompt tokens, and those of them read from the cache. */
  promptTokens: number;
  cachedPromptTokens: number;
  /** `cachedPromptTokens` / `promptTokens` (0 when there were no prompt tokens). */
  hitRate: number;
  /** What caching saved those runs in USD; negative when cache writes cost more than reads saved; absent when none had a price. */
  savedUsd?: number;
}

const finite = (value: number | undefined): value is number => typeof value === 'number' && Number.isFinite(value);

/** The cache figures of runs, or undefined when none reported cached prompt tokens. */
export function cacheFigures(runs: readonly RunCacheUsage[]): CacheFigures | undefined {
  const cached = runs.filter((run) => finite(run.cachedPromptTokens) && finite(run.promptTokens));
  if (!cached.length) return undefined;
  const promptTokens = cached.reduce((sum, run) => sum + (run.promptTokens ?? 0), 0);
  const cachedPromptTokens = cached.reduce((sum, run) => sum + (run.cachedPromptTokens ?? 0), 0);
  const savings = runs.map((run) => run.cacheSavedUsd).filter(finite);
  return {
    runs: runs.length,
    cachedRuns: cached.length,
    promptTokens,
    cachedPromptTokens,
    hitRate: promptTokens > 0 ? cachedPromptTokens / promptTokens : 0,
    ...(savings.length ? { savedUsd: savings.reduce((sum, saved) => sum + saved, 0) } : {}),
  };
}

/** What caching saved, for people: `saved $0.2700`, `cost $0.0100 more`, or '' when unknown. */
export function describeCacheSaving(savedUsd: number | undefined): string {
  if (!finite(savedUsd)) return '';
  return savedUsd < 0 ? `cost ${formatUsd(-savedUsd)} more` : `saved ${formatUsd(savedUsd)}`;
}

/**
 * One line for people: `93% of 1,204,000 prompt tokens read from the cache · saved $0.2700`
 * (and `in 3 of 4 runs` when some did not report a cache). No figures: `—`.
 */
export function describeCache(cache: CacheFigures | undefined): string {
  if (!cache) return '—';
  const parts = [
    `${Math.round(100 * cache.hitRate)}% of ${cache.promptTokens.toLocaleString('en-US')} prompt tokens read from the cache`,
  ];
  const saving = describeCacheSaving(cache.savedUsd);
  if (saving) parts.push(saving);
  if (cache.cachedRuns < cache.runs) parts.push(`in ${cache.cachedRuns} of ${cache.runs} runs`);
  return parts.join(' · ');
}
