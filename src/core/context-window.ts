import type { LearnContextWindowOutput } from './activity-contracts';
import type { LoopOptions } from './run-limits';
import type { RunDetails } from './run-result';
import type { RunState } from './run-state';
import { calibration, contextBudget, nextContextTokens } from './run-budgets';
import { inEstimatedTokens } from './token-calibration';

/**
 * The model server's context window (issue 16). A run learns it once, at its start, from the
 * server's own endpoints (the `learnContextWindow` activity asks; the parsers of each server's
 * answer are here), or from a context-length refusal when it was not known; its context budget
 * is then the smaller of `limits.maxContextTokens` and what a prompt may take of the window (the
 * window less what the reply may need and a margin). The final answer call's prompt is
 * compressed toward that budget until it fits the window with room for a short answer. Pure and
 * workflow-safe.
 */

/** A context window a server told of: its size in the server's tokens, and where it was read. */
export interface ContextWindow {
  tokens: number;
  source: string;
}

/** What a run records of the window (`details.contextWindow`). */
export type ContextWindowDetails = NonNullable<RunDetails['contextWindow']>;

/**
 * How long a worker keeps what a model server said of a model's context window before asking it
 * again (issue 34: asked once per worker and model, not once per run): 5 minutes, so a server
 * restarted with another window is learned again soon, and a burst of runs asks once.
 */
export const CONTEXT_WINDOW_CACHE_MS = 5 * 60_000;

/** Whether a worker asks the model server again: nothing asked yet, or asked `maxAgeMs` ago or longer. */
export function contextWindowProbeDue(
  askedAtMs: number | undefined,
  nowMs: number,
  maxAgeMs: number = CONTEXT_WINDOW_CACHE_MS,
): boolean {
  return askedAtMs === undefined || nowMs - askedAtMs >= maxAgeMs || nowMs < askedAtMs;
}

/** Windows outside these bounds are taken for nonsense. */
const MIN_WINDOW = 16;
const MAX_WINDOW = 100_000_000;

/**
 * What Ollama runs a model with when nothing says otherwise: its default context (4,096 tokens
 * on machines with less than 24 GiB of VRAM; older releases used 2,048), at most the model's own.
 */
export const OLLAMA_DEFAULT_CONTEXT_TOKENS = 4_096;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** A window size from a JSON value: a positive integer in bounds (a numeric string too), else undefined. */
function windowSize(value: unknown): number | undefined {
  const number = typeof value === 'string' && /^\s*\d+\s*$/.test(value) ? Number(value) : value;
  return typeof number === 'number' && Number.isInteger(number) && number >= MIN_WINDOW && number <= MAX_WINDOW
    ? number
    : undefined;
}

/** vLLM: `GET /v1/models` lists each served model with `max_model_len` (the model named, else the only one listed). */
export function windowOfVllmModels(body: unknown, model: string): ContextWindow | undefined {
  const data = isRecord(body) && Array.isArray(body.data) ? body.data.filter(isRecord) : [];
  const entry = data.find((candidate) => candidate.id === model) ?? (data.length === 1 ? data[0] : undefined);
  const tokens = windowSize(entry?.max_model_len);
  return tokens === undefined ? undefined : { tokens, source: 'vLLM /v1/models (max_model_len)' };
}

/**
 * llama-server: `GET /props` says each slot's context in `default_generation_settings.n_ctx` (what
 * one request may use: `-c` divided by `--parallel`); some releases say it at the top level.
 */
export function windowOfLlamaServerProps(body: unknown): ContextWindow | undefined {
  if (!isRecord(body)) return undefined;
  const settings = isRecord(body.default_generation_settings) ? body.default_generation_settings : {};
  const perSlot = windowSize(settings.n_ctx);
  if (perSlot !== undefined)
    return { tokens: perSlot, source: 'llama-server /props (default_generation_settings.n_ctx)' };
  const total = windowSize(body.n_ctx);
  return total === undefined ? undefined : { tokens: total, source: 'llama-server /props (n_ctx)' };
}

/** Ollama names a model with a tag; `model` and `model:latest` are the same one. */
const sameOllamaModel = (name: unknown, model: string): boolean =>
  typeof name === 'string' && (name === model || name === `${model}:latest` || `${name}:latest` === model);

/** Ollama: `GET /api/ps` lists the loaded models with the context each runs with (`context_length`, in releases since mid-2025). */
export function windowOfOllamaPs(body: unknown, model: string): ContextWindow | undefined {
  const models = isRecord(body) && Array.isArray(body.models) ? body.models.filter(isRecord) : [];
  const entry = models.find(
    (candidate) => sameOllamaModel(candidate.name, model) || sameOllamaModel(candidate.model, model),
  );
  const tokens = windowSize(entry?.context_length);
  return tokens === undefined ? undefined : { tokens, source: 'Ollama /api/ps (context_length of the loaded model)' };
}

/**
 * Ollama: `POST /api/show` gives the Modelfile's parameters (`num_ctx 8192` when set) and the
 * model's own maximum (`model_info["<architecture>.context_length"]`). Without `num_ctx` the
 * model runs with Ollama's default context, so the window is taken as that default (at most
 * the model's maximum): larger would let Ollama cut the prompt silently.
 */
export function windowOfOllamaShow(body: unknown): ContextWindow | undefined {
  if (!isRecord(body)) return undefined;
  const parameters = typeof body.parameters === 'string' ? body.parameters : '';
  const numCtx = windowSize(/^\s*num_ctx\s+(\d+)\s*$/m.exec(parameters)?.[1]);
  if (numCtx !== undefined) return { tokens: numCtx, source: 'Ollama /api/show (parameter num_ctx)' };
  const info = isRecord(body.model_info) ? body.model_info : {};
  const maximum = Object.entries(info)
    .filter(([key]) => key.endsWith('.context_length'))
    .map(([, value]) => windowSize(value))
    .find((value) => value !== undefined);
  if (maximum === undefined) return undefined;
  return {
    tokens: Math.min(maximum, OLLAMA_DEFAULT_CONTEXT_TOKENS),
    source: `Ollama /api/show (no num_ctx: Ollama's default context, the model allows ${maximum.toLocaleString('en-US')})`,
  };
}

/** The window in a context-length refusal's text, by server family (bodies in test/fakes/model-server-error-bodies.ts). */
const WINDOW_IN_MESSAGE: readonly RegExp[] = [
  // llama-server: "request (8199 tokens) exceeds the available context size (8192 tokens)"; older: "… larger than the max context size (8192 tokens)".
  /(?:available|max) context size \((\d[\d,]*) tokens\)/i,
  // OpenAI and vLLM before 2026: "This model's maximum context length is 8192 tokens."
  /maximum context length is (\d[\d,]*) tokens/i,
  // vLLM 2026: "However, the model's context length is only 4096 tokens"
  /context length is only (\d[\d,]*) tokens/i,
  // SGLang, Together: "… is longer than the model's context length (200000 tokens)."
  /context length \((\d[\d,]*) tokens\)/i,
  // TGI: "`inputs` tokens + `max_new_tokens` must be <= 4096"
  /`max_new_tokens` must be <= (\d[\d,]*)/,
  // Anthropic-style gateways: "prompt is too long: 210000 tokens > 200000 maximum"
  /tokens > (\d[\d,]*) maximum/i,
  // "… exceeds the model's maximum context length of 8192"
  /maximum context length of (\d[\d,]*)/i,
  // llama-server's body passed on as a string (Ollama): "n_ctx":4096
  /"n_ctx"\s*:\s*(\d+)/,
];

/** The context window a server's context-length refusal names, or undefined when it names none. */
export function windowOfOverflowMessage(message: string): number | undefined {
  for (const pattern of WINDOW_IN_MESSAGE) {
    const found = pattern.exec(message)?.[1];
    const tokens = found === undefined ? undefined : windowSize(found.replace(/,/g, ''));
    if (tokens !== undefined) return tokens;
  }
  return undefined;
}

/** At most this share of the window is kept for the reply, whatever `maxOutputTokens` says. */
export const MAX_REPLY_SHARE_OF_WINDOW = 0.25;

/** Tokens of the window kept for the reply: the max output tokens, at most a quarter of the window. */
export function replyReserve(windowTokens: number, maxOutputTokens: number | undefined): number {
  const cap = Math.floor(windowTokens * MAX_REPLY_SHARE_OF_WINDOW);
  return maxOutputTokens === undefined ? cap : Math.max(0, Math.min(maxOutputTokens, cap));
}

/** Tokens of the window kept for what estimates miss (the chat template, tool schemas): 3 %, from 32 to 2,048. */
export function windowMargin(windowTokens: number): number {
  return Math.min(2_048, Math.max(32, Math.ceil(windowTokens * 0.03)));
}

/** What a prompt may take of a window: the window less the reply reserve and the margin. */
export function promptBudgetOf(windowTokens: number, maxOutputTokens: number | undefined): number {
  return Math.max(0, windowTokens - replyReserve(windowTokens, maxOutputTokens) - windowMargin(windowTokens));
}

/** The run knows the server's window: recorded with what a prompt may take of it. */
export function withContextWindow(state: RunState, window: ContextWindow): RunState {
  const details: ContextWindowDetails = {
    tokens: window.tokens,
    source: window.source,
    promptBudget: promptBudgetOf(window.tokens, state.maxOutputTokens),
  };
  return { ...state, details: { ...state.details, contextWindow: details } };
}

/** What the `learnContextWindow` activity found: the reply size model calls ask for, and the window when a server said it. */
export function learnedContextWindow(state: RunState, learned: LearnContextWindowOutput): RunState {
  const next: RunState = { ...state, maxOutputTokens: learned.maxOutputTokens };
  return learned.contextWindow === undefined
    ? next
    : withContextWindow(next, { tokens: learned.contextWindow, source: learned.source ?? 'the model server' });
}

/** A context-length refusal came: the window it names becomes the run's (unchanged when it names none, or the one known). */
export function learnedFromOverflow(state: RunState, message: string): RunState {
  const tokens = windowOfOverflowMessage(message);
  if (tokens === undefined || tokens === state.details.contextWindow?.tokens) return state;
  return withContextWindow(state, { tokens, source: "the server's context-length error" });
}

/**
 * Tokens of the window the final answer call keeps for its reply at least: a sixteenth of the
 * window (at least 32), at most the reply reserve. Less than the loop keeps: an answer is short,
 * and a prompt that fits this way is better than one compressed further.
 */
export function finalReplyRoom(windowTokens: number, maxOutputTokens: number | undefined): number {
  return Math.min(replyReserve(windowTokens, maxOutputTokens), Math.max(32, Math.floor(windowTokens / 16)));
}

/**
 * The most the final answer call's prompt may take: the window less the margin and the final
 * reply's room; none when the window is unknown (the call is made as it comes, as before: a
 * refusal then names the window). Compression for the final answer aims lower, at the context
 * budget. `limits.maxContextTokens` is the loop's budget, not a limit of the server's: a final
 * prompt past it that fits the window is not compressed.
 */
export function finalAnswerPromptLimit(state: RunState): number | undefined {
  const window = state.details.contextWindow;
  if (!window) return undefined;
  return Math.max(
    0,
    window.tokens - windowMargin(window.tokens) - finalReplyRoom(window.tokens, state.maxOutputTokens),
  );
}

/** The final answer call's prompt (what the next call sends) fits: within {@link finalAnswerPromptLimit}, or the window is unknown. */
export function finalAnswerFits(state: RunState): boolean {
  const limit = finalAnswerPromptLimit(state);
  return limit === undefined || nextContextTokens(state) <= limit;
}

/** One way to compress the final answer call's prompt, harder each time: turns kept whole, a summary of older ones, or the question alone. */
export interface FinalAnswerFitStep {
  keepRecentTurns: number;
  summarize: boolean;
  dropTurns: boolean;
}

/**
 * How the final answer call's prompt is made to fit, tried in order until it does: compression
 * as the loop does it (the last `keepRecentTurns` turns whole, older observations stubbed and,
 * with `summarizeOldTurns`, older turns summarised); then every observation stubbed and every turn
 * summarised; then the question alone. A step the one before already covers is left out.
 */
export function finalAnswerFitSteps(
  options: Pick<LoopOptions, 'keepRecentTurns' | 'summarizeOldTurns'>,
): FinalAnswerFitStep[] {
  const steps: FinalAnswerFitStep[] = [
    { keepRecentTurns: options.keepRecentTurns, summarize: options.summarizeOldTurns, dropTurns: false },
    { keepRecentTurns: 0, summarize: options.summarizeOldTurns, dropTurns: false },
    { keepRecentTurns: 0, summarize: false, dropTurns: true },
  ];
  return steps.filter((step, index) => index === 0 || JSON.stringify(step) !== JSON.stringify(steps[index - 1]));
}

/** What the final answer's compression aims for, in our estimate's units: the context budget (under the prompt limit, so estimates may be a little off). */
export const finalAnswerCompressionTarget = (state: RunState): number =>
  inEstimatedTokens(contextBudget(state), calibration(state));

/** The most a summary's reply may take (its request's `max_tokens`). */
export const SUMMARY_REPLY_TOKENS = 1_500;

/**
 * When the window is known: how large a summary request may be, so the summariser's own call fits
 * it too (the prompt in our estimate's units, the reply in the server's tokens).
 */
export function summaryLimits(state: RunState): { promptTokens: number; replyTokens: number } | undefined {
  const window = state.details.contextWindow;
  if (!window) return undefined;
  const replyTokens = Math.max(
    1,
    Math.min(SUMMARY_REPLY_TOKENS, Math.floor(window.tokens * MAX_REPLY_SHARE_OF_WINDOW)),
  );
  const promptTokens = inEstimatedTokens(
    Math.max(0, window.tokens - replyTokens - windowMargin(window.tokens)),
    calibration(state),
  );
  return { promptTokens, replyTokens };
}

/** {@link summaryLimits} as the compression activity's input takes it: absent when the window is unknown (as in runs from before). */
export function withSummaryLimits(state: RunState): { summaryLimits?: { promptTokens: number; replyTokens: number } } {
  const limits = summaryLimits(state);
  return limits ? { summaryLimits: limits } : {};
}

/** The state with the conversation and pending messages of `prepared` (the final answer's, before any compression) again, all else kept. */
export function withConversationOf(state: RunState, prepared: RunState): RunState {
  return {
    ...state,
    conversation: prepared.conversation,
    pending: prepared.pending,
    pendingTokens: prepared.pendingTokens,
    pendingCallIds: prepared.pendingCallIds,
    contextTokens: prepared.contextTokens,
  };
}

/** The final answer call is not made: even the question alone does not fit. Recorded with the numbers that say why. */
export function finalAnswerDidNotFit(state: RunState): RunState {
  const promptLimit = finalAnswerPromptLimit(state) ?? contextBudget(state);
  return {
    ...state,
    details: { ...state.details, finalAnswerDidNotFit: { promptTokens: nextContextTokens(state), promptLimit } },
  };
}

/** The prediction of a run whose final answer call did not fit, saying why; undefined for any other run. */
export function didNotFitPrediction(details: RunDetails): string | undefined {
  const didNotFit = details.finalAnswerDidNotFit;
  if (!didNotFit) return undefined;
  const count = (tokens: number) => tokens.toLocaleString('en-US');
  const window = details.contextWindow
    ? `the model's context window of ${count(details.contextWindow.tokens)} tokens`
    : "the model's context window";
  return (
    `No answer: even the question alone does not fit for the final answer call: the system prompt and question take about ${count(didNotFit.promptTokens)} tokens, ` +
    `and ${window} leaves at most ${count(didNotFit.promptLimit)} for the prompt (the rest is kept for the answer).`
  );
}

/** The fewest tokens a piece of steps to summarise may have; less and there is no summary. */
export const MIN_SUMMARY_PIECE_TOKENS = 64;

/** How many times a summary request the server refuses as too long is tried again in smaller pieces, before there is no summary. */
export const SUMMARY_RETRIES_AFTER_REFUSAL = 2;

/**
 * The next summary requests' size after the server refused one of `sentTokens` (our estimate) as
 * too long: sized from the window its refusal names (`window`; the reply at most a quarter of it,
 * the prompt a fifth less than what the window leaves, since our estimate may count fewer tokens
 * than the server), and never more than half of what was sent nor less than two pieces' minimum.
 */
export function summaryLimitsAfterRefusal(
  sentTokens: number,
  replyTokens: number,
  window: number | undefined,
): { promptTokens: number; replyTokens: number } {
  const reply =
    window === undefined
      ? replyTokens
      : Math.max(1, Math.min(replyTokens, Math.floor(window * MAX_REPLY_SHARE_OF_WINDOW)));
  const fromWindow =
    window === undefined ? Number.POSITIVE_INFINITY : Math.floor((window - reply - windowMargin(window)) * 0.8);
  return {
    promptTokens: Math.max(MIN_SUMMARY_PIECE_TOKENS * 2, Math.min(fromWindow, Math.floor(sentTokens / 2))),
    replyTokens: reply,
  };
}
