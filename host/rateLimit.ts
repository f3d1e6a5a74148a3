/**
 * Token-bucket rate limits keyed by a string (an attendee id, a network address): each key holds
 * up to `burst` tokens, refilled at `perSecond`; a call takes one token or is refused. The
 * classic token bucket (Turner, "New directions in communications", 1986; as in RFC 2697's
 * committed burst). Memory is bounded: past `maxKeys` keys, those whose bucket is full again are
 * dropped (a full bucket carries no state), and if none is, the oldest key is.
 */

/** A bucket's shape: at most `burst` calls at once, `perSecond` sustained. */
export interface RateShape {
  burst: number;
  perSecond: number;
}

/** Keyed token buckets (see the module comment). */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    readonly shape: RateShape,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = 20_000,
  ) {
    if (!(shape.burst >= 1) || !(shape.perSecond > 0)) throw new RangeError(`a rate limit needs burst >= 1 and perSecond > 0 (got ${shape.burst}, ${shape.perSecond})`);
  }

  /**
   * Takes one token of `key`'s bucket. Returns 0 when the call may go ahead, else the seconds
   * (rounded up, at least 1) until a token is back, for a `Retry-After` header.
   */
  take(key: string): number {
    const t = this.now();
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= this.maxKeys) this.prune(t);
      b = { tokens: this.shape.burst, at: t };
      this.buckets.set(key, b);
    } else {
      b.tokens = Math.min(this.shape.burst, b.tokens + ((t - b.at) / 1000) * this.shape.perSecond);
      b.at = t;
    }
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.shape.perSecond));
  }

  /** Keys held (for tests of the bound). */
  get size(): number {
    return this.buckets.size;
  }

  private prune(t: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((t - b.at) / 1000) * this.shape.perSecond >= this.shape.burst) this.buckets.delete(k);
    }
    if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value!);
  }
}
