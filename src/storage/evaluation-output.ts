import { appendFile, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { EvaluationReport } from '../core/evaluation/evaluation-report';
import type { EvaluationRun } from '../core/evaluation/evaluation-runs';
import { deepResearchSummaryLine, runKey, type RunVerdict } from '../core/evaluation/evaluation-scoring';
import { makeDirectories, writeFileAtomically } from './batch-output';
import { EvaluationInputError } from './evaluation-input';

/**
 * An evaluation's outputs (Node-only), in `<batch DIR>/evaluation/` unless told otherwise:
 *
 * ```
 * report.json            the EvaluationReport
 * scored/iter<k>.jsonl   each rollout's kept lines (one a question), as read, plus is_correct, judgement, em, f1
 * summary.jsonl          one line appended per evaluation, in DeepResearch's shape
 * report.html            written by the CLI (src/cli/evaluation-html.ts)
 * ```
 */
export const REPORT_FILE = 'report.json';
export const REPORT_HTML_FILE = 'report.html';
export const SUMMARY_LINES_FILE = 'summary.jsonl';
export const SCORED_DIRECTORY = 'scored';
export const COMPARISON_HTML_FILE = 'compare.html';

/** Where an evaluation of these inputs writes by default: `<DIR>/evaluation`, or next to the first file. */
export function defaultEvaluationDirectory(inputs: { directory?: string; files: string[] }): string {
  if (inputs.directory) return join(inputs.directory, 'evaluation');
  const first = inputs.files[0] ?? '.';
  return join(first.slice(0, Math.max(0, first.lastIndexOf('/'))) || '.', 'evaluation');
}

async function linesOfFile(file: string): Promise<string[]> {
  return (await readFile(file, 'utf8')).split('\n');
}

/** Writes report.json, scored/iter<k>.jsonl and appends to summary.jsonl (and report.html when given). Returns the paths. */
export async function writeEvaluationOutputs(
  output: string,
  report: EvaluationReport,
  rollouts: EvaluationRun[][],
  verdicts: Map<string, RunVerdict>,
  html?: string,
): Promise<{ report: string; scored: string[]; summary: string; html?: string }> {
  await makeDirectories(join(output, SCORED_DIRECTORY));
  const scored: string[] = [];
  for (const [index, runs] of rollouts.entries()) {
    const cache = new Map<string, string[]>();
    const lines: string[] = [];
    for (const run of runs) {
      const fileLines = cache.get(run.file) ?? (await linesOfFile(run.file));
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
    const path = join(output, SCORED_DIRECTORY, `iter${index + 1}.jsonl`);
    await writeFileAtomically(path, lines.length ? `${lines.join('\n')}\n` : '');
    scored.push(path);
  }
  const reportPath = join(output, REPORT_FILE);
  await writeFileAtomically(reportPath, `${JSON.stringify(report, null, 2)}\n`);
  const summary = join(output, SUMMARY_LINES_FILE);
  await appendFile(summary, `${JSON.stringify(deepResearchSummaryLine(report))}\n`, 'utf8');
  let htmlPath: string | undefined;
  if (html !== undefined) {
    htmlPath = join(output, REPORT_HTML_FILE);
    await writeFileAtomically(htmlPath, html);
  }
  return { report: reportPath, scored, summary, ...(htmlPath ? { html: htmlPath } : {}) };
}

/** Reads report.json from an evaluation directory or the file itself. */
export async function readEvaluationReport(path: string): Promise<{ report: EvaluationReport; path: string }> {
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
    throw new EvaluationInputError(`${file} does not exist: give an evaluation directory (with report.json) or a report.json.`);
  }
  try {
    const report = JSON.parse(text) as EvaluationReport;
    if (!report || typeof report !== 'object' || !report.metrics || !Array.isArray(report.questions)) throw new Error('not an evaluation report');
    return { report, path: file };
  } catch (error) {
    throw new EvaluationInputError(`${file} is not an evaluation report (${(error as Error).message}).`);
  }
}
