/**
 * Notices a loop that repeats itself: the same tool call (name and arguments) three times in a
 * row, or two calls alternating A-B-A-B. The first time it says `nudge` (the workflow adds an
 * observation asking the model to change course); if the next call repeats the pattern, it
 * says `stuck` and the run ends through the final answer phase. Only calls the protocol could
 * read are watched ({@link watchedCalls}): an unparseable call has no name or arguments to
 * compare, and repeating one is a format problem with its own limit (src/core/unusable-replies.ts).
 * Pure and serialisable, so the workflow carries it across continue-as-new.
 */
export interface StuckDetectorState {
  /** Signatures of the most recent tool calls, oldest first (at most 4). */
  recent: string[];
  /** Signatures the last nudge was about; a repeat of one of them means stuck. */
  nudgedAbout: string[];
  nudges: number;
}

export type StuckVerdict = { kind: 'ok' } | { kind: 'nudge'; message: string } | { kind: 'stuck'; message: string };

export const INITIAL_STUCK_DETECTOR_STATE: StuckDetectorState = { recent: [], nudgedAbout: [], nudges: 0 };

/** The calls of a turn stuck detection watches: those the protocol could read (no `problem`), in call order. */
export function watchedCalls<Call extends { problem?: string }>(calls: readonly Call[]): Call[] {
  return calls.filter((call) => call.problem === undefined);
}

/** A call's identity for repetition checks: tool name and arguments with keys sorted. */
export function callSignature(name: string, args: unknown): string {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value && typeof value === 'object'
        ? Object.fromEntries(
            Object.keys(value as object)
              .sort()
              .map((key) => [key, canonical((value as Record<string, unknown>)[key])]),
          )
        : value;
  return `${name}:${JSON.stringify(canonical(args))}`;
}

function describe(signature: string): string {
  return signature.length > 160 ? `${signature.slice(0, 159)}…` : signature;
}

/** Records one tool call and says whether the loop is repeating itself. */
export function observeToolCall(
  state: StuckDetectorState,
  signature: string,
): { state: StuckDetectorState; verdict: StuckVerdict } {
  if (state.nudgedAbout.length) {
    if (state.nudgedAbout.includes(signature)) {
      return {
        state: { ...state, recent: [...state.recent, signature].slice(-4) },
        verdict: {
          kind: 'stuck',
          message: `The same tool call kept repeating after a warning: ${describe(signature)}.`,
        },
      };
    }
    return { state: { recent: [signature], nudgedAbout: [], nudges: state.nudges }, verdict: { kind: 'ok' } };
  }
  const recent = [...state.recent, signature].slice(-4);
  const [a, b, c, d] = recent.length === 4 ? recent : [undefined, ...recent.slice(-3)];
  if (b !== undefined && b === c && c === d) {
    return {
      state: { recent: [], nudgedAbout: [signature], nudges: state.nudges + 1 },
      verdict: {
        kind: 'nudge',
        message: `You have made the same tool call three times in a row (${describe(signature)}) and it will not give you anything new. Try a different approach, or give your final answer.`,
      },
    };
  }
  if (a !== undefined && a !== b && a === c && b === d) {
    return {
      state: { recent: [], nudgedAbout: [a, b as string], nudges: state.nudges + 1 },
      verdict: {
        kind: 'nudge',
        message: `You are alternating between the same two tool calls (${describe(a)} and ${describe(b as string)}). Try a different approach, or give your final answer.`,
      },
    };
  }
  return { state: { ...state, recent }, verdict: { kind: 'ok' } };
}
