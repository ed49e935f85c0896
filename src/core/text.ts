/** Short single-line preview of a text for history, logs and the Web UI. */
export function preview(text: string, maxCharacters = 200): string {
  const flattened = text.replace(/\s+/g, ' ').trim();
  if (flattened.length <= maxCharacters) return flattened;
  return `${flattened.slice(0, Math.max(0, maxCharacters - 1))}…`;
}

/**
 * A client's or a model's value quoted in a message: at most `maxCharacters` of it, so a refusal
 * never repeats a large input back (a message is stored in history and returned to the client).
 */
export function shortened(text: string, maxCharacters = 40): string {
  return text.length <= maxCharacters ? text : `${text.slice(0, Math.max(0, maxCharacters - 1))}…`;
}
