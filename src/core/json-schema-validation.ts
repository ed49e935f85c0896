import JSON5 from 'json5';
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

const ARTICLES: Record<string, string> = { integer: 'an integer', number: 'a number', string: 'a string', boolean: 'true or false', object: 'an object', array: 'a list', null: 'null' };

/** What a number failing its bounds is told: `an integer from 1 to 100`, `a number more than 0 and at most 10080`. */
function numberProblem(schema: JsonSchema, value: number, integer: boolean, name: string, fractional = false): string | undefined {
  const low = typeof schema.minimum === 'number' ? schema.minimum : undefined;
  const above = typeof schema.exclusiveMinimum === 'number' ? schema.exclusiveMinimum : undefined;
  const high = typeof schema.maximum === 'number' ? schema.maximum : undefined;
  if (!fractional && Number.isFinite(value) && (low === undefined || value >= low) && (above === undefined || value > above) && (high === undefined || value <= high)) return undefined;
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
    const target = match ? (root[match[1] as string] as Record<string, JsonSchema> | undefined)?.[decodeURIComponent(match[2] as string)] : undefined;
    if (!target) return {};
    current = target;
  }
  return current;
}

/**
 * Validates a value against the subset of JSON schema (draft-07) that the project's own schemas
 * and tool parameter schemas use: type (integer included), properties, required,
 * additionalProperties (false or a schema), items, enum, const, anyOf, local `$ref`s to
 * `definitions`/`$defs`, minItems, minLength, maxLength, pattern, minimum, exclusiveMinimum,
 * maximum. Returns the problems, each naming the field by its path (`limits.maxModelCalls`, or
 * `$.a.b` for structured answers); empty when valid. Numbers must be finite. Pure, so the
 * workflow can use it.
 */
export function validateAgainstSchema(schema: JsonSchema, value: unknown, path = '$', root: JsonSchema = schema): string[] {
  const current = resolved(schema, root);
  if (Array.isArray(current.anyOf)) {
    const branches = current.anyOf as JsonSchema[];
    if (branches.some((branch) => validateAgainstSchema(branch, value, path, root).length === 0)) return [];
    return [`${nameOf(path)} must be ${branches.map((branch) => describe(resolved(branch, root))).join(' or ')}, got ${shown(value)}`];
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
      return [`${nameOf(path)} must be ${allowed.map((expected) => ARTICLES[expected] ?? expected).join(' or ')}, got ${shown(value)}`];
    }
  }
  if (current.const !== undefined && JSON.stringify(current.const) !== JSON.stringify(value)) problems.push(`${nameOf(path)} must be ${JSON.stringify(current.const)}, got ${shown(value)}`);
  if (Array.isArray(current.enum) && !current.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    problems.push(`${nameOf(path)} must be one of ${current.enum.map((option) => JSON.stringify(option)).join(', ')}, got ${shown(value)}`);
  }
  if (typeof value === 'string') {
    const tooShort = typeof current.minLength === 'number' && value.length < current.minLength;
    if (tooShort) problems.push(current.minLength === 1 ? `${nameOf(path)} must not be empty` : `${nameOf(path)} must have at least ${current.minLength as number} characters`);
    if (typeof current.maxLength === 'number' && value.length > current.maxLength) problems.push(`${nameOf(path)} is ${value.length} characters; the most is ${current.maxLength}`);
    if (!tooShort && typeof current.pattern === 'string' && !new RegExp(current.pattern, 'u').test(value))
      problems.push(`${nameOf(path)} ${typeof current.patternProblem === 'string' ? current.patternProblem : `must match /${current.pattern}/`}`);
  }
  if (typeof value === 'number') {
    const problem = numberProblem(current, value, type === 'integer', nameOf(path));
    if (problem) problems.push(problem);
  }
  if (Array.isArray(value)) {
    if (typeof current.minItems === 'number' && value.length < current.minItems) problems.push(`${nameOf(path)} must have at least ${current.minItems} items`);
    if (current.items && typeof current.items === 'object') value.forEach((item, index) => problems.push(...validateAgainstSchema(current.items as JsonSchema, item, `${path}[${index}]`, root)));
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
      if (property) problems.push(...validateAgainstSchema(property, item, child(path, name), root));
      else if (current.additionalProperties === false)
        problems.push(
          `${child(path, name.length > 60 ? `${name.slice(0, 57)}...` : name)} is not a known field${Object.keys(properties).length ? ` (known: ${Object.keys(properties).join(', ')})` : ''}`,
        );
      else if (current.additionalProperties && typeof current.additionalProperties === 'object')
        problems.push(...validateAgainstSchema(current.additionalProperties as JsonSchema, item, child(path, name), root));
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

/** Reads a structured answer: JSON (or JSON5), optionally inside a ```json fence; validated against the schema. */
export function parseStructuredAnswer(answer: string, schema: JsonSchema): { value?: unknown; problems: string[] } {
  const fenced = /```(?:json)?\s*([\s\S]*?)```/.exec(answer);
  const text = (fenced?.[1] ?? answer).trim();
  let value: unknown;
  try {
    value = JSON5.parse(text);
  } catch (error) {
    return { problems: [`the answer is not valid JSON (${(error as Error).message})`] };
  }
  const problems = validateAgainstSchema(schema, value);
  return problems.length ? { problems } : { value, problems };
}
