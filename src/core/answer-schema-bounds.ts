import { compileLinearPattern, MAX_PATTERN_SIZE, patternSize } from './linear-patterns';

/**
 * Bounds of a client's `answerSchema`, checked at input so that a schema too deep, too large or
 * with a pattern that cannot be checked in linear time is refused before the run starts (issue 28
 * #1, #8): the client sees `InvalidInput` naming the field, and no workflow task ever meets it.
 */
export const ANSWER_SCHEMA_LIMITS = {
  /** Most nesting of objects and lists in the schema. Default 32. */
  maxDepth: 32,
  /** Most characters of the schema as JSON (it is written into the system prompt and each correction). Default 32,768. */
  maxCharacters: 32_768,
  /** Most estimated size of all its patterns together (src/core/linear-patterns.ts `patternSize`). Default 4,000. */
  maxPatternsSize: 4_000,
} as const;

/**
 * The problems of a client's answer schema against {@link ANSWER_SCHEMA_LIMITS}, each naming its
 * field (`answerSchema.properties.code.pattern …`); empty when it is within them. The walk keeps
 * its own stack (a schema nested thousands deep cannot overflow it) and stops at the depth bound.
 * Every string under a `pattern` key, wherever it is (even inside a `const`: the simple rule, and
 * never too lax), is sized first and, when all fit, compiled for linear-time matching
 * (src/core/linear-patterns.ts), so a pattern RE2 refuses is refused here.
 */
export function answerSchemaProblems(schema: unknown, field = 'answerSchema'): string[] {
  const problems: string[] = [];
  const patterns: Array<{ path: string; pattern: string }> = [];
  const stack: Array<{ value: unknown; path: string; depth: number }> = [{ value: schema, path: field, depth: 1 }];
  while (stack.length) {
    const { value, path, depth } = stack.pop() as { value: unknown; path: string; depth: number };
    if (value === null || typeof value !== 'object') continue;
    if (depth > ANSWER_SCHEMA_LIMITS.maxDepth)
      return [`${field} is nested more than ${ANSWER_SCHEMA_LIMITS.maxDepth} levels deep (at ${path})`];
    const entries: Array<[string, unknown]> = Array.isArray(value)
      ? value.map((item, index) => [`[${index}]`, item])
      : Object.entries(value).map(([key, item]) => [`.${key}`, item]);
    for (const [key, item] of entries) {
      if (key === '.pattern' && typeof item === 'string') patterns.push({ path: `${path}.pattern`, pattern: item });
      else stack.push({ value: item, path: `${path}${key}`, depth: depth + 1 });
    }
  }
  const characters = JSON.stringify(schema)?.length ?? 0;
  if (characters > ANSWER_SCHEMA_LIMITS.maxCharacters)
    problems.push(`${field} is ${characters} characters as JSON; the most is ${ANSWER_SCHEMA_LIMITS.maxCharacters}`);
  // Sized before anything is compiled: compiling costs about the size.
  const patternsSize = patterns.reduce((total, { pattern }) => total + patternSize(pattern), 0);
  if (patternsSize > ANSWER_SCHEMA_LIMITS.maxPatternsSize) {
    problems.push(
      `${field}'s patterns are too large to check together (size about ${patternsSize}; the most is ${ANSWER_SCHEMA_LIMITS.maxPatternsSize}, and ${MAX_PATTERN_SIZE} for one)`,
    );
    return problems;
  }
  for (const { path, pattern } of patterns) {
    const compiled = compileLinearPattern(pattern);
    if ('problem' in compiled) problems.push(`${path} ${compiled.problem}`);
  }
  return problems;
}
