import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { EvaluationReport } from '../core/evaluation/evaluation-report';
import type { EvaluationRun } from '../core/evaluation/evaluation-runs';
import { deepResearchSummaryLine, runKey, type RunVerdict } from '../domain/evaluation/evaluation-scoring';
import { jsonParseProblemSuffix } from '../domain/json-parse-problem';
import { EvaluationInputError, readEvaluationFile, type EvaluationLocationOptions } from './evaluation-input';
import { isS3Location } from '../core/s3-url';
import {
  locationChild,
  locationOfFile,
  openOutputLocation,
  OutputLocationError,
  parseS3OutputUrl,
  splitLocation,
  type OutputLocation,
} from './output-location';

/**
 * An evaluation's outputs (Node-only), in `<batch DIR>/evaluation/` unless told otherwise, through
 * an {@link OutputLocation}: a local directory or an S3 prefix (`s3://bucket/batch/evaluation`):
 *
 * ```
 * report.json            the EvaluationReport
 * scored/iter<k>.jsonl   each rollout's kept lines (one a question), as read, plus is_correct, judgement, em, f1
 * summary.jsonl          one line appended per evaluation, in DeepResearch's shape
 * report.html            rendered by src/reports/evaluation-html.ts (by the worker's writeEvaluation, or the CLI when no workflow ran)
 * ```
 *
 * summary.jsonl is appended with {@link OutputLocation.appendText}: in place in a directory; in S3 a
 * read-modify-write whose put is conditional on the ETag read, retried when another evaluation
 * appended in between (on a server that ignores `If-Match`, run one evaluation at a time per folder).
 */
export const REPORT_FILE = 'report.json';
export const REPORT_HTML_FILE = 'report.html';
export const SUMMARY_LINES_FILE = 'summary.jsonl';
export const SCORED_DIRECTORY = 'scored';
export const COMPARISON_HTML_FILE = 'compare.html';

/** Where an evaluation of these inputs writes by default: `<DIR>/evaluation`, or next to the first file (`s3://…/evaluation` for inputs in S3). */
export function defaultEvaluationDirectory(inputs: { directory?: string; files: string[] }): string {
  const first = inputs.files[0];
  return locationChild(inputs.directory ?? (first === undefined ? '.' : splitLocation(first).parent), 'evaluation');
}

/** An output given as a path or URL, opened. */
function openOutput(output: string | OutputLocation, options: EvaluationLocationOptions): OutputLocation {
  return typeof output === 'string' ? (options.openLocation ?? openOutputLocation)(output) : output;
}

/**
 * Writes report.json, scored/iter<k>.jsonl and appends to summary.jsonl (and report.html when
 * given) in a directory, an `s3://` prefix or a location; re-reads the runs' original lines from
 * their files (local or S3). Returns the files' paths (or `s3://` URLs).
 */
export async function writeEvaluationOutputs(
  output: string | OutputLocation,
  report: EvaluationReport,
  rollouts: EvaluationRun[][],
  verdicts: Map<string, RunVerdict>,
  html?: string,
  options: EvaluationLocationOptions = {},
): Promise<{ report: string; scored: string[]; summary: string; html?: string }> {
  const location = openOutput(output, options);
  const scored: string[] = [];
  for (const [index, runs] of rollouts.entries()) {
    const cache = new Map<string, string[]>();
    const lines: string[] = [];
    for (const run of runs) {
      const fileLines = cache.get(run.file) ?? (await readEvaluationFile(run.file, options)).split('\n');
      cache.set(run.file, fileLines);
      const original = JSON.parse(fileLines[run.line - 1] ?? '{}') as Record<string, unknown>;
      const verdict = verdicts.get(runKey(run));
      lines.push(
        JSON.stringify({
          ...original,
          is_correct: verdict?.isCorrect === true,
          judgement: verdict?.judgement ?? 'not scored',
          em: verdict?.exactMatch ?? null,
          f1: verdict?.f1 ?? null,
          ...(verdict?.unparsed ? { unparsed: true } : {}),
        }),
      );
    }
    const path = `${SCORED_DIRECTORY}/iter${index + 1}.jsonl`;
    await location.writeText(path, lines.length ? `${lines.join('\n')}\n` : '');
    scored.push(location.urlOf(path));
  }
  await location.writeText(REPORT_FILE, `${JSON.stringify(report, null, 2)}\n`);
  await location.appendText(SUMMARY_LINES_FILE, `${JSON.stringify(deepResearchSummaryLine(report))}\n`);
  if (html !== undefined) await location.writeText(REPORT_HTML_FILE, html);
  return {
    report: location.urlOf(REPORT_FILE),
    scored,
    summary: location.urlOf(SUMMARY_LINES_FILE),
    ...(html !== undefined ? { html: location.urlOf(REPORT_HTML_FILE) } : {}),
  };
}

/** The report in a text, or an error naming the file. */
function parseReport(text: string, file: string): { report: EvaluationReport; path: string } {
  try {
    const report = JSON.parse(text) as EvaluationReport;
    if (!report || typeof report !== 'object' || !report.metrics || !Array.isArray(report.questions))
      throw new Error('not an evaluation report');
    return { report, path: file };
  } catch (error) {
    // Never the parser's message: it quotes the file.
    throw new EvaluationInputError(
      `${file} is not an evaluation report (${error instanceof SyntaxError ? `not JSON${jsonParseProblemSuffix(error)}` : (error as Error).message}).`,
    );
  }
}

/** report.json under an `s3://` evaluation prefix, or the object the URL names. */
async function readS3EvaluationReport(
  url: string,
  options: EvaluationLocationOptions,
): Promise<{ report: EvaluationReport; path: string }> {
  const openLocation = options.openLocation ?? openOutputLocation;
  try {
    const { url: normalised, prefix } = parseS3OutputUrl(url);
    if (prefix) {
      const { location, name } = locationOfFile(normalised, openLocation);
      const text = await location.readText(name);
      if (text !== undefined) return parseReport(text, normalised);
    }
    const location = openLocation(normalised);
    const text = await location.readText(REPORT_FILE);
    if (text === undefined)
      throw new EvaluationInputError(
        `${normalised} holds no ${REPORT_FILE} and is no object: give an evaluation folder (with ${REPORT_FILE}) or a ${REPORT_FILE}.`,
      );
    return parseReport(text, location.urlOf(REPORT_FILE));
  } catch (error) {
    if (!(error instanceof OutputLocationError)) throw error;
    throw new EvaluationInputError(
      error.problem === 'bucket-missing'
        ? `${url} cannot be read: its bucket "${parseS3OutputUrl(url).bucket}" does not exist.`
        : `${url} cannot be read: ${error.message}`,
    );
  }
}

/**
 * Reads report.json from an evaluation directory or the file itself; also `s3://…/evaluation`
 * or `s3://…/evaluation/report.json`.
 * @throws EvaluationInputError naming the path when there is no report there.
 */
export async function readEvaluationReport(
  path: string,
  options: EvaluationLocationOptions = {},
): Promise<{ report: EvaluationReport; path: string }> {
  if (isS3Location(path)) return readS3EvaluationReport(path, options);
  let file = path;
  try {
    if ((await stat(path)).isDirectory()) file = join(path, REPORT_FILE);
  } catch {
    throw new EvaluationInputError(`${path} does not exist: give an evaluation directory or its report.json.`);
  }
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new EvaluationInputError(
      `${file} does not exist: give an evaluation directory (with report.json) or a report.json.`,
    );
  }
  return parseReport(text, file);
}

/**
 * Writes a file named by a path or an `s3://bucket/key` URL (report.html, compare.html) whole.
 * Returns the path or URL written.
 */
export async function writeEvaluationFile(
  file: string,
  text: string,
  options: EvaluationLocationOptions = {},
): Promise<string> {
  const { location, name } = locationOfFile(file, options.openLocation ?? openOutputLocation);
  await location.writeText(name, text);
  return location.urlOf(name);
}
