/**
 * The RateLimiter contract: per-key request rates with continuous refill, so
 * the `x-ratelimit-*` headers mean what OpenAI's do. The in-memory limiter
 * serves one process; a Redis implementation of the same contract serves
 * several processes sharing one budget per key.
 */

export interface RateDecision {
  allowed: boolean;
  /** Requests permitted per window (the key's requests per minute). */
  limit: number;
  /** Requests that could be made right now, after this one. */
  remaining: number;
  /** Seconds until the budget is full again. */
  resetSeconds: number;
  /** When refused: whole seconds to wait before one more request is allowed (at least 1). */
  retryAfterSeconds: number;
}

export interface RateLimiter {
  /**
   * Takes one request from `key`'s budget of `requestsPerMinute`, if there is
   * one. A refused request takes nothing.
   */
  take(key: string, requestsPerMinute: number): RateDecision | Promise<RateDecision>;
  close(): Promise<void>;
}
