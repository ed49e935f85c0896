import type { Termination } from './termination';
import type { TokenUsage } from './messages';
import { PROTOCOL_NAMES, type ProtocolName } from './protocols/protocol';
import type { RunState } from './run-state';
import type { JsonSchema } from './tool-spec';

/** Budgets that end a run. Defaults follow DeepResearch. */
export interface RunLimits {
  /** Model calls per run. Default 100. */
  maxModelCalls: number;
  /** Wall time per run in minutes, measured in workflow time. Default 150. */
  maxDurationMinutes: number;
  /** Context size in tokens past which the run asks for its final answer. Default 110,000. */
  maxContextTokens: number;
  /** Longest tool output the model sees, in characters; the rest stays in the transcript store. Default 40,000. */
  maxObservationCharacters: number;
  /** Prompt plus completion tokens over all model calls; 0 means no budget. Default 0. */
  maxTotalTokens: number;
}

export const DEFAULT_LIMITS: RunLimits = {
  maxModelCalls: 100,
  maxDurationMinutes: 150,
  maxContextTokens: 110_000,
  maxObservationCharacters: 40_000,
  maxTotalTokens: 0,
};

/** How the loop behaves. Defaults follow AgentScope's ReAct agent where it has one. */
export interface LoopOptions {
  /** When a budget runs out, make one last tool-less call asking for the best answer. Default true. */
  finalAnswerPhase: boolean;
  /** Start-to-close timeout of that last call, in seconds. Default 120. */
  finalAnswerTimeoutSeconds: number;
  /** Tool calls of one turn run at most this many at a time. Default 4. */
  maxParallelToolCalls: number;
  /** Warn on repeated calls, then end `stuck`. Default true. */
  stuckDetection: boolean;
  /** Compress the context when it passes this fraction of maxContextTokens; 0 turns compression off. Default 0.8. */
  compressAtFraction: number;
  /** Turns kept whole when compressing. Default 3. */
  keepRecentTurns: number;
  /** Fold older turns into a model-written summary when stubbing observations is not enough. Default true. */
  summarizeOldTurns: boolean;
  /** How long a tool call that requires approval waits for one, in minutes. Default 30. */
  approvalTimeoutMinutes: number;
  /** Attempts the model gets to produce an answer matching `answerSchema`. Default 3. */
  answerAttempts: number;
  /** Continue-as-new after this many model calls in one run, besides when Temporal suggests it; 0 = only when suggested. Default 0. */
  continueAsNewAfterModelCalls: number;
  /**
   * Truncated replies in a row (cut off at the output token limit, or an `<answer>` never closed)
   * that end the run: each one before gets an observation asking for a shorter reply; this many
   * end the run `token_limit` through the final answer phase. Counted since the last usable reply. Default 3.
   */
  maxTruncatedReplies: number;
  /**
   * Malformed replies in a row (nothing the protocol could read: no answer, no parseable tool call)
   * that end the run: each one before gets the protocol's format correction; this many end the run
   * `error` through the final answer phase (the model does not follow this protocol). Counted since
   * the last usable reply. Default 5.
   */
  maxMalformedReplies: number;
}

export const DEFAULT_LOOP_OPTIONS: LoopOptions = {
  finalAnswerPhase: true,
  finalAnswerTimeoutSeconds: 120,
  maxParallelToolCalls: 4,
  stuckDetection: true,
  compressAtFraction: 0.8,
  keepRecentTurns: 3,
  summarizeOldTurns: true,
  approvalTimeoutMinutes: 30,
  answerAttempts: 3,
  continueAsNewAfterModelCalls: 0,
  maxTruncatedReplies: 3,
  maxMalformedReplies: 5,
};

/** Sampling settings for the model. Anything left out comes from the worker's configuration. */
export interface ModelOptions {
  /** Model name; default the worker's REACT_AGENT_MODEL. */
  model?: string;
  temperature?: number;
  topP?: number;
  presencePenalty?: number;
  /** Most tokens one reply may have. */
  maxOutputTokens?: number;
}

/** Input of the `researchAgent` workflow. */
export interface ResearchRunInput {
  /** The research question. */
  question: string;
  /** Reference answer, carried into the result for evaluation (DeepResearch's `answer`). */
  answer?: string;
  /** Budgets; missing fields take DEFAULT_LIMITS. */
  limits?: Partial<RunLimits>;
  /** Model settings for this run. */
  model?: ModelOptions;
  /** Tools this run may use; default every tool the worker has. */
  tools?: string[];
  /** How the model and the loop talk: `deep-research` (tags, default), `native` (OpenAI tool calls) or `classic` (Thought/Action). */
  protocol?: ProtocolName;
  /** Loop behaviour; missing fields take DEFAULT_LOOP_OPTIONS. */
  loop?: Partial<LoopOptions>;
  /** JSON schema the final answer must match; the result then carries `parsedAnswer`. */
  answerSchema?: JsonSchema;
  /** Internal: the state a continued run resumes from (set by continue-as-new, never by callers). */
  resume?: RunState;
}

/** Result of the `researchAgent` workflow, in DeepResearch's evaluation shape plus our fields. */
export interface ResearchRunResult {
  question: string;
  /** The reference answer from the input, or '' (DeepResearch's field name). */
  answer: string;
  /** The model's final answer, or a sentence saying why there is none. */
  prediction: string;
  termination: Termination;
  /** Reference of the whole transcript (a conversation manifest); `react-agent result` materialises it into `messages`. */
  transcript: string;
  /** Model calls made. */
  iterations: number;
  /** Tool calls answered (run or synthesized). */
  toolCalls: number;
  usage: TokenUsage;
  /** Context size in tokens at the end (last prompt + completion). */
  contextTokens: number;
  /** Workflow time from start to end. */
  durationMs: number;
  /** Set when termination is `error`: what went wrong and how to fix it. */
  error?: string;
  /** The answer parsed and validated against `answerSchema`, when one was given. */
  parsedAnswer?: unknown;
  /** The loop's own record: compressions, nudges, continue-as-new count, early finish. */
  details: RunDetails;
}

/** What happened along the way, beyond the termination. */
export interface RunDetails {
  protocol: ProtocolName;
  /** Each compression: at which model call, how many observations were stubbed and turns summarised, and the conversations before and after. */
  compressions: Array<{ atModelCall: number; stubbedObservations: number; summarizedTurns: number; before: string; after: string; contextTokensAfter: number }>;
  /** Warnings the stuck detector gave. */
  stuckNudges: number;
  /** Runs this workflow continued as new. */
  continuedAsNew: number;
  /** Whether the final answer phase ran, and why. */
  finalAnswerPhase?: Termination | 'finish_requested';
  /** Set when someone asked the run to finish early (update `finishNow`). */
  finishRequested?: boolean;
  /** Replies cut off before they ended (final answer retries included). */
  truncatedReplies?: number;
  /** Replies nothing could be read from. */
  malformedReplies?: number;
  /** Set when replies the loop could not use ended the run: the loop option whose limit was reached. */
  replyLimit?: 'maxTruncatedReplies' | 'maxMalformedReplies';
  /** Set when the final answer stayed cut off after its retry: the prediction is the partial text, marked. */
  truncatedAnswer?: true;
}

/** A ResearchRunResult with the transcript materialised, as written by `react-agent result`. */
export interface MaterialisedRunResult extends ResearchRunResult {
  messages: Array<{ role: string; content: string }>;
}

export const MAX_QUESTION_CHARACTERS = 20_000;

/**
 * Checks a run's input and fills in defaults. Returns the problems found (empty when valid),
 * so the client can refuse to start a run and the workflow can refuse one started elsewhere.
 */
export function validateRunInput(input: ResearchRunInput): { limits: RunLimits; loop: LoopOptions; problems: string[] } {
  const problems: string[] = [];
  if (typeof input?.question !== 'string' || input.question.trim() === '') {
    problems.push('question must be a non-empty string');
  } else if (input.question.length > MAX_QUESTION_CHARACTERS) {
    problems.push(`question is ${input.question.length} characters; the most is ${MAX_QUESTION_CHARACTERS}`);
  }
  const limits: RunLimits = { ...DEFAULT_LIMITS, ...(input?.limits ?? {}) };
  const positive = (name: keyof RunLimits, integer: boolean, maximum: number) => {
    const value = limits[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
      problems.push(`limits.${name} must be a positive ${integer ? 'integer' : 'number'}, got ${JSON.stringify(value)}`);
    } else if (value > maximum) {
      problems.push(`limits.${name} must be at most ${maximum}, got ${value}`);
    }
  };
  positive('maxModelCalls', true, 10_000);
  positive('maxDurationMinutes', false, 7 * 24 * 60);
  positive('maxContextTokens', true, 10_000_000);
  positive('maxObservationCharacters', true, 10_000_000);
  if (typeof limits.maxTotalTokens !== 'number' || !Number.isInteger(limits.maxTotalTokens) || limits.maxTotalTokens < 0) {
    problems.push(`limits.maxTotalTokens must be 0 (no budget) or a positive integer, got ${JSON.stringify(limits.maxTotalTokens)}`);
  }
  const loop: LoopOptions = { ...DEFAULT_LOOP_OPTIONS, ...(input?.loop ?? {}) };
  const checkNumber = (name: keyof LoopOptions, minimum: number, maximum: number, integer: boolean) => {
    const value = loop[name];
    if (typeof value !== 'number' || !Number.isFinite(value) || value < minimum || value > maximum || (integer && !Number.isInteger(value))) {
      problems.push(`loop.${name} must be ${integer ? 'an integer' : 'a number'} from ${minimum} to ${maximum}, got ${JSON.stringify(value)}`);
    }
  };
  checkNumber('finalAnswerTimeoutSeconds', 1, 3_600, false);
  checkNumber('maxParallelToolCalls', 1, 64, true);
  checkNumber('compressAtFraction', 0, 1, false);
  checkNumber('keepRecentTurns', 1, 100, true);
  checkNumber('approvalTimeoutMinutes', 0.01, 7 * 24 * 60, false);
  checkNumber('answerAttempts', 1, 20, true);
  checkNumber('continueAsNewAfterModelCalls', 0, 10_000, true);
  checkNumber('maxTruncatedReplies', 1, 1_000, true);
  checkNumber('maxMalformedReplies', 1, 1_000, true);
  for (const flag of ['finalAnswerPhase', 'stuckDetection', 'summarizeOldTurns'] as const) {
    if (typeof loop[flag] !== 'boolean') problems.push(`loop.${flag} must be true or false`);
  }
  if (input?.protocol !== undefined && !PROTOCOL_NAMES.includes(input.protocol)) {
    problems.push(`protocol must be one of ${PROTOCOL_NAMES.join(', ')}, got ${JSON.stringify(input.protocol)}`);
  }
  if (input?.answerSchema !== undefined && (typeof input.answerSchema !== 'object' || input.answerSchema === null || Array.isArray(input.answerSchema))) {
    problems.push('answerSchema must be a JSON schema object');
  }
  if (input?.tools !== undefined && (!Array.isArray(input.tools) || input.tools.some((name) => typeof name !== 'string'))) {
    problems.push('tools must be a list of tool names');
  }
  return { limits, loop, problems };
}
