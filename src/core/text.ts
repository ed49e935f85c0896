/** Short single-line preview of a text for history, logs and the Web UI. */
export function preview(text: string, maxCharacters = 200): string {
  const flattened = text.replace(/\s+/g, ' ').trim();
  if (flattened.length <= maxCharacters) return flattened;
  return `${flattened.slice(0, Math.max(0, maxCharacters - 1))}…`;
}
