import { createHash } from 'node:crypto';

/**
 * Anthropic's prompt caching as the scripted model server plays it (issue 31), close enough to
 * measure what the request's `cache_control` breakpoints save: a request's prompt is its blocks in
 * the order the API caches them (tools, system, then every message's content blocks); a breakpoint
 * writes the prefix that ends at its block; a later request reads the longest written prefix that
 * ends at one of its own block boundaries no more than {@link LOOKBACK_BLOCKS} before one of its
 * breakpoints. What lies between what was read and the last breakpoint is written; the rest is
 * plain input. Tokens are characters / 4, as the server counts them elsewhere. Entries never
 * expire (a run's calls are minutes apart at most).
 */

/** How far before a breakpoint the API looks for an earlier entry, in blocks. */
export const LOOKBACK_BLOCKS = 20;

/** What one request's prompt did with the cache, in tokens. */
export interface PromptCacheUsage {
  /** All of the prompt. */
  promptTokens: number;
  /** Read from the cache. */
  cacheReadTokens: number;
  /** Written to the cache. */
  cacheWriteTokens: number;
}

interface Block {
  tokens: number;
  breakpoint: boolean;
  /** Hash of the prompt up to and including this block. */
  prefix: string;
}

export class PromptCache {
  private readonly written = new Set<string>();

  /** Reads and writes the cache for one Messages API request body. */
  use(body: {
    tools?: unknown[];
    system?: unknown;
    messages?: Array<{ role?: unknown; content?: unknown }>;
  }): PromptCacheUsage {
    const blocks = this.blocksOf(body);
    const breakpoints = blocks.flatMap((block, index) => (block.breakpoint ? [index] : []));
    const tokensThrough = (index: number) => blocks.slice(0, index + 1).reduce((sum, block) => sum + block.tokens, 0);
    let readThrough = -1;
    for (const breakpoint of breakpoints) {
      for (let index = breakpoint; index >= Math.max(0, breakpoint - LOOKBACK_BLOCKS); index -= 1) {
        if (this.written.has(blocks[index]!.prefix)) {
          readThrough = Math.max(readThrough, index);
          break;
        }
      }
    }
    const lastBreakpoint = breakpoints.at(-1) ?? -1;
    for (const breakpoint of breakpoints) this.written.add(blocks[breakpoint]!.prefix);
    const promptTokens = tokensThrough(blocks.length - 1);
    const cacheReadTokens = readThrough >= 0 ? tokensThrough(readThrough) : 0;
    const cacheWriteTokens = Math.max(0, (lastBreakpoint >= 0 ? tokensThrough(lastBreakpoint) : 0) - cacheReadTokens);
    return { promptTokens, cacheReadTokens, cacheWriteTokens };
  }

  private blocksOf(body: {
    tools?: unknown[];
    system?: unknown;
    messages?: Array<{ role?: unknown; content?: unknown }>;
  }): Block[] {
    const raw: unknown[] = [
      ...(body.tools ?? []),
      ...(typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : ((body.system as unknown[]) ?? [])),
      ...(body.messages ?? []).flatMap((message) =>
        typeof message.content === 'string'
          ? [{ type: 'text', text: message.content }]
          : ((message.content as unknown[]) ?? []),
      ),
    ];
    let hash = '';
    return raw.map((block) => {
      const { cache_control: cacheControl, ...content } = block as { cache_control?: unknown };
      const text = JSON.stringify(content);
      hash = createHash('sha256').update(hash).update(text).digest('hex');
      return { tokens: Math.ceil(text.length / 4), breakpoint: cacheControl !== undefined, prefix: hash };
    });
  }
}
