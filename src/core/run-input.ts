import type { ModelOptions } from './model-options';
import { answerSchemaProblems } from './answer-schema-bounds';
import { concernsField, validateAgainstSchema } from './json-schema-validation';
import type { ProtocolName } from './protocols/protocol';
import RUN_REQUEST_SCHEMA from '../../schemas/researchAgent.input.json';
import { DEFAULT_LIMITS, DEFAULT_LOOP_OPTIONS, type LoopOptions, type RunLimits } from './run-limits';
import type { RunState } from './run-state';
import type { JsonSchema } from './tool-spec';

/** Input of the `researchAgent` workflow. */
export interface ResearchRunInput {
  /**
   * The research question (not blank; at most 20,000 characters).
   * @minLength 1
   * @maxLength 20000
   * @pattern \S
   * @patternProblem must not be blank
   */
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

/** What a client sends to start a `researchAgent` run: the input without the internal `resume`. */
export type ResearchRunRequest = Omit<ResearchRunInput, 'resume'>;

export const MAX_QUESTION_CHARACTERS = 20_000;

/**
 * Checks a run's input against the contract's schema (schemas/researchAgent.input.json, generated
 * from `ResearchRunRequest`: types, ranges, protocols, no unknown fields) and fills in defaults.
 * The answer schema is also held to ANSWER_SCHEMA_LIMITS (depth, size, patterns RE2 can check).
 * Returns the problems found, each naming its field (empty when valid), so the client can refuse
 * to start a run and the workflow can refuse one started elsewhere. `resume` is the workflow's
 * own field and is not checked.
 */
export function validateRunInput(input: ResearchRunInput): { limits: RunLimits; loop: LoopOptions; problems: string[] } {
  const isObject = typeof input === 'object' && input !== null && !Array.isArray(input);
  const { resume: _resume, ...request } = isObject ? input : ({} as ResearchRunInput);
  const problems = isObject
    ? validateAgainstSchema(RUN_REQUEST_SCHEMA, request, '')
    : [`the input must be a JSON object such as {"question": "..."}, got ${input === null ? 'null' : Array.isArray(input) ? 'a list' : typeof input}`];
  // The answer schema's depth, size and patterns (src/core/answer-schema-bounds.ts), once it is an object.
  if (isObject && request.answerSchema !== undefined && !concernsField(problems, 'answerSchema')) problems.push(...answerSchemaProblems(request.answerSchema));
  const limits: RunLimits = { ...DEFAULT_LIMITS, ...objectOrEmpty(request.limits) };
  const loop: LoopOptions = { ...DEFAULT_LOOP_OPTIONS, ...objectOrEmpty(request.loop) };
  return { limits, loop, problems };
}

function objectOrEmpty<T>(value: T | undefined): Partial<T> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
}
