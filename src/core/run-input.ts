import type { ModelOptions } from './model-options';
import { answerSchemaProblems } from './answer-schema-bounds';
import { concernsField, validateAgainstSchema } from './json-schema-validation';
import type { ProtocolName } from './protocols/protocol';
import RUN_REQUEST_SCHEMA from '../../schemas/researchAgent.input.json';
import { DEFAULT_LIMITS, DEFAULT_LOOP_OPTIONS, type LoopOptions, type RunLimits } from './run-limits';
import type { RunState } from './run-state';
import type { SubRunOptions } from './sub-runs/sub-run-options';
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
  /**
   * Sub-runs (issue 30): the run is offered the `delegate` tool, which hands sub-questions to
   * child runs, at most `maxParallel` at once, with limits carved from this run's. Off when absent.
   */
  subruns?: SubRunOptions;
  /** Internal: the state a continued run resumes from (set by continue-as-new, never by callers). */
  resume?: RunState;
  /**
   * Internal: the id of the run that continued as new into this one, written by that run beside
   * `resume`. The workflow honours `resume` only when this equals its
   * `workflowInfo().continuedFromExecutionRunId`, an id the server made after the input was
   * written, so no client can forge it (see {@link validateRunInput}).
   */
  resumedFrom?: string;
}

/** The fields only the workflow's own continue-as-new may set. */
export const INTERNAL_INPUT_FIELDS = ['resume', 'resumedFrom'] as const;

/** What a client sends to start a `researchAgent` run: the input without the internal `resume`. */
export type ResearchRunRequest = Omit<ResearchRunInput, (typeof INTERNAL_INPUT_FIELDS)[number]>;

export const MAX_QUESTION_CHARACTERS = 20_000;

/**
 * Checks a run's input against the contract's schema (schemas/researchAgent.input.json, generated
 * from `ResearchRunRequest`: types, ranges, protocols, no unknown fields) and fills in defaults.
 * The answer schema is also held to ANSWER_SCHEMA_LIMITS (depth, size, patterns RE2 can check).
 * Returns the problems found, each naming its field (empty when valid), so the client can refuse
 * to start a run and the workflow can refuse one started elsewhere.
 *
 * The internal fields (`resume`, `resumedFrom`) are accepted only from the workflow's own
 * continue-as-new: `continuedFromRunId` is the workflow's `workflowInfo().continuedFromExecutionRunId`
 * (undefined for a client's start, and always undefined on the client side), and `resumedFrom`
 * must equal it. A client cannot know the id of a run the server has not created yet, so even a
 * start whose retry or cron schedule makes the server continue it is refused. The limits a
 * genuine `resume` carries are held to the schema's bounds too, like those of a start and of
 * `setLimits`.
 */
export function validateRunInput(
  input: ResearchRunInput,
  continuedFromRunId?: string,
): { limits: RunLimits; loop: LoopOptions; problems: string[] } {
  const isObject = typeof input === 'object' && input !== null && !Array.isArray(input);
  const { resume, resumedFrom, ...request } = isObject ? input : ({} as ResearchRunInput);
  const problems = isObject
    ? [
        ...replacedPrototypes(input, ''),
        ...validateAgainstSchema(RUN_REQUEST_SCHEMA, request, ''),
        ...resumeProblems(resume, resumedFrom, continuedFromRunId),
      ]
    : [
        `the input must be a JSON object such as {"question": "..."}, got ${input === null ? 'null' : Array.isArray(input) ? 'a list' : typeof input}`,
      ];
  // The answer schema's depth, size and patterns (src/core/answer-schema-bounds.ts), once it is an object.
  if (isObject && request.answerSchema !== undefined && !concernsField(problems, 'answerSchema'))
    problems.push(...answerSchemaProblems(request.answerSchema));
  const limits: RunLimits = { ...DEFAULT_LIMITS, ...objectOrEmpty(request.limits) };
  const loop: LoopOptions = { ...DEFAULT_LOOP_OPTIONS, ...objectOrEmpty(request.loop) };
  return { limits, loop, problems };
}

/**
 * A `__proto__` key that became an object's prototype on its way in (a copy by assignment does
 * that): its fields would be read through the prototype, past the schema, which checks own fields
 * only. Every object of the input must have a plain object's or array's prototype.
 */
function replacedPrototypes(value: unknown, path: string, depth = 0): string[] {
  if (typeof value !== 'object' || value === null || depth > 64) return [];
  const prototype: unknown = Object.getPrototypeOf(value);
  // Realm-independent: Array.prototype is itself an array; Object.prototype has no prototype.
  const plain = Array.isArray(value)
    ? Array.isArray(prototype)
    : prototype === null || Object.getPrototypeOf(prototype) === null;
  const problems = plain ? [] : [`${path === '' ? '' : `${path}.`}__proto__ is not a known field`];
  for (const [key, item] of Object.entries(value))
    problems.push(
      ...replacedPrototypes(
        item,
        Array.isArray(value) ? `${path}[${key}]` : `${path === '' ? '' : `${path}.`}${key}`,
        depth + 1,
      ),
    );
  return problems;
}

/** Why the internal fields are refused: set by anyone but the run continuing as new, or carrying limits beyond the schema's bounds. */
function resumeProblems(
  resume: RunState | undefined,
  resumedFrom: string | undefined,
  continuedFromRunId: string | undefined,
): string[] {
  if (resume === undefined && resumedFrom === undefined) return [];
  if (
    continuedFromRunId === undefined ||
    resumedFrom !== continuedFromRunId ||
    typeof resume !== 'object' ||
    resume === null
  ) {
    return [
      `${INTERNAL_INPUT_FIELDS.join(' and ')} are internal: only the run's own continue-as-new sets them, never a client`,
    ];
  }
  return validateAgainstSchema(RUN_REQUEST_SCHEMA, { question: 'x', limits: resume.limits }, '').map(
    (problem) => `resume.${problem}`,
  );
}

function objectOrEmpty<T>(value: T | undefined): Partial<T> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? value : {};
}
