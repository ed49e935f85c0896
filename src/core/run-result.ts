import type { TokenUsage } from './messages';
import type { ProtocolName } from './protocols/protocol';
import type { SubRunTotals } from './sub-runs/sub-run-record';
import type { Termination } from './termination';

/** Result of the `researchAgent` workflow, in DeepResearch's evaluation shape plus our fields. */
export interface ResearchRunResult {
  question: string;
  /** The reference answer from the input, or '' (DeepResearch's field name). */
  answer: string;
  /** The model's final answer, or a sentence saying why there is none. */
  prediction: string;
  termination: Termination;
  /** Reference of the whole transcript (a conversation manifest); `react-agent result` materialises it into `messages`. */
  transcript: string;
  /** Model calls made. */
  iterations: number;
  /** Tool calls answered (run or synthesized). */
  toolCalls: number;
  usage: TokenUsage;
  /** Context size in tokens at the end (last prompt + completion). */
  contextTokens: number;
  /** Workflow time from start to end. */
  durationMs: number;
  /** Set when termination is `error`: what went wrong and how to fix it. */
  error?: string;
  /** The answer parsed and validated against `answerSchema`, when one was given. */
  parsedAnswer?: unknown;
  /** The loop's own record: compressions, nudges, continue-as-new count, early finish. */
  details: RunDetails;
  /**
   * The sub-runs this run delegated to (issue 30): their model calls, and each one's id,
   * question, termination, calls, tokens and cost. Their tokens and cost are in `usage` too.
   * Absent when the run did not delegate.
   */
  subRuns?: SubRunTotals;
}

/** What happened along the way, beyond the termination. */
export interface RunDetails {
  protocol: ProtocolName;
  /** Each compression: at which model call, how many observations were stubbed and turns summarised, and the conversations before and after. */
  compressions: Array<{
    atModelCall: number;
    stubbedObservations: number;
    summarizedTurns: number;
    before: string;
    after: string;
    contextTokensAfter: number;
  }>;
  /** Warnings the stuck detector gave. */
  stuckNudges: number;
  /** Runs this workflow continued as new. */
  continuedAsNew: number;
  /** Whether the final answer phase ran, and why. */
  finalAnswerPhase?: Termination | 'finish_requested';
  /** Set when someone asked the run to finish early (update `finishNow`). */
  finishRequested?: boolean;
  /** Replies cut off before they ended (final answer retries included). */
  truncatedReplies?: number;
  /** Replies nothing could be read from. */
  malformedReplies?: number;
  /** Set when replies the loop could not use ended the run: the loop option whose limit was reached. */
  replyLimit?: 'maxTruncatedReplies' | 'maxMalformedReplies';
  /** Set when the final answer stayed cut off after its retry: the prediction is the partial text, marked. */
  truncatedAnswer?: true;
  /**
   * The model server's context window, when the run learned it (from the server's endpoints at its
   * start, or from a context-length error; src/core/context-window.ts): its size in the server's
   * tokens, where it was read, and what a prompt may take of it (the window less the reply's
   * reserve and a margin). The run's context budget is the smaller of that and `limits.maxContextTokens`.
   */
  contextWindow?: { tokens: number; source: string; promptBudget: number };
  /**
   * Set when the final answer call was not made: even the question alone did not fit (the
   * prediction says so): its tokens, and the most the final answer's prompt may take.
   */
  finalAnswerDidNotFit?: { promptTokens: number; promptLimit: number };
}

/** A ResearchRunResult with the transcript materialised, as written by `react-agent result`. */
export interface MaterialisedRunResult extends ResearchRunResult {
  messages: Array<{ role: string; content: string }>;
}
