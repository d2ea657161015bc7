/**
 * The rate limiter the settings name: this process's memory, or Redis shared
 * by every process (`limits.backend`, or `TASKGATE_REDIS_URL`). A Redis that
 * does not answer at start does not stop the start: the limiter begins on its
 * per-process fallback and moves to Redis once it answers.
 */
import type { LimitsLocation } from '../config/load-config.js';
import type { Logger } from '../log/logger.js';
import { createMemoryRateLimiter } from './memory/memory-rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';

export async function createRateLimiter(location: LimitsLocation, options: { logger: Logger }): Promise<RateLimiter> {
  if (location.type === 'memory') return createMemoryRateLimiter();
  // Loaded only when named, as the PostgreSQL store is (open-store.ts).
  const { createRedisRateLimiter } = await import('./redis/redis-rate-limiter.js');
  return createRedisRateLimiter({ url: location.url, logger: options.logger });
}
