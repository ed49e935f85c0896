import { RE2JS } from 're2js';

/**
 * Patterns a client supplies (an answer schema's `pattern`, ECMA-262 syntax as JSON Schema says)
 * run in RE2 (the pure-JavaScript port `re2js`): matching takes time linear in the text, so no
 * pattern can backtrack without bound in workflow code (issue 28 #1). RE2 has no lookaround and no
 * backreferences; a pattern using them is refused at input. ECMA escapes RE2 spells differently
 * (`\uXXXX`, `\u{…}`, `\cX`) are translated first. Linear is not free: compiling costs about the
 * pattern's size, and matching up to its size per character of text, so both are bounded by the
 * size estimated from the pattern's text ({@link patternSize}) before anything is compiled.
 */

/** Most estimated size (about RE2 instructions) of one pattern; larger ones are refused at input. Default 1,000. */
export const MAX_PATTERN_SIZE = 1_000;

/**
 * An upper estimate of the size of the program RE2 compiles for a pattern: each character, class
 * or escape 1, a group its contents plus 2, a quantifier 1 more, and `{n,m}` its operand times
 * (m + 1), as RE2 expands counted repetition. Linear in the pattern's length and never compiles,
 * so a pattern like `(a{1000}){1000}` is measured, not built.
 */
export function patternSize(pattern: string): number {
  const frames: number[][] = [[]];
  const top = (): number[] => frames[frames.length - 1] as number[];
  let index = 0;
  while (index < pattern.length) {
    const char = pattern[index] as string;
    if (char === '\\') {
      const next = pattern[index + 1];
      if (next === 'Q') {
        const end = pattern.indexOf('\\E', index + 2);
        const quoted = end === -1 ? pattern.length - index - 2 : end - index - 2;
        for (let count = 0; count < quoted; count++) top().push(1);
        index = end === -1 ? pattern.length : end + 2;
        continue;
      }
      // `\p{Greek}`, `\x{41}`, `\u{41}`: one atom up to the brace.
      if (next !== undefined && 'pPxu'.includes(next) && pattern[index + 2] === '{') {
        const close = pattern.indexOf('}', index + 3);
        index = close === -1 ? pattern.length : close + 1;
      } else index += 2;
      top().push(1);
      continue;
    }
    if (char === '[') {
      index = classEnd(pattern, index);
      top().push(1);
      continue;
    }
    if (char === '(') {
      frames.push([]);
      index += 1;
      continue;
    }
    if (char === ')') {
      const group = frames.length > 1 ? (frames.pop() as number[]) : [];
      top().push(sum(group) + 2);
      index += 1;
      continue;
    }
    if (char === '{') {
      const counted = /^\{(\d+)(,(\d*))?\}/.exec(pattern.slice(index, index + 24));
      const operand = top().length;
      if (counted && operand > 0) {
        const low = Number(counted[1]);
        const high = counted[2] === undefined ? low : counted[3] === '' ? low + 1 : Number(counted[3]);
        top()[operand - 1] = ((top()[operand - 1] as number) + 1) * (Math.max(low, high) + 1);
        index += counted[0].length;
        continue;
      }
    }
    if ((char === '*' || char === '+' || char === '?') && top().length > 0) {
      top()[top().length - 1] = (top()[top().length - 1] as number) + 1;
      index += 1;
      continue;
    }
    top().push(1);
    index += 1;
  }
  while (frames.length > 1) {
    const group = frames.pop() as number[];
    top().push(sum(group) + 2);
  }
  return sum(top()) + 2;
}

function sum(values: number[]): number {
  return values.reduce((total, value) => total + value, 0);
}

/** The index after a character class that starts at `start` (`[]a]` and `[^]a]` hold a `]`; `[[:alpha:]]` a POSIX class). */
function classEnd(pattern: string, start: number): number {
  let index = start + 1;
  if (pattern[index] === '^') index += 1;
  if (pattern[index] === ']') index += 1;
  while (index < pattern.length) {
    const char = pattern[index];
    if (char === '\\') index += 2;
    else if (char === '[' && pattern[index + 1] === ':') {
      const close = pattern.indexOf(':]', index + 2);
      index = close === -1 ? index + 1 : close + 2;
    } else if (char === ']') return index + 1;
    else index += 1;
  }
  return pattern.length;
}

/** A pattern compiled for linear-time matching: whether it matches anywhere in a text (as `RegExp.test`). */
export interface LinearPattern {
  readonly size: number;
  test(text: string): boolean;
}

/**
 * Compiles a client's pattern for linear-time matching, or says why it cannot be used: larger
 * than {@link MAX_PATTERN_SIZE} (then it is not compiled), or not valid in RE2 (RE2's own words).
 */
export function compileLinearPattern(pattern: string): { pattern: LinearPattern } | { problem: string } {
  const size = patternSize(pattern);
  if (size > MAX_PATTERN_SIZE)
    return { problem: `is too large to check (size about ${size}; the most is ${MAX_PATTERN_SIZE})` };
  try {
    const compiled = RE2JS.compile(RE2JS.translateRegExp(pattern));
    return { pattern: { size, test: (text) => compiled.test(text) } };
  } catch (error) {
    const message = error instanceof Error ? error.message.replace(/^error parsing regexp: /, '') : String(error);
    return {
      problem: `is not a pattern this agent can check (${message}; lookaround and backreferences are not supported)`,
    };
  }
}
