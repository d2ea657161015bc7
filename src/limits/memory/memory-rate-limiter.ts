import { admitGcra, backlogOf, spendGcra } from '../gcra.js';
import type { RateLimiter } from '../rate-limiter.js';

/**
 * One process's limits, in Maps of theoretical arrival times (request and
 * token budgets apart, so a key without a token limit never touches the
 * second). Budgets that are full again are swept once a minute so the maps
 * stay small.
 */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const requestArrivals = new Map<string, number>();
  const tokenArrivals = new Map<string, number>();
  const sweeper = setInterval(() => {
    const time = now();
    for (const arrivals of [requestArrivals, tokenArrivals]) {
      for (const [key, arrival] of arrivals) if (arrival <= time) arrivals.delete(key);
    }
  }, 60_000);
  sweeper.unref();

  return {
    admit(key, limits) {
      const time = now();
      const tokenBacklog = limits.tokensPerMinute === null ? 0 : backlogOf(tokenArrivals.get(key), time);
      const { admission, requestBacklog } = admitGcra(backlogOf(requestArrivals.get(key), time), tokenBacklog, limits);
      if (admission.allowed) requestArrivals.set(key, time + requestBacklog);
      return admission;
    },
    spendTokens(key, tokensPerMinute, tokens) {
      if (!(tokens > 0)) return;
      const time = now();
      tokenArrivals.set(key, time + spendGcra(backlogOf(tokenArrivals.get(key), time), tokensPerMinute, tokens));
    },
    degraded: () => null,
    async close() {
      clearInterval(sweeper);
      requestArrivals.clear();
      tokenArrivals.clear();
    },
  };
}
