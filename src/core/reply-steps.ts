import type { CallModelOutput } from './activity-contracts';
import { malformedRepliesError } from './ending-texts';
import { parseStructuredAnswer } from './json-schema-validation';
import { withUserText, type PendingMessage } from './messages';
import { appendPendingText, prependPendingUncounted, setPending } from './pending';
import {
  decideFinalAnswer,
  TRUNCATED_REPLY_CALL_NOTE,
  truncatedReplyNote,
  type ParsedTurn,
  type Protocol,
  type ToolCallRequest,
} from './protocols';
import type { Ending, GivenAnswer } from './run-ending';
import type { LoopOptions } from './run-limits';
import type { RunState } from './run-state';
import { withDetails } from './run-transitions';
import type { JsonSchema } from './tool-spec';
import { answerTurn, estimateTokens, unansweredTurn } from './turns';
import { NO_UNUSABLE_REPLIES, recordReply, replyKind } from './unusable-replies';

/**
 * What the loop does with a model reply, decided without side effects: each reply gives the state
 * after it and one typed next step, which the workflow applies (workflows/phases/react-loop.ts).
 */
export type ReplyStep =
  /** The reply was answered (a correction, a request for a shorter reply, a schema error): call the model again. */
  | { kind: 'call_again' }
  /** Run these tool calls; then, when `malformedLimitReached`, end on malformed replies. */
  | { kind: 'run_tools'; calls: ToolCallRequest[]; malformedLimitReached: boolean }
  /** The run ends; the ending carries its error and the calls that came with the reply (answered when the run finishes). */
  | { kind: 'end'; ending: Ending };

/** What a reply step needs to know about the run besides its state. */
export interface ReplyContext {
  protocol: Protocol;
  options: LoopOptions;
  answerSchema?: JsonSchema;
  /** The `bounded-answer-checks` marker: answers are checked within bounds, patterns in linear time (json-schema-validation.ts `checkAnswerValue`). */
  boundedAnswerChecks?: boolean;
}

/** The step for a reply, with the state after it and the answer it gave, if any. */
export interface ReadReply {
  state: RunState;
  step: ReplyStep;
  given?: GivenAnswer;
}

/**
 * Answers a reply cut off before it ended: its tool calls are not run, and `note` (if any) asks
 * for a shorter reply.
 */
export function answerTruncatedReply(
  state: RunState,
  parsed: ParsedTurn,
  note: string | undefined,
  protocol: Protocol,
): RunState {
  let pending: PendingMessage[] = [];
  let tokens = 0;
  if (parsed.toolCalls.length) {
    const answered = answerTurn(protocol, { calls: parsed.toolCalls, results: new Map() }, TRUNCATED_REPLY_CALL_NOTE);
    pending = answered.messages;
    tokens = answered.tokens;
  }
  if (note !== undefined) {
    pending = pending.length ? withUserText(pending, note) : [protocol.renderCorrection(note)];
    tokens += estimateTokens(note);
  }
  return {
    ...setPending(state, pending, tokens),
    toolCallsAnswered: state.toolCallsAnswered + parsed.toolCalls.length,
  };
}

/** How an answer stands against the answer schema: accepted, to be given again (with the correction), or failed after the allowed attempts. */
export type AnswerCheck =
  { kind: 'accepted' } | { kind: 'retry'; correction: string } | { kind: 'failed'; message: string };

/**
 * Checks an answer against the schema (every answer counts as an attempt); without a schema every
 * answer is accepted. `bounded` is the `bounded-answer-checks` marker ({@link ReplyContext}).
 */
export function checkAnswer(
  state: RunState,
  text: string,
  schema: JsonSchema | undefined,
  maxAttempts: number,
  bounded = false,
): { state: RunState; given: GivenAnswer; check: AnswerCheck } {
  if (!schema) return { state, given: { text }, check: { kind: 'accepted' } };
  const next = { ...state, answerAttempts: state.answerAttempts + 1 };
  const parsed = parseStructuredAnswer(text, schema, bounded);
  if (!parsed.problems.length)
    return { state: next, given: { text, parsed: parsed.value }, check: { kind: 'accepted' } };
  const problems = parsed.problems.join('; ');
  if (next.answerAttempts >= maxAttempts) {
    return {
      state: next,
      given: { text },
      check: {
        kind: 'failed',
        message: `The answer did not match the answer schema after ${next.answerAttempts} attempts: ${problems}`,
      },
    };
  }
  const correction = `Your final answer does not match the required JSON schema: ${problems}. Give the final answer again as JSON matching this schema: ${JSON.stringify(schema)}`;
  return { state: next, given: { text }, check: { kind: 'retry', correction } };
}

/** The run ends on malformed replies: the limit is recorded and the ending's error says what to try. */
export function malformedRepliesEnd(state: RunState, context: ReplyContext): { state: RunState; ending: Ending } {
  const count = state.unusableReplies?.malformed ?? context.options.maxMalformedReplies;
  return {
    state: withDetails(state, { replyLimit: 'maxMalformedReplies' }),
    ending: {
      kind: 'budget_ended',
      budget: 'malformed_replies',
      error: malformedRepliesError(count, context.protocol.name),
    },
  };
}

/** An answer in a loop reply: accepted or failed, it ends the run; refused with attempts left, the model is asked again and the calls that came with it are answered, not run. */
function takeAnswer(state: RunState, answer: string, calls: ToolCallRequest[], context: ReplyContext): ReadReply {
  const checked = checkAnswer(
    state,
    answer,
    context.answerSchema,
    context.options.answerAttempts,
    context.boundedAnswerChecks,
  );
  const openTurn = calls.length ? { openTurn: unansweredTurn(calls) } : {};
  switch (checked.check.kind) {
    case 'accepted':
      return {
        state: checked.state,
        given: checked.given,
        step: { kind: 'end', ending: { kind: 'answered', answer: checked.given, ...openTurn } },
      };
    case 'failed':
      return {
        state: checked.state,
        given: checked.given,
        step: { kind: 'end', ending: { kind: 'failed', message: checked.check.message, answer, ...openTurn } },
      };
    case 'retry': {
      let next = appendPendingText(checked.state, checked.check.correction);
      if (calls.length) {
        next = prependPendingUncounted(
          next,
          answerTurn(
            context.protocol,
            { calls, results: new Map() },
            'Not run: the reply also contained a final answer.',
          ).messages,
        );
        next = { ...next, toolCallsAnswered: next.toolCallsAnswered + calls.length };
      }
      return { state: next, given: checked.given, step: { kind: 'call_again' } };
    }
    default: {
      const unknown: never = checked.check;
      throw new Error(`unknown answer check ${JSON.stringify(unknown)}`);
    }
  }
}

/** Whether a loop reply was cut off or unreadable: only then does `unusable-replies` decide {@link readReply}. */
export function isUnusableReply(outcome: CallModelOutput, protocol: Protocol): boolean {
  return replyKind(protocol.name, outcome.turn, outcome.finishReason).kind !== 'usable';
}

/**
 * The step for a reply of the ReAct loop. A reply cut off is answered with a request for a
 * shorter one (the run ends once `loop.maxTruncatedReplies` came in a row); an answer is checked;
 * a reply without calls gets the protocol's correction (the run ends once `loop.maxMalformedReplies`
 * unreadable ones came in a row); calls are run. `sortUnusable` is the `unusable-replies`
 * marker, read only for a reply that is not usable ({@link isUnusableReply}): a run recorded
 * before it takes such replies the old way.
 */
export function readReply(
  state: RunState,
  outcome: CallModelOutput,
  context: ReplyContext,
  sortUnusable: boolean,
): ReadReply {
  const parsed = outcome.turn;
  const reply = replyKind(context.protocol.name, parsed, outcome.finishReason);
  let next = state;
  let malformedLimitReached = false;
  if (reply.kind === 'usable' || sortUnusable) {
    const recorded = recordReply(state.unusableReplies ?? NO_UNUSABLE_REPLIES, reply, context.options);
    next = { ...next, unusableReplies: recorded.streak };
    if (reply.kind === 'truncated') {
      next = withDetails(next, { truncatedReplies: (next.details.truncatedReplies ?? 0) + 1 });
      next = answerTruncatedReply(
        next,
        parsed,
        recorded.limitReached ? undefined : truncatedReplyNote(context.protocol.name, reply.truncation),
        context.protocol,
      );
      if (!recorded.limitReached) return { state: next, step: { kind: 'call_again' } };
      next = withDetails(next, { replyLimit: 'maxTruncatedReplies' });
      return { state: next, step: { kind: 'end', ending: { kind: 'budget_ended', budget: 'truncated_replies' } } };
    }
    if (reply.kind === 'malformed') {
      next = withDetails(next, { malformedReplies: (next.details.malformedReplies ?? 0) + 1 });
      malformedLimitReached = recorded.limitReached;
    }
  }
  if (parsed.answer !== undefined) return takeAnswer(next, parsed.answer, parsed.toolCalls, context);
  if (parsed.toolCalls.length === 0) {
    next = setPending(
      next,
      [context.protocol.renderCorrection(parsed.problem ?? 'Call a tool, or give your final answer.')],
      estimateTokens(parsed.problem ?? ''),
    );
    if (!malformedLimitReached) return { state: next, step: { kind: 'call_again' } };
    const ended = malformedRepliesEnd(next, context);
    return { state: ended.state, step: { kind: 'end', ending: ended.ending } };
  }
  return { state: next, step: { kind: 'run_tools', calls: parsed.toolCalls, malformedLimitReached } };
}

/** What the final answer phase does with a reply: ask once more (it was cut off), or take what it has. */
export type FinalReplyStep = { kind: 'ask_again' } | { kind: 'take'; answer?: string; openCalls: ToolCallRequest[] };

/** Whether a final answer phase's reply was cut off: only then does `unusable-replies` decide {@link readFinalReply}. */
export function isCutOffFinalReply(outcome: CallModelOutput, protocol: Protocol, retriesLeft: number): boolean {
  return decideFinalAnswer(protocol.name, outcome.turn, outcome.finishReason, retriesLeft).kind !== 'accept';
}

/**
 * The step for a reply of the final answer phase. Cut off with a retry left, it is asked for again
 * shorter; cut off without one, its partial answer is kept, marked. Its tool calls are not run.
 * `sortUnusable` is the `unusable-replies` marker, read only for a reply cut off ({@link isCutOffFinalReply}).
 */
export function readFinalReply(
  state: RunState,
  outcome: CallModelOutput,
  protocol: Protocol,
  retriesLeft: number,
  sortUnusable: boolean,
): { state: RunState; step: FinalReplyStep } {
  const decision = decideFinalAnswer(protocol.name, outcome.turn, outcome.finishReason, retriesLeft);
  const openCalls = outcome.turn.toolCalls;
  if (decision.kind === 'accept' || !sortUnusable)
    return { state, step: { kind: 'take', answer: outcome.turn.answer, openCalls } };
  const counted = withDetails(state, { truncatedReplies: (state.details.truncatedReplies ?? 0) + 1 });
  switch (decision.kind) {
    case 'ask_again':
      return {
        state: answerTruncatedReply(counted, outcome.turn, decision.note, protocol),
        step: { kind: 'ask_again' },
      };
    case 'keep_marked':
      return {
        state: withDetails(counted, { truncatedAnswer: true }),
        step: { kind: 'take', answer: decision.answer, openCalls },
      };
    default: {
      const unknown: never = decision;
      throw new Error(`unknown final answer decision ${JSON.stringify(unknown)}`);
    }
  }
}
