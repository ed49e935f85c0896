import { readFile } from 'node:fs/promises';
import { ApplicationFailure, log } from '@temporalio/activity';
import {
  EvaluationFailureTypes,
  EXACT_MATCH_JUDGE,
  headlineOf,
  type PrepareEvaluationInput,
  type PrepareEvaluationOutput,
  type StoredEvaluationInput,
  type StoredJudge,
  type WriteEvaluationInput,
  type WriteEvaluationOutput,
} from '../src/core/evaluation/evaluation-contract';
import type { EvaluationReport } from '../src/core/evaluation/evaluation-report';
import {
  buildEvaluationReport,
  exactMatchVerdict,
  hasReferences,
  NO_REFERENCES_MESSAGE,
  runKey,
  type RunVerdict,
} from '../src/domain/evaluation/evaluation-scoring';
import { builtInJudge, type BuiltInJudge } from '../src/core/evaluation/judge-prompts';
import { checkInsideDataRoots, PathOutsideDataRootsError } from '../src/storage/data-roots';
import { EvaluationInputError, readEvaluationInputs, resolveEvaluationFiles } from '../src/storage/evaluation-input';
import { writeEvaluationOutputs } from '../src/storage/evaluation-output';
import {
  openOutputLocation,
  OutputLocationError,
  type OpenLocation,
  type OutputLocation,
} from '../src/storage/output-location';
import { renderEvaluationReportHtml } from '../src/reports/evaluation-html';
import type { TranscriptStore } from '../src/storage/transcript-store';
import { promptHash, type VerdictStore } from '../src/storage/verdict-store';
import { createJudgeRuns, verdictKeyOf, type JudgeEndpoint } from './judge-activity';
import type { ChatModel } from './model/chat-model';

export interface EvaluationActivityDependencies {
  /** The judge's model (its failures `ReactAgent.Judge.*`: built with `classifyJudgeError`). */
  judgeModel: ChatModel;
  endpoint: JudgeEndpoint;
  store: TranscriptStore;
  verdicts: VerdictStore;
  /** Token counter for lines without recorded usage (tiktoken in the worker). Default: none. */
  countTokens?: (text: string) => number;
  /**
   * Opens the rollout files' folders and the output (a directory, or `s3://…` with the worker's S3
   * settings: the same opener as the batch's output). Default: {@link openOutputLocation} with the
   * AWS SDK's own settings.
   */
  openLocation?: OpenLocation;
  /** Renders report.html. Default: {@link renderEvaluationReportHtml}. */
  renderReportHtml?: (report: EvaluationReport) => Promise<string>;
  /**
   * Folders the local paths a client names (inputs, judge prompt file, output) must lie in, after
   * `..` and symbolic links (`REACT_AGENT_DATA_ROOTS`; src/storage/data-roots.ts). Default: not
   * confined — the worker always passes its roots; only tests and embedders leave them out.
   */
  dataRoots?: readonly string[];
}

/** A warning in the activity's log (the console when called outside an activity, as in unit tests). */
function warn(message: string, meta: Record<string, unknown>): void {
  try {
    log.warn(message, meta);
  } catch {
    console.warn(message);
  }
}

const CACHE_SIZE = 4;
/** Locations (and their S3 clients) kept per worker. */
const LOCATION_CACHE_SIZE = 16;

/** Whether a judge choice names a prompt file (not exact match or a built-in judge). */
function isJudgeFile(judge: string): boolean {
  return judge !== EXACT_MATCH_JUDGE && judge !== 'gaia' && judge !== 'browsecomp';
}

/** Reads a judge choice: a built-in name, or a prompt file's template (format: either). */
export async function judgeTemplate(judge: string, model: string): Promise<StoredJudge> {
  if (judge === EXACT_MATCH_JUDGE)
    return { name: EXACT_MATCH_JUDGE, template: '', format: 'word', model: '', promptHash: '' };
  if (judge === 'gaia' || judge === 'browsecomp') {
    const { template, format } = builtInJudge(judge as BuiltInJudge);
    return { name: judge, template, format, model, promptHash: promptHash(template) };
  }
  let template: string;
  try {
    template = await readFile(judge, 'utf8');
  } catch (error) {
    throw new EvaluationInputError(`Cannot read the judge prompt file ${judge} (${(error as Error).message}).`);
  }
  if (!/\{(prediction|response)\}/.test(template))
    throw new EvaluationInputError(`The judge prompt file ${judge} has no {prediction} (or {response}) placeholder.`);
  return { name: judge, template, format: 'either', model, promptHash: promptHash(template) };
}

/**
 * The evaluation's activities (issue 12): `prepareEvaluation` reads and dedupes the rollout
 * files and stores the runs' facts by hash; `judgeRuns` (judge-activity.ts) judges a range of
 * them; `writeEvaluation` reads the stored verdicts back and writes report.json, scored/,
 * summary.jsonl and report.html (a page that cannot be rendered is logged and named in the result,
 * the other files are written all the same).
 */
export function createEvaluationActivities(dependencies: EvaluationActivityDependencies) {
  const cache = new Map<string, StoredEvaluationInput>();
  async function loadInput(reference: string): Promise<StoredEvaluationInput> {
    const hit = cache.get(reference);
    if (hit) return hit;
    const input = JSON.parse(await dependencies.store.getText(reference)) as StoredEvaluationInput;
    cache.set(reference, input);
    if (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
    return input;
  }
  const invalid = (error: unknown) => {
    if (error instanceof PathOutsideDataRootsError)
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.pathOutsideDataRoots,
        message: error.message,
        nonRetryable: true,
      });
    return error instanceof EvaluationInputError || error instanceof OutputLocationError
      ? ApplicationFailure.create({
          type: EvaluationFailureTypes.invalidInput,
          message: error.message,
          nonRetryable: true,
        })
      : error;
  };
  /** Refuses a local path outside the data roots (s3:// passes); nothing when the activities are not confined. */
  const confine = async (path: string, what: string) => {
    if (dependencies.dataRoots) await checkInsideDataRoots(path, dependencies.dataRoots, what);
  };
  const open = dependencies.openLocation ?? openOutputLocation;
  const renderReportHtml = dependencies.renderReportHtml ?? renderEvaluationReportHtml;
  const locations = new Map<string, OutputLocation>();
  /** One location (and S3 client) per folder, for the few evaluations a worker serves at once. */
  const openLocation: OpenLocation = (url) => {
    let location = locations.get(url);
    if (!location) {
      location = open(url);
      locations.set(url, location);
      if (locations.size > LOCATION_CACHE_SIZE) locations.delete(locations.keys().next().value as string);
    }
    return location;
  };
  const reading = { openLocation, ...(dependencies.countTokens ? { countTokens: dependencies.countTokens } : {}) };

  return {
    async prepareEvaluation(input: PrepareEvaluationInput): Promise<PrepareEvaluationOutput> {
      try {
        // Every path the client named is checked before any is looked at, so a refusal tells nothing about the others.
        for (const path of input.paths) await confine(path, "The evaluation's input");
        if (isJudgeFile(input.judge)) await confine(input.judge, 'The judge prompt file');
        if (input.output !== undefined) await confine(input.output, "The evaluation's output");
        const resolved = await resolveEvaluationFiles(input.paths, { openLocation });
        // A batch directory's iter files, each of which may be a link out of it.
        for (const file of resolved.files) await confine(file, "The evaluation's input");
        const read = await readEvaluationInputs(resolved.files, reading);
        const judge = await judgeTemplate(input.judge, dependencies.endpoint.model);
        const stored: StoredEvaluationInput = {
          version: 1,
          source: { paths: input.paths, ...(input.batchId ? { batchId: input.batchId } : {}) },
          files: read.files,
          rollouts: read.rollouts,
          skipped: read.skipped,
          duplicates: read.duplicates,
          judge,
        };
        const reference = await dependencies.store.putText(JSON.stringify(stored));
        return {
          input: reference,
          runs: read.rollouts.reduce((sum, runs) => sum + runs.length, 0),
          judge: { name: judge.name, model: judge.model, promptHash: judge.promptHash },
          ...(hasReferences(read.rollouts) ? {} : { refused: NO_REFERENCES_MESSAGE }),
        };
      } catch (error) {
        throw invalid(error);
      }
    },

    judgeRuns: createJudgeRuns({
      chatModel: dependencies.judgeModel,
      endpoint: dependencies.endpoint,
      verdicts: dependencies.verdicts,
      loadInput,
    }),

    async writeEvaluation(input: WriteEvaluationInput): Promise<WriteEvaluationOutput> {
      const stored = await loadInput(input.input);
      const verdicts = new Map<string, RunVerdict>();
      const byExactMatch = stored.judge.name === EXACT_MATCH_JUDGE;
      if (!input.refused && byExactMatch) {
        for (const run of stored.rollouts.flat())
          if (run.reference.trim() !== '') verdicts.set(runKey(run), exactMatchVerdict(run));
      } else if (!input.refused) {
        for (const run of stored.rollouts.flat()) {
          if (run.reference.trim() === '') continue;
          const verdict = await dependencies.verdicts.get(verdictKeyOf(stored.judge, run));
          const matched = exactMatchVerdict(run);
          verdicts.set(
            runKey(run),
            verdict
              ? {
                  isCorrect: verdict.isCorrect,
                  judgement: verdict.judgement,
                  ...(verdict.unparsed ? { unparsed: true } : {}),
                  exactMatch: matched.exactMatch as number,
                  f1: matched.f1 as number,
                }
              : {
                  isCorrect: false,
                  judgement: 'no verdict stored',
                  exactMatch: matched.exactMatch as number,
                  f1: matched.f1 as number,
                },
          );
        }
      }
      const report = buildEvaluationReport({
        rollouts: stored.rollouts,
        verdicts,
        method: byExactMatch ? 'exact_match' : 'judge',
        ...(byExactMatch
          ? {}
          : {
              judge: { name: stored.judge.name, model: stored.judge.model, promptHash: stored.judge.promptHash },
              judgeCalls: input.judgeCalls,
            }),
        createdAt: input.createdAt,
        source: stored.source,
        skipped: stored.skipped,
        duplicates: stored.duplicates,
        notes: input.refused ? [input.refused] : [],
        ...(input.webUiBase ? { webUiBase: input.webUiBase } : {}),
      });
      let html: string | undefined;
      let htmlProblem: string | undefined;
      try {
        html = await renderReportHtml(report);
      } catch (error) {
        htmlProblem = `report.html could not be rendered: ${error instanceof Error ? error.message : String(error)}`;
        warn(`${htmlProblem} (report.json, scored/ and summary.jsonl are written all the same)`, {
          output: input.output,
        });
      }
      let written: Awaited<ReturnType<typeof writeEvaluationOutputs>>;
      try {
        await confine(input.output, "The evaluation's output");
        written = await writeEvaluationOutputs(input.output, report, stored.rollouts, verdicts, html, { openLocation });
      } catch (error) {
        throw invalid(error);
      }
      return {
        reportPath: written.report,
        headline: headlineOf(report),
        ...(written.html ? { htmlPath: written.html } : {}),
        ...(htmlProblem ? { htmlProblem } : {}),
      };
    },
  };
}

export type EvaluationActivities = ReturnType<typeof createEvaluationActivities>;
