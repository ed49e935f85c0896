import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { get_encoding, type Tiktoken } from 'tiktoken';
import { loadJudgeConfig, loadTemporalConnection, loadWorkerConfig, type TemporalConnection } from '../../config';
import { compareEvaluations } from '../../domain/evaluation/evaluation-comparison';
import type { EvaluationOutcome, EvaluationWorkflowInput } from '../../core/evaluation/evaluation-contract';
import type { EvaluationReport } from '../../core/evaluation/evaluation-report';
import {
  buildEvaluationReport,
  exactMatchVerdict,
  hasReferences,
  NO_REFERENCES_MESSAGE,
  runKey,
  type RunVerdict,
} from '../../domain/evaluation/evaluation-scoring';
import { WorkflowTypes, type EvaluationWorkflow } from '../../core/workflow-types';
import {
  describeInputs,
  EvaluationInputError,
  readEvaluationInputs,
  resolveEvaluationFiles,
  type EvaluationInputs,
} from '../../storage/evaluation-input';
import {
  COMPARISON_HTML_FILE,
  defaultEvaluationDirectory,
  readEvaluationReport,
  REPORT_HTML_FILE,
  writeEvaluationFile,
  writeEvaluationOutputs,
} from '../../storage/evaluation-output';
import {
  absoluteLocation,
  locationChild,
  locationOfFile,
  OutputLocationError,
  splitLocation,
} from '../../storage/output-location';
import { openCliLocation } from '../cli-locations';
import { parseCommandLine, numberOption } from '../command-line';
import { openCliContext, type CliContext } from '../cli-context';
import { renderComparisonHtml, renderEvaluationReportHtml } from '../../reports/evaluation-html';
import { comparisonText, headlineTable } from '../evaluation-text';
import { ChildWorker, ensureLocalServer, hasLiveWorker, StartedStack } from '../../processes/local-stack';
import { webUiLink } from '../temporal-client';
import { UsageError } from '../usage-error';

export const evalHelp = `Usage: react-agent eval <batch output DIR | s3://bucket/prefix | iter*.jsonl files> [--judge gaia|browsecomp|PROMPT_FILE] [--output DIR] [--batch-id ID]
       react-agent eval compare <evaluation A> <evaluation B> [--output FILE]

Scores a batch's rollouts over unique questions: pass@1 per rollout, mean pass@1 ("Avg. Pass@k"),
the best rollout, pass@k (any of k), the unbiased pass@k estimator for every k up to the number
of rollouts, plus trajectory statistics (terminations, tool calls by tool, model calls, tokens,
durations, answer lengths; the same for solved questions) and a per-question table.

Inputs: a batch output directory (its iter1.jsonl … iterK.jsonl) or rollout files in rollout
order, local or in S3 (s3://bucket/prefix, s3://bucket/prefix/iter1.jsonl; AWS_* credentials and
AWS_ENDPOINT_URL as for batch --output, the workers read them with theirs); this project's lines
or DeepResearch's (question, answer, messages, prediction, termination). A line that is not JSON
stops the evaluation (file and line named); a line without "question" or "answer" is skipped and
listed; a question twice in a file counts once (the last line that is not an error wins);
questions a rollout lacks count as not correct in it.

Without --judge: exact match (correct = exact match) and token F1, computed here, no server needed.
With --judge: an LLM judge in an 'evaluation' workflow (starts the local dev server and a worker
when none runs, as 'run' does). gaia: a one-word Correct/Incorrect verdict; browsecomp: a JSON
verdict (extracted_final_answer, reasoning, correct yes/no, confidence); PROMPT_FILE: your prompt
with {question}, {reference} (or {correct_answer}) and {prediction} (or {response}). Verdicts are
kept, so evaluating the same runs again makes no judge call. Judge model and endpoint:
REACT_AGENT_JUDGE_MODEL, REACT_AGENT_JUDGE_BASE_URL, REACT_AGENT_JUDGE_API_KEY (default: the
run model's), REACT_AGENT_JUDGE_MAX_ATTEMPTS (5), REACT_AGENT_JUDGE_CONCURRENCY (8).

Output (DIR/evaluation/ unless --output): report.json, report.html, scored/iter<k>.jsonl (each
line with is_correct, judgement, em, f1), and one line appended to summary.jsonl in DeepResearch's
shape. Exit 0 when scored; 1 when nothing could be scored (no reference answers: the statistics
are still written) or the judge failed; 2 for unreadable input.

  --judge NAME|FILE   gaia, browsecomp or a prompt file
  --output DIR        where the outputs go, a directory or s3://bucket/prefix (default DIR/evaluation,
                      or next to the first file; s3://…/evaluation for an s3:// input)
  --batch-id ID       the batch evaluated, recorded in the report
  --concurrency N     judge activities at once (default REACT_AGENT_JUDGE_CONCURRENCY, 8)
  --id ID             the evaluation workflow's id (default evaluation-<time>-<random>)

compare: metric deltas (B - A), questions flipped right→wrong and wrong→right (a question is
right when most of its rollouts are), termination shifts; text here and an HTML page, written to
--output FILE or compare.html in B's evaluation directory (either may be s3://…).`;

const evalOptionSpecs = {
  judge: { type: 'string' },
  output: { type: 'string' },
  'batch-id': { type: 'string' },
  concurrency: { type: 'string' },
  id: { type: 'string' },
} as const;

let encoder: Tiktoken | undefined;
const countTokens = (text: string) => (encoder ??= get_encoding('o200k_base')).encode_ordinary(text).length;

/** The Web UI base for run links (`…/namespaces/<ns>`), when one is known. */
function webUiBase(temporal: TemporalConnection | undefined): string | undefined {
  if (!temporal) return undefined;
  return webUiLink(temporal, 'x')?.replace(/\/workflows\/x$/, '');
}

function temporalOrUndefined(): TemporalConnection | undefined {
  try {
    return loadTemporalConnection();
  } catch {
    return undefined;
  }
}

const openLocation = openCliLocation;

/** report.html written next to report.json, in a directory or an S3 prefix; returns its path or URL. */
async function writeHtml(output: string, report: EvaluationReport): Promise<string> {
  const location = openLocation(output);
  await location.writeText(REPORT_HTML_FILE, await renderEvaluationReportHtml(report));
  return location.urlOf(REPORT_HTML_FILE);
}

/** The error message and exit code 2 for input or output that cannot be used, else rethrows. */
function refuse(command: string, error: unknown): number {
  if (error instanceof EvaluationInputError || error instanceof OutputLocationError) {
    console.error(`react-agent ${command}: ${error.message}`);
    return 2;
  }
  throw error;
}

export async function evalCommand(argumentsList: string[]): Promise<number> {
  if (argumentsList[0] === 'compare') return compareCommand(argumentsList.slice(1));
  const { values, positionals } = parseCommandLine(argumentsList, evalOptionSpecs, evalHelp);
  if (positionals.length === 0)
    throw new UsageError('Give a batch output directory or iter*.jsonl files to evaluate.', evalHelp);
  const concurrency = numberOption(values, 'concurrency', evalHelp, { minimum: 1, maximum: 1000, integer: true });
  let inputs: EvaluationInputs;
  let output: string;
  try {
    const resolved = await resolveEvaluationFiles(positionals, { openLocation });
    inputs = await readEvaluationInputs(resolved.files, { countTokens, openLocation });
    output = absoluteLocation(values.output ?? defaultEvaluationDirectory(resolved));
    // The output is checked (a directory created) before anything is scored or judged: a missing bucket, refused credentials, a path that cannot be written.
    await openLocation(output).check();
  } catch (error) {
    return refuse('eval', error);
  }
  for (const note of describeInputs(inputs)) console.error(note);
  const source = {
    paths: positionals.map(absoluteLocation),
    ...(values['batch-id'] ? { batchId: values['batch-id'] } : {}),
  };
  const temporal = temporalOrUndefined();
  const base = webUiBase(temporal);

  if (!hasReferences(inputs.rollouts)) {
    // Nothing to score: the statistics are still written.
    const report = buildEvaluationReport({
      rollouts: inputs.rollouts,
      verdicts: new Map(),
      method: values.judge ? 'judge' : 'exact_match',
      createdAt: new Date().toISOString(),
      source,
      skipped: inputs.skipped,
      duplicates: inputs.duplicates,
      notes: [NO_REFERENCES_MESSAGE],
      ...(base ? { webUiBase: base } : {}),
    });
    const written = await writeEvaluationOutputs(output, report, inputs.rollouts, new Map(), undefined, {
      openLocation,
    });
    const html = await writeHtml(output, report);
    console.error(`react-agent eval: ${NO_REFERENCES_MESSAGE}${values.judge ? ' The judge was not asked.' : ''}`);
    console.log(`Statistics: ${written.report}\nReport: ${html}`);
    return 1;
  }

  if (!values.judge) {
    const verdicts = new Map<string, RunVerdict>();
    for (const run of inputs.rollouts.flat())
      if (run.reference.trim() !== '') verdicts.set(runKey(run), exactMatchVerdict(run));
    const report = buildEvaluationReport({
      rollouts: inputs.rollouts,
      verdicts,
      method: 'exact_match',
      createdAt: new Date().toISOString(),
      source,
      skipped: inputs.skipped,
      duplicates: inputs.duplicates,
      ...(base ? { webUiBase: base } : {}),
    });
    // No workflow ran: report.html is rendered here.
    await writeEvaluationOutputs(output, report, inputs.rollouts, verdicts, undefined, { openLocation });
    const html = await writeHtml(output, report);
    console.log(headlineTable(report));
    console.log(`\nReport: ${html}`);
    return 0;
  }
  {
    const judge = values.judge === 'gaia' || values.judge === 'browsecomp' ? values.judge : resolve(values.judge);
    const judgeConfig = loadJudgeConfig();
    const outcome = await runEvaluationWorkflow(
      {
        paths: source.paths,
        output,
        judge,
        ...(source.batchId ? { batchId: source.batchId } : {}),
        concurrency: concurrency ?? judgeConfig.concurrency,
        judgeAttempts: judgeConfig.maxAttempts,
        ...(base ? { webUiBase: base } : {}),
      },
      values.id,
    );
    if (typeof outcome === 'number') return outcome;
    // The worker's writeEvaluation wrote report.html next to report.json: only its path is printed.
    const { report } = await readEvaluationReport(outcome.reportPath, { openLocation });
    console.log(headlineTable(report));
    console.log(`\n${await reportHtmlLine(outcome.reportPath, outcome.htmlProblem)}`);
    return 0;
  }
}

/**
 * The line naming report.html that the worker wrote next to report.json (`Report: <path>`), or
 * saying why there is none (the worker could not render it, or predates writing it).
 */
async function reportHtmlLine(reportPath: string, htmlProblem?: string): Promise<string> {
  if (htmlProblem) return `Report: none (${htmlProblem}; report.json is complete)`;
  const { location } = locationOfFile(reportPath, openLocation);
  if ((await location.sizeOf(REPORT_HTML_FILE)) === undefined)
    return `Report: none (the worker wrote no ${REPORT_HTML_FILE}; see its log)`;
  return `Report: ${location.urlOf(REPORT_HTML_FILE)}`;
}

/** The message of a workflow failure that says what to fix: the first ApplicationFailure's (the activity's), else the innermost. */
function failureMessage(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  let current: unknown = error;
  while (current instanceof Error) {
    if (current.name === 'ApplicationFailure' && current.message) return current.message;
    if (current.message) message = current.message;
    current = (current as { cause?: unknown }).cause;
  }
  return message;
}

/** Starts the evaluation workflow (and the local stack when needed), waits for it; a number is the exit code of a failure. */
async function runEvaluationWorkflow(
  input: EvaluationWorkflowInput,
  id: string | undefined,
): Promise<EvaluationOutcome | number> {
  const log = (line: string) => console.error(line);
  const temporal = loadTemporalConnection();
  const workerConfig = loadWorkerConfig();
  const stack = new StartedStack(log);
  let context: CliContext | undefined;
  try {
    stack.server = await ensureLocalServer(temporal, workerConfig, log);
    context = await openCliContext();
    if (!(await hasLiveWorker(context.client, temporal.namespace, workerConfig.taskQueue))) {
      stack.worker = await ChildWorker.start(context.client, temporal, workerConfig, log);
    }
    const workflowId =
      id ??
      `evaluation-${new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
    const handle = await context.client.workflow.start<EvaluationWorkflow>(WorkflowTypes.evaluation, {
      taskQueue: workerConfig.taskQueue,
      workflowId,
      args: [input],
      staticSummary: `evaluation (${input.judge.split('/').pop()}) of ${input.paths.join(', ')}`.slice(0, 200),
    });
    const link = webUiLink(temporal, workflowId);
    log(`Evaluation ${workflowId} started (judge ${input.judge})${link && !stack.server ? `; Web UI: ${link}` : ''}`);
    try {
      const outcome = await handle.result();
      if (outcome.refused) {
        console.error(`react-agent eval: ${outcome.refused}`);
        return 1;
      }
      return outcome;
    } catch (error) {
      console.error(`react-agent eval: the evaluation ${workflowId} failed: ${failureMessage(error)}`);
      return 1;
    }
  } finally {
    await context?.close();
    await stack.stop();
  }
}

async function compareCommand(argumentsList: string[]): Promise<number> {
  const { values, positionals } = parseCommandLine(argumentsList, { output: { type: 'string' } }, evalHelp);
  if (positionals.length !== 2)
    throw new UsageError(
      `eval compare takes two evaluations (directories or report.json files), got ${positionals.length}.`,
      evalHelp,
    );
  let a: { report: EvaluationReport; path: string };
  let b: { report: EvaluationReport; path: string };
  try {
    a = await readEvaluationReport(absoluteLocation(positionals[0] as string), { openLocation });
    b = await readEvaluationReport(absoluteLocation(positionals[1] as string), { openLocation });
  } catch (error) {
    return refuse('eval compare', error);
  }
  const comparison = compareEvaluations(a.report, b.report);
  let target: string;
  try {
    const next = values.output ?? locationChild(splitLocation(b.path).parent, COMPARISON_HTML_FILE);
    target = await writeEvaluationFile(absoluteLocation(next), await renderComparisonHtml(comparison), {
      openLocation,
    });
  } catch (error) {
    return refuse('eval compare', error);
  }
  console.log(comparisonText(comparison, { a: a.path, b: b.path }));
  console.log(`\nComparison page: ${target}`);
  return 0;
}

/**
 * After `batch --wait --evaluate`: the evaluation's headline table, and the path of report.html,
 * which the worker wrote next to its report.json with the other outputs.
 */
export async function printBatchEvaluation(evaluation: {
  evaluationId: string;
  reportPath?: string;
  failed?: string;
}): Promise<boolean> {
  if (evaluation.failed || !evaluation.reportPath) {
    console.error(`react-agent: the evaluation ${evaluation.evaluationId} failed: ${evaluation.failed ?? 'no report'}`);
    return false;
  }
  const { report } = await readEvaluationReport(evaluation.reportPath, { openLocation });
  console.log(`\n${headlineTable(report)}\n\n${await reportHtmlLine(evaluation.reportPath)}`);
  return true;
}
