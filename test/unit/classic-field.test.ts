import { describe, expect, test } from '@jest/globals';
import { classicField } from '../../src/core/protocols/classic-react-protocol';
import { seededRandom } from '../fakes/seeded-random';

/** What the classic protocol's fields were read with before issue 28: patterns built per call. */
function fieldByPattern(content: string, label: string, until: string[]): string | undefined {
  const match = new RegExp(`^\\s*${label}:[ \\t]*`, 'mi').exec(content);
  if (!match) return undefined;
  const rest = content.slice(match.index + match[0].length);
  const stops = until
    .map((next) => new RegExp(`^\\s*${next}:`, 'mi').exec(rest)?.index)
    .filter((index): index is number => index !== undefined);
  return rest.slice(0, stops.length ? Math.min(...stops) : rest.length).trim();
}

const PIECES = [
  'Thought:',
  'action:',
  'Action Input:',
  'Final Answer:',
  'ACTION:',
  'Action',
  ':',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\u00a0',
  '\u2028',
  'x',
  '{"a": 1}',
  'K',
  'Acti\u212An:',
];

describe('the classic protocol reads its labelled lines in one pass', () => {
  test('it reads what the patterns read, on 5,000 generated replies (seed 28)', () => {
    const random = seededRandom(28);
    for (let round = 0; round < 5_000; round++) {
      const content = Array.from(
        { length: Math.floor(random() * 14) },
        () => PIECES[Math.floor(random() * PIECES.length)],
      ).join('');
      for (const [label, until] of [
        ['Thought', ['Action', 'Action Input', 'Final Answer']],
        ['Action', ['Action Input', 'Thought', 'Final Answer']],
        ['Action Input', ['Thought', 'Action', 'Final Answer']],
        ['Final Answer', []],
      ] as const) {
        expect({ content, label, field: classicField(content, label, [...until]) }).toEqual({
          content,
          label,
          field: fieldByPattern(content, label, [...until]),
        });
      }
    }
  });

  test('a reply of a million blank lines is read (one pass; the patterns backtracked over every blank line)', () => {
    const content = `${'\n'.repeat(1_000_000)}Final Answer: 42`;
    expect(classicField(content, 'Final Answer', [])).toBe('42');
    expect(classicField(content, 'Thought', ['Action'])).toBeUndefined();
  });
});
