/** Longest slug of the question in a run id, in characters. */
const MAX_SLUG_CHARACTERS = 40;

/**
 * A few words of the question as an id part: ASCII letters and digits, lower case, words joined
 * by `-`, cut at a word boundary within 40 characters; '' when nothing ASCII is left.
 */
export function questionSlug(question: string): string {
  const words = question
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter(Boolean);
  let slug = '';
  for (const word of words) {
    const next = slug ? `${slug}-${word}` : word;
    if (next.length > MAX_SLUG_CHARACTERS) return slug || word.slice(0, MAX_SLUG_CHARACTERS);
    slug = next;
  }
  return slug;
}

/**
 * A readable, unique workflow id for a new run, so the Web UI's list says what each run asked:
 * `research-which-company-sold-more-cars-in-2024-20261130-184501-k3f9` (the question's slug, UTC
 * time, four random characters); `research-20261130-184501-k3f9` without a question.
 */
export function newRunId(question?: string, now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  const slug = question === undefined ? '' : questionSlug(question);
  return `research-${slug ? `${slug}-` : ''}${stamp}-${Math.random().toString(36).slice(2, 6).padEnd(4, '0')}`;
}
