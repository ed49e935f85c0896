import type { ParsedTurn, ProtocolName } from './protocol';

/**
 * A truncated reply: one that ended before the model finished it, so nothing in it is acted on.
 * The loop answers it with an observation asking for a shorter reply; the final answer phase
 * asks once more and then keeps the partial text, marked. Pure and workflow-safe.
 */

/** The finish reason OpenAI-compatible servers (OpenAI, vLLM, llama-server, Ollama, TGI) give a reply stopped at `max_tokens`. */
export const OUTPUT_LIMIT_FINISH_REASON = 'length';

/**
 * How we know a reply was cut off: the server stopped it at the output token limit, or (tag
 * protocol) its `<answer>` was never closed.
 */
export type Truncation = 'output_limit' | 'unclosed_answer';

/** How many times the final answer phase asks again, shorter, when the final answer was cut off. */
export const FINAL_ANSWER_RETRIES_WHEN_TRUNCATED = 1;

/** What a tool call in a truncated reply is answered with: it is not run, its arguments may be cut too. */
export const TRUNCATED_REPLY_CALL_NOTE =
  'Not run: the reply was cut off before it ended, so its tool calls were not run.';

/**
 * Whether the reply was cut off, and how we know; undefined for a complete reply.
 *
 * - `native`, `classic`: the finish reason is `length`.
 * - `deep-research`: an `<answer>` without `</answer>`, whatever the finish reason; or a `length`
 *   reply without a closed `<answer>`. A closed `<answer>` is complete even when the model
 *   rambled on to the limit after it.
 */
export function truncationOf(protocol: ProtocolName, turn: ParsedTurn, finishReason: string): Truncation | undefined {
  const stoppedAtLimit = finishReason === OUTPUT_LIMIT_FINISH_REASON;
  switch (protocol) {
    case 'deep-research':
      if (turn.unclosedAnswer) return stoppedAtLimit ? 'output_limit' : 'unclosed_answer';
      return stoppedAtLimit && turn.answer === undefined ? 'output_limit' : undefined;
    case 'native':
    case 'classic':
      return stoppedAtLimit ? 'output_limit' : undefined;
    default: {
      const unknown: never = protocol;
      throw new Error(`unknown protocol ${String(unknown)}`);
    }
  }
}

/** How this protocol wants a concise final answer written, as the end of a sentence. */
function answerFormat(protocol: ProtocolName): string {
  switch (protocol) {
    case 'deep-research':
      return ', inside <answer></answer>';
    case 'classic':
      return ', after "Final Answer:"';
    case 'native':
      return '';
    default: {
      const unknown: never = protocol;
      throw new Error(`unknown protocol ${String(unknown)}`);
    }
  }
}

function whatHappened(truncation: Truncation, what: 'reply' | 'answer'): string {
  switch (truncation) {
    case 'output_limit':
      return `Your ${what} was cut off: it reached the most tokens one reply may have before it was finished`;
    case 'unclosed_answer':
      return 'Your <answer> was not closed with </answer>, so it looks cut off';
    default: {
      const unknown: never = truncation;
      throw new Error(`unknown truncation ${String(unknown)}`);
    }
  }
}

/** The observation that answers a truncated reply in the loop: nothing in it was used; reply again, shorter. */
export function truncatedReplyNote(protocol: ProtocolName, truncation: Truncation): string {
  return (
    `${whatHappened(truncation, 'reply')}, and none of it was used. Reply again, shorter: keep your thinking brief, ` +
    `then make one tool call, or give a concise final answer${answerFormat(protocol)}.`
  );
}

/** The request that follows a truncated final answer: the same answer again, much shorter. */
export function truncatedFinalAnswerNote(protocol: ProtocolName, truncation: Truncation): string {
  return `${whatHappened(truncation, 'answer')}. Write the final answer again, much shorter: the answer itself with little or no reasoning${answerFormat(protocol)}.`;
}

/** The partial text of a final answer that stayed truncated, marked so no reader takes it for a whole one. */
export function markTruncatedAnswer(partial: string, truncation: Truncation): string {
  switch (truncation) {
    case 'output_limit':
      return `${partial.trimEnd()} [cut off: the reply reached the output token limit]`;
    case 'unclosed_answer':
      return `${partial.trimEnd()} [cut off: the answer was never closed]`;
    default: {
      const unknown: never = truncation;
      throw new Error(`unknown truncation ${String(unknown)}`);
    }
  }
}

/**
 * What the final answer phase does with its reply:
 * - `accept`: the reply is complete; take its answer, if it has one.
 * - `ask_again`: it was cut off and a retry is left; send `note` and call once more.
 * - `keep_marked`: it was cut off and no retry is left; keep the partial answer, marked (none when the cut came before any answer text).
 */
export type FinalAnswerDecision =
  { kind: 'accept'; answer?: string } | { kind: 'ask_again'; note: string } | { kind: 'keep_marked'; answer?: string };

/** Decides on the final answer phase's reply; `retriesLeft` counts down from {@link FINAL_ANSWER_RETRIES_WHEN_TRUNCATED}. */
export function decideFinalAnswer(
  protocol: ProtocolName,
  turn: ParsedTurn,
  finishReason: string,
  retriesLeft: number,
): FinalAnswerDecision {
  const truncation = truncationOf(protocol, turn, finishReason);
  if (truncation === undefined)
    return turn.answer === undefined ? { kind: 'accept' } : { kind: 'accept', answer: turn.answer };
  if (retriesLeft > 0) return { kind: 'ask_again', note: truncatedFinalAnswerNote(protocol, truncation) };
  const partial = turn.answer?.trim();
  return partial ? { kind: 'keep_marked', answer: markTruncatedAnswer(partial, truncation) } : { kind: 'keep_marked' };
}
