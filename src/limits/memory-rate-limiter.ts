import { takeGcra } from './gcra.js';
import type { RateLimiter } from './rate-limiter.js';

/**
 * One process's limits, in a Map of theoretical arrival times. Keys whose
 * budget is full again are swept once a minute so the map stays small.
 */
export function createMemoryRateLimiter(now: () => number = Date.now): RateLimiter {
  const arrivals = new Map<string, number>();
  const sweeper = setInterval(() => {
    const time = now();
    for (const [key, arrival] of arrivals) if (arrival <= time) arrivals.delete(key);
  }, 60_000);
  sweeper.unref();

  return {
    take(key, requestsPerMinute) {
      const { decision, theoreticalArrival } = takeGcra(arrivals.get(key), requestsPerMinute, now());
      arrivals.set(key, theoreticalArrival);
      return decision;
    },
    async close() {
      clearInterval(sweeper);
      arrivals.clear();
    },
  };
}
