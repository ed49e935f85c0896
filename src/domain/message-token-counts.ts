/**
 * Token counts carried forward with a conversation (issue 21): a conversation's manifest may keep
 * each message's count beside its reference, so a model call counts only the messages that are
 * new since the last one instead of recounting the whole conversation. Messages are immutable,
 * content-addressed blobs, so a count made once stays right for as long as the counter that made
 * it is the one counting. Pure: the activities count, the store keeps.
 */

/** One count per message of a conversation, in its order, and the name of the counter that made them. */
export interface MessageTokenCounts {
  /**
   * The counter (its encoding and how it counts a message, activities/token-counter.ts
   * `countsLabel`): counts made by another counter are never carried.
   */
  counter: string;
  counts: number[];
}

/** Whether `value` is a well-formed set of counts for a conversation of `messages` messages. */
export function isMessageTokenCounts(value: unknown, messages: number): value is MessageTokenCounts {
  if (typeof value !== 'object' || value === null) return false;
  const { counter, counts } = value as Partial<MessageTokenCounts>;
  return (
    typeof counter === 'string' &&
    Array.isArray(counts) &&
    counts.length === messages &&
    counts.every((count) => Number.isInteger(count) && count >= 0)
  );
}

/**
 * The counts `counter` may carry for a conversation of `messages` messages: per message the stored
 * count, or `undefined` where it has to be counted — every message when nothing was stored (a
 * conversation written before counts were kept), when another counter made them, when they do not
 * fit the conversation, or when `counter` is undefined (a counter whose counts are not carried).
 */
export function carriedCounts(
  stored: MessageTokenCounts | undefined,
  counter: string | undefined,
  messages: number,
): Array<number | undefined> {
  if (counter === undefined || stored?.counter !== counter || !isMessageTokenCounts(stored, messages))
    return new Array<undefined>(messages).fill(undefined);
  return [...stored.counts];
}

/**
 * Every message's count: the carried ones kept, each missing one counted by `count` (given the
 * message's index). `counted` says how many had to be counted.
 */
export function completeCounts(
  known: ReadonlyArray<number | undefined>,
  count: (index: number) => number,
): { counts: number[]; counted: number } {
  let counted = 0;
  const counts = known.map((carried, index) => {
    if (carried !== undefined) return carried;
    counted += 1;
    return count(index);
  });
  return { counts, counted };
}

/** The counts to store with a conversation: none for a counter whose counts are not carried. */
export function storableCounts(counter: string | undefined, counts: number[]): MessageTokenCounts | undefined {
  return counter === undefined ? undefined : { counter, counts };
}

/** A conversation's tokens: the sum of its messages' counts. */
export function totalOfCounts(counts: readonly number[]): number {
  return counts.reduce((sum, count) => sum + count, 0);
}
