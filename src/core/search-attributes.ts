import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';

/** How the run ended (see `Termination`). Register as Keyword. */
export const REACT_TERMINATION = defineSearchAttributeKey('ReactTermination', SearchAttributeType.KEYWORD);
/** Model calls made so far. Register as Int. */
export const REACT_ITERATIONS = defineSearchAttributeKey('ReactIterations', SearchAttributeType.INT);

/** The batch a run belongs to (its `researchBatch` workflow id). Register as Keyword. */
export const REACT_BATCH_ID = defineSearchAttributeKey('ReactBatchId', SearchAttributeType.KEYWORD);
/** Which rollout of its question a batch run is (1-based). Register as Int. */
export const REACT_ROLLOUT = defineSearchAttributeKey('ReactRollout', SearchAttributeType.INT);

/**
 * The run's question, whitespace folded and cut to {@link QUESTION_ATTRIBUTE_MAX_CHARACTERS}
 * (`questionAttribute`). Register as Text: a Text attribute is matched by words, so
 * `ReactQuestion = 'BYD'` finds every run whose question has the word BYD.
 */
export const REACT_QUESTION = defineSearchAttributeKey('ReactQuestion', SearchAttributeType.TEXT);
/** The model that ran the run: the run's `model.model`, or the worker's default. Register as Keyword. */
export const REACT_MODEL = defineSearchAttributeKey('ReactModel', SearchAttributeType.KEYWORD);
/** Total tokens (prompt and completion) of the run's model calls so far. Register as Int. */
export const REACT_TOKENS = defineSearchAttributeKey('ReactTokens', SearchAttributeType.INT);
/**
 * What the run's model calls cost so far in USD (`usage.costUsd`), at the worker's prices
 * (`REACT_AGENT_MODEL_PRICES`); set only once a call had a cost. Register as Double.
 */
export const REACT_COST = defineSearchAttributeKey('ReactCost', SearchAttributeType.DOUBLE);
/**
 * The tree a run belongs to (issue 30): the workflow id of its lead run, set on the lead when it
 * first delegates and on every sub-run at its start. `ReactTreeId = '<lead id>'` lists a whole tree.
 * Register as Keyword.
 */
export const REACT_TREE_ID = defineSearchAttributeKey('ReactTreeId', SearchAttributeType.KEYWORD);
/** The run's protocol (`deep-research`, `native`, `classic`). Register as Keyword. */
export const REACT_PROTOCOL = defineSearchAttributeKey('ReactProtocol', SearchAttributeType.KEYWORD);

/** Temporal's own, set on every workflow a schedule starts: the time it was scheduled for (a backfill's past time). */
export const TEMPORAL_SCHEDULED_START_TIME = defineSearchAttributeKey(
  'TemporalScheduledStartTime',
  SearchAttributeType.DATETIME,
);

/** The search attributes the project needs registered on the namespace, name → type. */
export const PROJECT_SEARCH_ATTRIBUTES = {
  ReactTermination: 'Keyword',
  ReactIterations: 'Int',
  ReactBatchId: 'Keyword',
  ReactRollout: 'Int',
  ReactQuestion: 'Text',
  ReactModel: 'Keyword',
  ReactTokens: 'Int',
  ReactProtocol: 'Keyword',
  ReactCost: 'Double',
  ReactTreeId: 'Keyword',
} as const;

/** Longest `ReactQuestion`, in characters (a list column and its words, well inside Temporal's 2 KB per value). */
export const QUESTION_ATTRIBUTE_MAX_CHARACTERS = 300;
/** Longest `ReactQuestion` in UTF-8 bytes, whatever its characters (Temporal refuses a value over 2 KB). */
const QUESTION_ATTRIBUTE_MAX_BYTES = 1_000;
/** Longest `ReactModel`, in characters. */
const MODEL_ATTRIBUTE_MAX_CHARACTERS = 200;
/** While a run goes, `ReactTokens`, `ReactCost` and `ReactIterations` are updated after every this many model calls (never after each one). */
export const TOKENS_ATTRIBUTE_EVERY_MODEL_CALLS = 10;

function utf8Bytes(character: string): number {
  const codePoint = character.codePointAt(0) ?? 0;
  return codePoint < 0x80 ? 1 : codePoint < 0x800 ? 2 : codePoint < 0x10000 ? 3 : 4;
}

/**
 * The question as the `ReactQuestion` value: whitespace (newlines included) folded to single
 * spaces, cut at a word boundary within {@link QUESTION_ATTRIBUTE_MAX_CHARACTERS} characters and
 * 1,000 UTF-8 bytes, with `…` when cut. Never splits a character.
 */
export function questionAttribute(question: string): string {
  const folded = question.replace(/\s+/g, ' ').trim();
  const characters = Array.from(folded);
  let bytes = 0;
  let end = 0;
  while (
    end < characters.length &&
    end < QUESTION_ATTRIBUTE_MAX_CHARACTERS &&
    bytes + utf8Bytes(characters[end] as string) <= QUESTION_ATTRIBUTE_MAX_BYTES
  ) {
    bytes += utf8Bytes(characters[end] as string);
    end += 1;
  }
  if (end === characters.length) return folded;
  const cut = characters.slice(0, end).join('');
  const atWord = cut.lastIndexOf(' ');
  return `${(atWord > cut.length / 2 ? cut.slice(0, atWord) : cut).trimEnd()}…`;
}

/** The model name as the `ReactModel` value (cut to 200 characters). */
export function modelAttribute(model: string): string {
  return Array.from(model).slice(0, MODEL_ATTRIBUTE_MAX_CHARACTERS).join('');
}

/** Whether the run's `ReactTokens`/`ReactIterations` are due an update after this model call: every tenth call. */
export function tokensAttributeDue(modelCalls: number): boolean {
  return modelCalls > 0 && modelCalls % TOKENS_ATTRIBUTE_EVERY_MODEL_CALLS === 0;
}

/**
 * With light bookkeeping (issue 34): whether a model call's reply is followed by an upsert of
 * tokens and model calls — every tenth call ({@link tokensAttributeDue}), unless its reply ends the
 * run, whose last upsert (with everything) follows at once: one visibility write instead of two.
 */
export function usageAttributesDue(modelCalls: number, replyEndsRun: boolean): boolean {
  return !replyEndsRun && tokensAttributeDue(modelCalls);
}
