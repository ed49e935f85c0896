import JSON5 from 'json5';
import type { JsonSchema } from './tool-spec';

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

/**
 * Validates a value against the common subset of JSON schema (type, properties, required,
 * additionalProperties false, items, enum, minItems, minLength, minimum, maximum). Returns the
 * problems with their JSON paths; empty when valid. Pure, so the workflow can use it.
 */
export function validateAgainstSchema(schema: JsonSchema, value: unknown, path = '$'): string[] {
  const problems: string[] = [];
  const type = schema.type as string | string[] | undefined;
  if (type !== undefined) {
    const allowed = Array.isArray(type) ? type : [type];
    const actual = typeOf(value);
    if (!allowed.some((expected) => expected === actual || (expected === 'number' && actual === 'integer'))) {
      return [`${path} must be ${allowed.join(' or ')}, got ${actual}`];
    }
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => JSON.stringify(option) === JSON.stringify(value))) {
    problems.push(`${path} must be one of ${schema.enum.map((option) => JSON.stringify(option)).join(', ')}`);
  }
  if (typeof value === 'string' && typeof schema.minLength === 'number' && value.length < schema.minLength) problems.push(`${path} must have at least ${schema.minLength} characters`);
  if (typeof value === 'number') {
    if (typeof schema.minimum === 'number' && value < schema.minimum) problems.push(`${path} must be at least ${schema.minimum}`);
    if (typeof schema.maximum === 'number' && value > schema.maximum) problems.push(`${path} must be at most ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (typeof schema.minItems === 'number' && value.length < schema.minItems) problems.push(`${path} must have at least ${schema.minItems} items`);
    if (schema.items && typeof schema.items === 'object') value.forEach((item, index) => problems.push(...validateAgainstSchema(schema.items as JsonSchema, item, `${path}[${index}]`)));
  }
  if (value && typeof value === 'object' && !Array.isArray(value)) {
    const record = value as Record<string, unknown>;
    const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const name of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
      if (record[name] === undefined) problems.push(`${path}.${name} is required`);
    }
    for (const [name, item] of Object.entries(record)) {
      const property = properties[name];
      if (property) problems.push(...validateAgainstSchema(property, item, `${path}.${name}`));
      else if (schema.additionalProperties === false) problems.push(`${path}.${name} is not allowed`);
    }
  }
  return problems;
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
