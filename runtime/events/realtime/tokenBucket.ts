/** The events a stream (or a group of streams) may still send: `rate` a second, at most `rate` at once. */
export class TokenBucket {
  private tokens: number;
  private refilledAt = Date.now();

  constructor(
    private readonly rate: number,
    tokens = rate,
  ) {
    this.tokens = tokens;
  }

  /** The tokens there are now. */
  get available(): number {
    this.refill();
    return this.tokens;
  }

  /** Takes a token; false when there is none. */
  take(): boolean {
    this.refill();
    if (this.tokens < 1) return false;
    this.tokens -= 1;
    return true;
  }

  /**
   * Milliseconds until a tenth of a second's tokens have come (not just one): a sender held to
   * its rate then sends that many events in one write, a timer and a write per batch.
   */
  batchWait(): number {
    this.refill();
    return Math.max(1, Math.ceil(((Math.ceil(this.rate / 10) - this.tokens) * 1000) / this.rate));
  }

  /** Keeps no more than `tokens` (a stream joining a group that has spent more of its own). */
  lower(tokens: number): void {
    this.refill();
    this.tokens = Math.min(this.tokens, tokens);
  }

  /** A bucket of the same rate holding what this one holds now. */
  copy(): TokenBucket {
    return new TokenBucket(this.rate, this.available);
  }

  private refill(): void {
    const now = Date.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.refilledAt) * this.rate) / 1000);
    this.refilledAt = now;
  }
}
