import type { ModelOptions } from './model-options';
import { PROTOCOL_NAMES, type ProtocolName } from './protocols/protocol';
import { DEFAULT_LIMITS, DEFAULT_LOOP_OPTIONS, type LoopOptions, type RunLimits } from './run-limits';
import type { RunState } from './run-state';
import type { JsonSchema } from './tool-spec';

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
