/**
 * A {@link ModelLimitGate} with no limiter workflow behind it, for unit tests of what books
 * model calls: it grants every ask after `waitMs` (0: at once) and records the asks, the settled
 * tokens and the pauses it is told of.
 *
 * Only files under `test/` and `benchmarks/` may import this module.
 */
import type {
  ModelLimitAsk,
  ModelLimitGate,
  ModelLimitTicket,
} from '../../activities/model-limits/shared-model-limits';

export class FakeModelLimitGate implements ModelLimitGate {
  readonly asks: ModelLimitAsk[] = [];
  /** `[leaseId, tokens, reported prompt tokens]` per settle. */
  readonly settled: Array<[string, number, number | undefined]> = [];
  readonly pauses: number[] = [];
  constructor(private readonly waitMs: number) {}
  async reserve(ask: ModelLimitAsk): Promise<ModelLimitTicket> {
    this.asks.push(ask);
    return {
      model: ask.model,
      limit: { tokensPerMinute: 1_000 },
      leaseId: String(this.asks.length),
      tokens: ask.promptTokens + 100,
      countedPromptTokens: ask.promptTokens,
      waitMs: this.waitMs,
      ...(this.waitMs > 0 ? { reason: 'tokens' as const } : {}),
      askedMs: 1,
    };
  }
  async settle(ticket: ModelLimitTicket, tokens: number, reportedPromptTokens?: number): Promise<void> {
    this.settled.push([ticket.leaseId, tokens, reportedPromptTokens]);
  }
  async pause(_model: string, retryAfterMs: number): Promise<void> {
    this.pauses.push(retryAfterMs);
  }
}
