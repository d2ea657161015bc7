/**
 * The RateLimiter contract: per-key budgets of requests and tokens per
 * minute, with continuous refill (GCRA, `gcra.ts`), so the `x-ratelimit-*`
 * headers mean what OpenAI's do.
 *
 * Two back ends keep it, and both run one suite
 * (`test/contracts/rate-limiter-contract.ts`):
 *   - `memory/`: this process's budgets, in a Map. The embedded default.
 *   - `redis/`: budgets in Redis, shared by every process naming the same
 *     Redis, so N processes give a key one budget, not N. While Redis does not
 *     answer it keeps answering from a per-process memory limiter with the
 *     same rates (a key may then get up to N times its budget), and goes back
 *     to Redis on its own once Redis answers again.
 *
 * `create-rate-limiter.ts` picks the back end from `Settings.limits`.
 *
 * Rules every back end keeps:
 *   - A refused call takes nothing from any budget.
 *   - Concurrent admissions of one key are serialised: N admissions against a
 *     budget of N requests all succeed, the next is refused, and no two
 *     successful admissions report the same `remaining` (while no refill
 *     happens in between). With Redis this holds across processes.
 *   - Nothing throws or rejects because a back end is away: a limiter that
 *     cannot reach its store answers from memory and says so in `degraded()`.
 *   - Keys are opaque strings (taskgate passes the API key's id).
 */

/** One budget's state after an admission, as the `x-ratelimit-*-requests` or `-tokens` headers report it. */
export interface RateDecision {
  /** Whether this budget had room for the call (for tokens: at least one token left). */
  allowed: boolean;
  /** The budget per minute (`x-ratelimit-limit-*`). */
  limit: number;
  /** What could be spent right now, after this call (`x-ratelimit-remaining-*`). Never negative, even when tokens are overspent. */
  remaining: number;
  /** Seconds until the budget is full again (`x-ratelimit-reset-*`), to the millisecond. */
  resetSeconds: number;
  /** When not allowed: whole seconds until this budget has room again (at least 1); 0 when allowed. */
  retryAfterSeconds: number;
}

/** The budgets a key has: its own rates, or the configured defaults. */
export interface BudgetLimits {
  /** At least 1. */
  requestsPerMinute: number;
  /** Prompt plus completion tokens per minute, at least 1; null when the key has no token limit. */
  tokensPerMinute: number | null;
}

/** The outcome of `admit`: whether the call may go ahead, and every budget's headers either way. */
export interface Admission {
  allowed: boolean;
  /** The budget that refused the call (tokens first: a call refused for tokens takes no request); null when allowed. */
  refusedBy: 'requests' | 'tokens' | null;
  /** When refused: whole seconds until every refusing budget has room (`retry-after`, at least 1); 0 when allowed. */
  retryAfterSeconds: number;
  requests: RateDecision;
  /** Null exactly when `tokensPerMinute` was null: such a key gets no token headers. */
  tokens: RateDecision | null;
}

export interface RateLimiter {
  /**
   * Admits one call of `key`: refused when its token budget has no token left
   * (the tokens of earlier calls are spent when they end, so the budget may be
   * below zero), else when its request budget is spent; otherwise takes one
   * request. Tokens are not taken here: a call's size is known only once it
   * ends (`spendTokens`). The memory back end answers synchronously, so the
   * request path costs no extra tick; the Redis one returns a promise that
   * never rejects.
   */
  admit(key: string, limits: BudgetLimits): Admission | Promise<Admission>;

  /**
   * Spends the tokens a finished call used (prompt plus completion) from
   * `key`'s token budget, with no cap: an overspent budget delays the key's
   * next calls until it refills. Fire and forget: the caller never waits for
   * it, and it never throws.
   */
  spendTokens(key: string, tokensPerMinute: number, tokens: number): void;

  /**
   * Null while the limits are where the config put them; else why they are
   * not (Redis does not answer, so this process counts alone), for `/readyz`
   * (`degraded: ["limits"]`) and `/metrics`.
   */
  degraded(): string | null;

  /** Stops timers and closes connections; calls after it are not supported. */
  close(): Promise<void>;
}
