// In-process token-bucket rate limiting. Each key (an address, an email, a token id) has a bucket of
// `capacity` requests that refills evenly over `windowMs`. Memory stays bounded: beyond `maxKeys`
// the least recently used buckets are forgotten (a forgotten bucket is simply a full one).

export interface RateLimiterOptions {
  capacity: number;
  windowMs: number;
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();
  private readonly refillPerMs: number;
  private readonly maxKeys: number;

  constructor(private readonly options: RateLimiterOptions) {
    this.refillPerMs = options.capacity / options.windowMs;
    this.maxKeys = options.maxKeys ?? 50_000;
  }

  /** Seconds until `key` may make one more request; 0 when it may now. */
  retryAfterSeconds(key: string, nowMs = Date.now()): number {
    const tokens = this.current(key, nowMs);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.refillPerMs / 1000));
  }

  /** Takes one request from `key`'s bucket: 0 when allowed, else the seconds to wait. */
  take(key: string, nowMs = Date.now()): number {
    const wait = this.retryAfterSeconds(key, nowMs);
    if (wait === 0) this.store(key, this.current(key, nowMs) - 1, nowMs);
    return wait;
  }

  /** Gives back one request taken from `key`'s bucket (one that turned out not to count). */
  giveBack(key: string, nowMs = Date.now()): void {
    if (this.buckets.has(key)) this.store(key, Math.min(this.options.capacity, this.current(key, nowMs) + 1), nowMs);
  }

  /** Forgets `key` (e.g. an email after a successful sign-in). */
  reset(key: string): void {
    this.buckets.delete(key);
  }

  /** How many keys are held (for tests of the memory bound). */
  get size(): number {
    return this.buckets.size;
  }

  private current(key: string, nowMs: number): number {
    const bucket = this.buckets.get(key);
    if (!bucket) return this.options.capacity;
    return Math.min(this.options.capacity, bucket.tokens + (nowMs - bucket.updatedMs) * this.refillPerMs);
  }

  private store(key: string, tokens: number, nowMs: number): void {
    // Re-inserting moves the key to the end, so the Map's first key is the least recently used.
    this.buckets.delete(key);
    this.buckets.set(key, { tokens, updatedMs: nowMs });
    while (this.buckets.size > this.maxKeys) {
      this.buckets.delete(this.buckets.keys().next().value as string);
    }
  }
}
