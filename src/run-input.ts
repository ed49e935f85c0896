import type { Termination } from './termination';
import type { TokenUsage } from './messages';

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
}

export const DEFAULT_LIMITS: RunLimits = {
  maxModelCalls: 100,
  maxDurationMinutes: 150,
  maxContextTokens: 110_000,
  maxObservationCharacters: 40_000,
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
export function validateRunInput(input: ResearchRunInput): { limits: RunLimits; problems: string[] } {
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
  if (input?.tools !== undefined && (!Array.isArray(input.tools) || input.tools.some((name) => typeof name !== 'string'))) {
    problems.push('tools must be a list of tool names');
  }
  return { limits, problems };
}
