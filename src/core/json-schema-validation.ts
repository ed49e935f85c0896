import { JSON5 } from './json5';
import { compileLinearPattern, type LinearPattern } from './linear-patterns';
import type { JsonSchema } from './tool-spec';

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/** `got …` in a problem: the value as JSON, shortened; what JSON cannot say is named. */
function shown(value: unknown): string {
  if (typeof value === 'number' && !Number.isFinite(value)) return String(value);
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

const ARTICLES: Record<string, string> = {
  integer: 'an integer',
  number: 'a number',
  string: 'a string',
  boolean: 'true or false',
  object: 'an object',
  array: 'a list',
  null: 'null',
};

/** What a number failing its bounds is told: `an integer from 1 to 100`, `a number more than 0 and at most 10080`. */
function numberProblem(
  schema: JsonSchema,
  value: number,
  integer: boolean,
  name: string,
  fractional = false,
): string | undefined {
  const low = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const above = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const high = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  if (
    !fractional &&
    Number.isFinite(value) &&
    (low === undefined || value >= low) &&
    (above === undefined || value > above) &&
    (high === undefined || value <= high)
  )
    return undefined;
  const bounds: string[] = [];
  if (low !== undefined && high !== undefined) bounds.push(`from ${low} to ${high}`);
  else {
    if (low !== undefined) bounds.push(`of at least ${low}`);
    if (above !== undefined) bounds.push(`more than ${above}`);
    if (high !== undefined) bounds.push(`${above !== undefined ? 'and ' : ''}at most ${high}`);
  }
  if (low !== undefined && high !== undefined && above !== undefined) bounds.push(`(more than ${above})`);
  return `${name} must be ${integer ? 'an integer' : Number.isFinite(value) ? 'a number' : 'a finite number'}${bounds.length ? ` ${bounds.join(' ')}` : ''}, got ${shown(value)}`;
}

function child(path: string, name: string): string {
  return path === '' ? name : `${path}.${name}`;
}

function nameOf(path: string): string {
  return path === '' ? 'the value' : path;
}

/**
 * The schema a local `$ref` (`#/definitions/Name`, `#/$defs/Name`) points at; a reference that
 * does not resolve here (remote, or a user's answer schema we cannot follow) accepts anything
 * rather than throwing inside a workflow.
 */
function resolved(schema: JsonSchema, root: JsonSchema): JsonSchema {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < 32; hops++) {
    const match = /^#\/(definitions|\$defs)\/(.+)$/.exec(current.$ref as string);
    const target = match
      ? (root[match[1] as string] as Record<string, JsonSchema> | undefined)?.[decodeURIComponent(match[2] as string)]
      : undefined;
    if (!target) return {};
    current = target;
  }
  return current;
}

/**
 * How a check matches patterns and how far it may go. The project's own schemas (the contract's,
 * tools') use JavaScript's RegExp and no bounds; a client's answer schema ({@link checkAnswerValue})
 * uses linear-time patterns and bounded work, so no answer can hold a workflow task.
 */
interface Check {
  root: JsonSchema;
  /** Whether `text` matches `pattern`; a string is a problem instead of an answer (too long to check). */
  matches(pattern: string, text: string): boolean | string;
  /** Validation steps left (each subschema applied to a value is one, each `enum` option one more); undefined: no bound. */
  stepsLeft?: number;
  /** Set when the steps ran out: the check stopped there. */
  stepsRanOut?: boolean;
  /** Most nesting of subschema applications (value depth, references and `anyOf` each add one); undefined: no bound. */
  maxDepth?: number;
}

/** The project's own schemas' patterns, compiled once for linear-time matching. */
const ownPatterns = new Map<string, LinearPattern>();

/** Whether `text` matches one of the project's own patterns (linear time; an own pattern RE2 cannot compile is a bug, thrown). */
function ownPatternMatch(pattern: string, text: string): boolean {
  let linear = ownPatterns.get(pattern);
  if (linear === undefined) {
    const made = compileLinearPattern(pattern);
    if (!('pattern' in made)) throw new Error(`The schema pattern ${JSON.stringify(pattern)} ${made.problem}`);
    linear = made.pattern;
    ownPatterns.set(pattern, linear);
  }
  return linear.test(text);
}

/**
 * Validates a value against the subset of JSON schema (draft-07) that the project's own schemas
 * and tool parameter schemas use: type (integer included), properties, required,
 * additionalProperties (false or a schema), items, enum, const, anyOf, local `$ref`s to
 * `definitions`/`$defs`, minItems, minLength, maxLength, pattern, minimum, exclusiveMinimum,
 * maximum. Returns the problems, each naming the field by its path (`limits.maxModelCalls`, or
 * `$.a.b` for structured answers); empty when valid. Numbers must be finite. Pure, so the
 * workflow can use it. Patterns match in linear time (RE2, src/core/linear-patterns.ts), unbounded in
 * work: for the project's own schemas (and answers of runs from before the `bounded-answer-checks`
 * marker); a client's schema goes through {@link checkAnswerValue}.
 */
export function validateAgainstSchema(
  schema: JsonSchema,
  value: unknown,
  path = '$',
  root: JsonSchema = schema,
): string[] {
  return validate(schema, value, path, { root, matches: ownPatternMatch }, 0);
}

function validate(schema: JsonSchema, value: unknown, path: string, check: Check, depth: number): string[] {
  if (check.stepsLeft !== undefined) {
    check.stepsLeft -= 1 + (Array.isArray(schema.enum) ? schema.enum.length : 0);
    if (check.stepsLeft < 0) {
      check.stepsRanOut = true;
      return [];
    }
  }
  if (check.maxDepth !== undefined && depth > check.maxDepth)
    return [`${nameOf(path)} is nested too deeply to check against the schema (more than ${check.maxDepth} levels)`];
  const { root } = check;
  const current = resolved(schema, root);
  if (Array.isArray(current.anyOf)) {
    const branches = current.anyOf as JsonSchema[];
    if (branches.some((branch) => validate(branch, value, path, check, depth + 1).length === 0)) return [];
    return [
      `${nameOf(path)} must be ${branches.map((branch) => describe(resolved(branch, root))).join(' or ')}, got ${shown(value)}`,
    ];
  }
  const problems: string[] = [];
  const type = current.type as string | string[] | undefined;
  if (type !== undefined) {
    const allowed = Array.isArray(type) ? type : [type];
    const actual = typeOf(value);
    if (actual === 'number' && allowed.includes('integer') && !allowed.includes('number')) {
      return [numberProblem(current, value as number, true, nameOf(path), true) as string];
    }
    if (!allowed.some((expected) => expected === actual || (expected === 'number' && actual === 'integer'))) {
      return [
        `${nameOf(path)} must be ${allowed.map((expected) => ARTICLES[expected] ?? expected).join(' or ')}, got ${shown(value)}`,
      ];
    }
  }
  if (current.const !== undefined && JSON.stringify(current.const) !== JSON.stringify(value))
    problems.push(`${nameOf(path)} must be ${JSON.stringify(current.const)}, got ${shown(value)}`);
  if (Array.isArray(current.enum) && !current.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    problems.push(
      `${nameOf(path)} must be one of ${current.enum.map((option) => JSON.stringify(option)).join(', ')}, got ${shown(value)}`,
    );
  }
  if (typeof value === 'string') {
    const tooShort = typeof current.minLength === 'number' && value.length < current.minLength;
    if (tooShort)
      problems.push(
        current.minLength === 1
          ? `${nameOf(path)} must not be empty`
          : `${nameOf(path)} must have at least ${current.minLength as number} characters`,
      );
    if (typeof current.maxLength === 'number' && value.length > current.maxLength)
      problems.push(`${nameOf(path)} is ${value.length} characters; the most is ${current.maxLength}`);
    if (!tooShort && typeof current.pattern === 'string') {
      const matched = check.matches(current.pattern, value);
      if (typeof matched === 'string') problems.push(`${nameOf(path)} ${matched}`);
      else if (!matched)
        problems.push(
          `${nameOf(path)} ${typeof current.patternProblem === 'string' ? current.patternProblem : `must match /${current.pattern}/`}`,
        );
    }
  }
  if (typeof value === 'number') {
    const problem = numberProblem(current, value, type === 'integer', nameOf(path));
    if (problem) problems.push(problem);
  }
  if (Array.isArray(value)) {
    if (typeof current.minItems === 'number' && value.length < current.minItems)
      problems.push(`${nameOf(path)} must have at least ${current.minItems} items`);
    if (current.items && typeof current.items === 'object')
      value.forEach((item, index) =>
        problems.push(...validate(current.items as JsonSchema, item, `${path}[${index}]`, check, depth + 1)),
      );
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const properties = (current.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of Array.isArray(current.required) ? (current.required as string[]) : []) {
      if (record[name] === undefined) problems.push(`${child(path, name)} is required`);
    }
    for (const [name, item] of Object.entries(record)) {
      // An undefined field is an absent one (JSON has no undefined; TypeScript callers leave them).
      if (item === undefined) continue;
      // Own properties only: `__proto__` and `constructor` must not find Object.prototype's (issue 28).
      const property = Object.prototype.hasOwnProperty.call(properties, name) ? properties[name] : undefined;
      if (property) problems.push(...validate(property, item, child(path, name), check, depth + 1));
      else if (current.additionalProperties === false)
        problems.push(
          `${child(path, name.length > 60 ? `${name.slice(0, 57)}...` : name)} is not a known field${Object.keys(properties).length ? ` (known: ${Object.keys(properties).join(', ')})` : ''}`,
        );
      else if (current.additionalProperties && typeof current.additionalProperties === 'object')
        problems.push(
          ...validate(current.additionalProperties as JsonSchema, item, child(path, name), check, depth + 1),
        );
    }
  }
  return problems;
}

/** Whether one of the problems is about this field (`limits` covers `limits.maxModelCalls`). */
export function concernsField(problems: readonly string[], field: string): boolean {
  return problems.some((problem) => [' ', '.', '['].some((next) => problem.startsWith(`${field}${next}`)));
}

/** A few words for what a schema accepts, for the `anyOf` problem. */
function describe(schema: JsonSchema): string {
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}`;
  const type = schema.type as string | string[] | undefined;
  if (type === undefined) return 'a value';
  return (Array.isArray(type) ? type : [type]).map((name) => ARTICLES[name] ?? name).join(' or ');
}

/**
 * Bounds of checking an answer against a client's schema, so that no answer holds a workflow task
 * (issue 28): an answer longer than `maxAnswerCharacters` is not parsed (JSON5 reads about a
 * megabyte a second); a value nested deeper than `maxValueDepth` is refused before it is checked (its
 * result could not be encoded either); `maxSteps` subschema applications (each `enum` option
 * counts); `maxRecursion` nested applications (a schema that refers to itself); `maxMatchWork`
 * characters times pattern size matched in all (a string too long for its pattern is a problem of
 * its own). Patterns match in linear time (src/core/linear-patterns.ts).
 */
export const ANSWER_CHECK_LIMITS = {
  maxAnswerCharacters: 100_000,
  maxValueDepth: 64,
  maxSteps: 50_000,
  maxRecursion: 256,
  maxMatchWork: 4_000_000,
} as const;

/**
 * Validates a parsed answer against a client's answer schema within {@link ANSWER_CHECK_LIMITS}:
 * as {@link validateAgainstSchema}, but patterns match in linear time and the work is bounded;
 * a check that hits a bound says so as a problem.
 */
export function checkAnswerValue(schema: JsonSchema, value: unknown): string[] {
  const depth = valueDepth(value, ANSWER_CHECK_LIMITS.maxValueDepth);
  if (depth > ANSWER_CHECK_LIMITS.maxValueDepth)
    return [`the answer is nested more than ${ANSWER_CHECK_LIMITS.maxValueDepth} levels deep`];
  const compiled = new Map<string, LinearPattern | string>();
  let matchWorkLeft: number = ANSWER_CHECK_LIMITS.maxMatchWork;
  const check: Check = {
    root: schema,
    stepsLeft: ANSWER_CHECK_LIMITS.maxSteps,
    maxDepth: ANSWER_CHECK_LIMITS.maxRecursion,
    matches(pattern, text) {
      let linear = compiled.get(pattern);
      if (linear === undefined) {
        const made = compileLinearPattern(pattern);
        linear = 'pattern' in made ? made.pattern : `cannot be checked: its pattern ${made.problem}`;
        compiled.set(pattern, linear);
      }
      if (typeof linear === 'string') return linear;
      matchWorkLeft -= text.length * linear.size;
      if (matchWorkLeft < 0) return `is too long to check against its pattern (${text.length} characters)`;
      return linear.test(text);
    },
  };
  const problems = validate(schema, value, '$', check, 0);
  return check.stepsRanOut
    ? [
        ...problems,
        `the answer is too large to check against the schema (more than ${ANSWER_CHECK_LIMITS.maxSteps} steps)`,
      ]
    : problems;
}

/** How deeply a JSON value nests (a scalar 0), counted without recursion and only up to `cap + 1`. */
export function valueDepth(value: unknown, cap: number): number {
  let deepest = 0;
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length) {
    const [current, depth] = stack.pop() as [unknown, number];
    if (current === null || typeof current !== 'object') continue;
    deepest = Math.max(deepest, depth + 1);
    if (deepest > cap) return deepest;
    for (const item of Object.values(current)) stack.push([item, depth + 1]);
  }
  return deepest;
}

/**
 * Reads a structured answer: JSON (or JSON5), optionally inside a ```json fence; validated against
 * the schema. `bounded` (the `bounded-answer-checks` marker, always on for runs started since)
 * checks it with {@link checkAnswerValue}; runs from before replay the unbounded check they ran.
 */
export function parseStructuredAnswer(
  answer: string,
  schema: JsonSchema,
  bounded = false,
): { value?: unknown; problems: string[] } {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(answer);
  const text = (fenced?.[1] ?? answer).trim();
  if (bounded && text.length > ANSWER_CHECK_LIMITS.maxAnswerCharacters) {
    return {
      problems: [
        `the answer is ${text.length} characters; a structured answer may have at most ${ANSWER_CHECK_LIMITS.maxAnswerCharacters}`,
      ],
    };
  }
  let value: unknown;
  try {
    value = JSON5.parse(text);
  } catch (error) {
    return { problems: [`the answer is not valid JSON (${(error as Error).message})`] };
  }
  const problems = bounded ? checkAnswerValue(schema, value) : validateAgainstSchema(schema, value);
  return problems.length ? { problems } : { value, problems };
}
