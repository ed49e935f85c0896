import { get_encoding, type Tiktoken } from 'tiktoken';

/** Counts tokens of text for budget estimates (the model's own usage is exact; this is for tool output). */
export interface TokenCounter {
  count(text: string): number;
}

let sharedEncoder: Tiktoken | undefined;

/**
 * A counter over tiktoken's o200k_base encoding, loaded once per worker process. It is an
 * estimate for models with other tokenizers, close enough for budgets.
 */
export function createTiktokenCounter(): TokenCounter {
  return {
    count(text: string): number {
      sharedEncoder ??= get_encoding('o200k_base');
      return sharedEncoder.encode_ordinary(text).length;
    },
  };
}

/** A cheap estimate (4 characters a token), for tests and when tiktoken is not wanted. */
export const characterEstimateCounter: TokenCounter = { count: (text) => Math.ceil(text.length / 4) };
