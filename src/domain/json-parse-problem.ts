/**
 * Where a text `JSON.parse` refused breaks, without a character of the text: `at character 12`,
 * `it ends too early`, or undefined. V8's messages quote the text (`Unexpected token 'r',
 * "root:x:0:0"... is not valid JSON`), so an error that passed them on would show a client the
 * start of any file it could make a worker read (issue 28, row 10); only the position and the end
 * of input are kept.
 */
export function jsonParseProblem(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : '';
  const position = /\bat position (\d+)/.exec(message)?.[1];
  if (position !== undefined) return `at character ${Number(position) + 1}`;
  if (/Unexpected end of JSON input/.test(message)) return 'it ends too early';
  return undefined;
}

/** ` (at character 12)`, ` (it ends too early)` or '': what follows "is not JSON" in a message. */
export function jsonParseProblemSuffix(error: unknown): string {
  const problem = jsonParseProblem(error);
  return problem ? ` (${problem})` : '';
}
