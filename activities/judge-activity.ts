import { Context } from '@temporalio/activity';
import { heartbeat } from './heartbeats';
import type {
  JudgeRunsInput,
  JudgeRunsOutput,
  StoredEvaluationInput,
  StoredJudge,
} from '../src/core/evaluation/evaluation-contract';
import type { EvaluationRun } from '../src/core/evaluation/evaluation-runs';
import { parseVerdict, renderJudgePrompt, verdictReminder } from '../src/core/evaluation/judge-prompts';
import { verdictKey, type StoredVerdict, type VerdictStore } from '../src/storage/verdict-store';
import type { ChatModel } from './model/chat-model';
import { chatControls } from './model/chat-controls';

/** The judge's endpoint, for messages (never the key). */
export interface JudgeEndpoint {
  /** Judge model (REACT_AGENT_JUDGE_MODEL, default the run model). */
  model: string;
  /** REACT_AGENT_JUDGE_BASE_URL, default OPENAI_BASE_URL. */
  baseUrl: string;
}

export interface JudgeActivityDependencies {
  /**
   * The judge's model (activities/model/chat-model.ts); its failures are `ReactAgent.Judge.*`
   * naming `REACT_AGENT_JUDGE_*` (the worker builds it with `classifyJudgeError`).
   */
  chatModel: ChatModel;
  endpoint: JudgeEndpoint;
  verdicts: VerdictStore;
  /** Reads a stored evaluation input (cached by the caller). */
  loadInput: (reference: string) => Promise<StoredEvaluationInput>;
}

/** The key of a run's verdict under a judge. */
export function verdictKeyOf(judge: StoredJudge, run: EvaluationRun): string {
  return verdictKey({
    prompt: judge.template,
    model: judge.model,
    question: run.question,
    reference: run.reference,
    prediction: run.prediction,
  });
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
  const { chatModel, endpoint, verdicts } = dependencies;

  async function complete(
    messages: Array<{ role: 'user' | 'assistant'; content: string }>,
    signal: AbortSignal,
    progress: unknown,
  ): Promise<string> {
    const context = Context.current();
    const reply = await chatModel.chat(
      { model: endpoint.model, messages, sampling: { temperature: 0 } },
      chatControls({
        signal,
        heartbeatTimeoutMs: context.info.heartbeatTimeoutMs,
        onProgress: () => context.heartbeat(progress),
      }),
    );
    return reply.content;
  }

  async function judge(
    run: EvaluationRun,
    stored: StoredJudge,
    signal: AbortSignal,
    progress: unknown,
  ): Promise<StoredVerdict> {
    const prompt = renderJudgePrompt(stored.template, {
      question: run.question,
      reference: run.reference,
      prediction: run.prediction,
    });
    const first = await complete([{ role: 'user', content: prompt }], signal, progress);
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
        progress,
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
      heartbeat({ judged: offset });
      if (run.reference.trim() === '') continue;
      const key = verdictKeyOf(stored.judge, run);
      const existing = await verdicts.get(key);
      if (existing) {
        output.stored += 1;
        if (existing.unparsed) output.unparsed += 1;
        continue;
      }
      const verdict = await judge(run, stored.judge, context.cancellationSignal, { judged: offset });
      await verdicts.put(key, verdict);
      output.made += verdict.calls;
      if (verdict.unparsed) output.unparsed += 1;
    }
    return output;
  };
}
