import type { JsonSchema } from '../../src/core/tool-spec';

function typeOf(value: unknown): string {
  if (Array.isArray(value)) return 'array';
  if (value === null) return 'null';
  if (typeof value === 'number') return Number.isInteger(value) ? 'integer' : 'number';
  return typeof value;
}

function matches(expected: unknown, value: unknown): boolean {
  const actual = typeOf(value);
  const allowed = Array.isArray(expected) ? expected : [expected];
  return allowed.some((type) => type === actual || (type === 'number' && actual === 'integer'));
}

/**
 * Checks arguments against the top level of a tool's JSON schema: required properties, the
 * type of each property, and no unknown properties when `additionalProperties` is false.
 * Returns the problems in words a model can act on.
 */
export function validateArguments(schema: JsonSchema, args: Record<string, unknown>): string[] {
  const problems: string[] = [];
  const properties = (schema.properties ?? {}) as Record<string, { type?: unknown; enum?: unknown[] }>;
  const required = Array.isArray(schema.required) ? (schema.required as string[]) : [];
  for (const name of required) {
    if (!Object.hasOwn(args, name) || args[name] === undefined) problems.push(`missing required argument "${name}"`);
  }
  for (const [name, value] of Object.entries(args)) {
    const property = Object.hasOwn(properties, name) ? properties[name] : undefined;
    if (!property) {
      if (schema.additionalProperties === false)
        problems.push(`unknown argument "${name}" (expected: ${Object.keys(properties).join(', ') || 'none'})`);
      continue;
    }
    if (property.type !== undefined && !matches(property.type, value)) {
      problems.push(
        `argument "${name}" must be ${Array.isArray(property.type) ? property.type.join(' or ') : String(property.type)}, got ${typeOf(value)}`,
      );
    } else if (Array.isArray(property.enum) && !property.enum.includes(value)) {
      problems.push(
        `argument "${name}" must be one of ${property.enum.map((option) => JSON.stringify(option)).join(', ')}`,
      );
    }
  }
  return problems;
}
