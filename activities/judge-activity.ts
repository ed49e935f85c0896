import { ApplicationFailure, Context } from '@temporalio/activity';
import OpenAI from 'openai';
import type { JudgeRunsInput, JudgeRunsOutput, StoredEvaluationInput, StoredJudge } from '../src/core/evaluation/evaluation-contract';
import { EvaluationFailureTypes } from '../src/core/evaluation/evaluation-contract';
import type { EvaluationRun } from '../src/core/evaluation/evaluation-runs';
import { parseVerdict, renderJudgePrompt, verdictReminder } from '../src/core/evaluation/judge-prompts';
import { verdictKey, type StoredVerdict, type VerdictStore } from '../src/storage/verdict-store';
import { retryAfterMilliseconds } from './model-errors';

/** The judge's endpoint, for messages (never the key). */
export interface JudgeEndpoint {
  /** Judge model (REACT_AGENT_JUDGE_MODEL, default the run model). */
  model: string;
  /** REACT_AGENT_JUDGE_BASE_URL, default OPENAI_BASE_URL. */
  baseUrl: string;
}

export interface JudgeActivityDependencies {
  /** An OpenAI-compatible client for the judge, created with `maxRetries: 0` (Temporal owns retries). */
  openai: OpenAI;
  endpoint: JudgeEndpoint;
  verdicts: VerdictStore;
  /** Reads a stored evaluation input (cached by the caller). */
  loadInput: (reference: string) => Promise<StoredEvaluationInput>;
}

/**
 * Turns what the openai client threw at a judge call into an ApplicationFailure: unreachable,
 * 408/409/429/5xx retry; 400/401/403/404 do not. Messages name the variable to fix.
 */
export function classifyJudgeError(error: unknown, endpoint: JudgeEndpoint): ApplicationFailure {
  const cause = error instanceof Error ? error : new Error(String(error));
  if (error instanceof OpenAI.APIConnectionError) {
    return ApplicationFailure.create({
      type: EvaluationFailureTypes.judgeUnreachable,
      message: `The judge endpoint ${endpoint.baseUrl} could not be reached (${cause.message}). Check REACT_AGENT_JUDGE_BASE_URL (default: OPENAI_BASE_URL) and that the server is running.`,
      cause,
    });
  }
  if (error instanceof OpenAI.APIError && typeof error.status === 'number') {
    const status = error.status;
    if (status === 429) {
      return ApplicationFailure.create({ type: EvaluationFailureTypes.judgeRateLimited, message: `The judge endpoint is rate limiting (429): ${error.message}`, nextRetryDelay: retryAfterMilliseconds(error.headers), cause });
    }
    if (status === 408 || status === 409 || status >= 500) {
      return ApplicationFailure.create({
        type: EvaluationFailureTypes.judgeServerError,
        message: `The judge endpoint ${endpoint.baseUrl} failed with ${status}: ${error.message}. Check REACT_AGENT_JUDGE_BASE_URL.`,
        nextRetryDelay: retryAfterMilliseconds(error.headers),
        cause,
      });
    }
    const fix =
      status === 401 || status === 403
        ? `Check REACT_AGENT_JUDGE_API_KEY (default: OPENAI_API_KEY): ${endpoint.baseUrl} refused it.`
        : status === 404
          ? `Check REACT_AGENT_JUDGE_MODEL (now "${endpoint.model}") and REACT_AGENT_JUDGE_BASE_URL (now ${endpoint.baseUrl}).`
          : 'Retrying will not help.';
    return ApplicationFailure.create({ type: EvaluationFailureTypes.judgeRejected, message: `The judge endpoint rejected the request with ${status}: ${error.message}. ${fix}`, nonRetryable: true, cause });
  }
  return ApplicationFailure.create({ type: EvaluationFailureTypes.judgeBadResponse, message: `The judge call failed: ${cause.message}`, cause });
}

/** The key of a run's verdict under a judge. */
export function verdictKeyOf(judge: StoredJudge, run: EvaluationRun): string {
  return verdictKey({ prompt: judge.template, model: judge.model, question: run.question, reference: run.reference, prediction: run.prediction });
}

/** The runs of a stored input in order: rollout 1's, then rollout 2's, … */
export function runsInOrder(input: StoredEvaluationInput): EvaluationRun[] {
  return input.rollouts.flat();
}

/**
 * The judge activity: judges runs [from, to) of a stored evaluation input, one after another,
 * heartbeating. A run whose verdict is stored is not judged again; a reply that does not parse
 * is asked once more with a reminder, then stored as not correct and unparsed.
 */
export function createJudgeRuns(dependencies: JudgeActivityDependencies) {
  const { openai, endpoint, verdicts } = dependencies;

  async function complete(messages: Array<{ role: 'user' | 'assistant'; content: string }>, signal: AbortSignal): Promise<string> {
    try {
      const response = await openai.chat.completions.create({ model: endpoint.model, messages, temperature: 0 }, { signal });
      return response.choices[0]?.message?.content ?? '';
    } catch (error) {
      if (signal.aborted) throw error;
      throw classifyJudgeError(error, endpoint);
    }
  }

  async function judge(run: EvaluationRun, stored: StoredJudge, signal: AbortSignal): Promise<StoredVerdict> {
    const prompt = renderJudgePrompt(stored.template, { question: run.question, reference: run.reference, prediction: run.prediction });
    const first = await complete([{ role: 'user', content: prompt }], signal);
    let parsed = parseVerdict(first, stored.format);
    let reply = first;
    let calls = 1;
    if (parsed.isCorrect === undefined) {
      reply = await complete(
        [
          { role: 'user', content: prompt },
          { role: 'assistant', content: first },
          { role: 'user', content: verdictReminder(stored.format) },
        ],
        signal,
      );
      calls = 2;
      parsed = parseVerdict(reply, stored.format);
    }
    return {
      isCorrect: parsed.isCorrect === true,
      judgement: reply,
      ...(parsed.isCorrect === undefined ? { unparsed: true } : {}),
      calls,
      model: stored.model,
      ...(parsed.extractedFinalAnswer !== undefined ? { extractedFinalAnswer: parsed.extractedFinalAnswer } : {}),
      ...(parsed.confidence !== undefined ? { confidence: parsed.confidence } : {}),
    };
  }

  return async function judgeRuns(input: JudgeRunsInput): Promise<JudgeRunsOutput> {
    const context = Context.current();
    const stored = await dependencies.loadInput(input.input);
    const runs = runsInOrder(stored).slice(input.from, input.to);
    const output: JudgeRunsOutput = { made: 0, stored: 0, unparsed: 0 };
    for (const [offset, run] of runs.entries()) {
      context.heartbeat({ judged: offset });
      if (run.reference.trim() === '') continue;
      const key = verdictKeyOf(stored.judge, run);
      const existing = await verdicts.get(key);
      if (existing) {
        output.stored += 1;
        if (existing.unparsed) output.unparsed += 1;
        continue;
      }
      const verdict = await judge(run, stored.judge, context.cancellationSignal);
      await verdicts.put(key, verdict);
      output.made += verdict.calls;
      if (verdict.unparsed) output.unparsed += 1;
    }
    return output;
  };
}
