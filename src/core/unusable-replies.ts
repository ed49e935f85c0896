import type { ParsedTurn, ProtocolName } from './protocols/protocol';
import { truncationOf, type Truncation } from './protocols/truncated-reply';

/**
 * Replies the loop cannot use, counted in a row. A *truncated* reply (cut off before it ended)
 * gets a request for a shorter one; a *malformed* reply (nothing in it could be read: no answer
 * and no tool call the protocol could parse) gets the protocol's format correction. Each kind has
 * its own limit (`loop.maxTruncatedReplies`, `loop.maxMalformedReplies`); reaching it ends the
 * run through the final answer phase. Both counts go back to 0 at the next reply the loop can
 * use, so an unusable reply of the other kind in between does not reset them. Pure and
 * serialisable: the workflow carries the streak across continue-as-new.
 */
export interface UnusableReplyStreak {
  /** Truncated replies since the last usable one. */
  truncated: number;
  /** Malformed replies since the last usable one. */
  malformed: number;
}

export const NO_UNUSABLE_REPLIES: UnusableReplyStreak = { truncated: 0, malformed: 0 };

/** How the loop takes one reply. */
export type ReplyKind = { kind: 'usable' } | { kind: 'truncated'; truncation: Truncation } | { kind: 'malformed' };

/** The limits of {@link UnusableReplyStreak}, as in the run's loop options. */
export interface UnusableReplyLimits {
  maxTruncatedReplies: number;
  maxMalformedReplies: number;
}

/** Whether nothing in the reply could be read: no answer, and every tool call (if any) unparseable. */
export function isMalformed(turn: ParsedTurn): boolean {
  return turn.answer === undefined && turn.toolCalls.every((call) => call.problem !== undefined);
}

/** Sorts a reply: truncated (which explains anything malformed in it), malformed, or usable. */
export function replyKind(protocol: ProtocolName, turn: ParsedTurn, finishReason: string): ReplyKind {
  const truncation = truncationOf(protocol, turn, finishReason);
  if (truncation !== undefined) return { kind: 'truncated', truncation };
  return isMalformed(turn) ? { kind: 'malformed' } : { kind: 'usable' };
}

/** Counts one reply into the streak and says whether its kind's limit is reached (the run then ends). */
export function recordReply(
  streak: UnusableReplyStreak,
  reply: ReplyKind,
  limits: UnusableReplyLimits,
): { streak: UnusableReplyStreak; limitReached: boolean } {
  switch (reply.kind) {
    case 'usable':
      return { streak: NO_UNUSABLE_REPLIES, limitReached: false };
    case 'truncated': {
      const truncated = streak.truncated + 1;
      return { streak: { ...streak, truncated }, limitReached: truncated >= limits.maxTruncatedReplies };
    }
    case 'malformed': {
      const malformed = streak.malformed + 1;
      return { streak: { ...streak, malformed }, limitReached: malformed >= limits.maxMalformedReplies };
    }
    default: {
      const unknown: never = reply;
      throw new Error(`unknown reply kind ${JSON.stringify(unknown)}`);
    }
  }
}
