/**
 * Replies in Redis, shared by every process that names the same Redis: one
 * string per entry (`SET key text PX ttl`, `GET key`), under a key prefix;
 * Redis expires entries itself, and evicts by its own `maxmemory` policy.
 *
 * A cache must never make a call wait on a Redis that is away, so the
 * connection fails fast (no offline queue, no resent commands, a short
 * command timeout) and reconnects forever with a backoff capped at 2 s.
 * From the first failure (not connected, a command failed or timed out) on,
 * every lookup is a miss without a command sent, writes are dropped, and
 * `degraded()` says why; the failure is logged once. Every
 * `probeIntervalMs`, and as soon as the connection is ready again, a PING
 * probes Redis; when it answers, the cache is in use again (logged once):
 * there is no state of its own to reconcile.
 */
import { connectRedis, redactedUrl, waitForFirstAnswer, type RedisPartOptions } from '../../redis/redis-connection.js';
import { errorFields } from '../../log/logger.js';
import { parseCachedReply } from '../parse-cached-reply.js';
import type { CachedReply, CacheStats, ResponseCache } from '../response-cache.js';

/** Redis's address and timeouts (`RedisPartOptions`); keys start with `taskgate:cache:` unless `keyPrefix` says otherwise. */
export type RedisResponseCacheOptions = RedisPartOptions;

export async function createRedisResponseCache(options: RedisResponseCacheOptions): Promise<ResponseCache> {
  const { logger } = options;
  const prefix = options.keyPrefix ?? 'taskgate:cache:';
  const where = redactedUrl(options.url);
  const redis = connectRedis({
    url: options.url,
    connectionName: 'taskgate-cache',
    commandTimeoutMs: options.commandTimeoutMs ?? 250,
    connectTimeoutMs: 1_000,
  });
  /** When the cache stopped answering from Redis; null while it does. */
  let degradedSince: number | null = null;
  let lastProblem = 'not connected yet';
  let hits = 0;
  let misses = 0;
  let closed = false;

  function fail(problem: unknown): void {
    if (closed) return;
    lastProblem = problem instanceof Error ? problem.message : String(problem);
    if (degradedSince !== null) return;
    degradedSince = Date.now();
    logger.warn('response cache: Redis does not answer; every lookup is a miss until it does', { redis: where, ...errorFields(problem) });
  }

  /** Whether commands may be sent now: not while degraded (the probe ends that), nor without a connection. */
  function usable(): boolean {
    if (closed || degradedSince !== null) return false;
    if (redis.status === 'ready') return true;
    fail(new Error(`connection ${redis.status} (${lastProblem})`));
    return false;
  }

  let probing = false;
  async function probe(): Promise<void> {
    if (degradedSince === null || probing || closed || redis.status !== 'ready') return;
    probing = true;
    try {
      await redis.ping();
      if (closed || degradedSince === null) return;
      logger.info('response cache: Redis answers again; the cache is in use again', {
        redis: where,
        degraded_seconds: Math.round((Date.now() - degradedSince) / 1000),
      });
      degradedSince = null;
    } catch (error) {
      fail(error);
    } finally {
      probing = false;
    }
  }

  let started = false;
  redis.on('error', (error: unknown) => {
    // ioredis reports every failed reconnect here; the log says it once, in `fail`.
    lastProblem = error instanceof Error ? error.message : String(error);
  });
  redis.on('close', () => {
    if (started) fail(new Error(`connection lost (${lastProblem})`));
  });
  redis.on('ready', () => void probe());
  const prober = setInterval(() => void probe(), options.probeIntervalMs ?? 1_000);
  prober.unref();

  await waitForFirstAnswer(redis, options.startTimeoutMs ?? 2_000);
  started = true;
  if (redis.status === 'ready') logger.info('response cache: shared in Redis', { redis: where });
  else fail(new Error(`no connection at start (${lastProblem})`));

  function miss(): null {
    misses++;
    return null;
  }

  return {
    get(key) {
      if (!usable()) return miss();
      return redis.get(prefix + key).then(
        (text): CachedReply | null => {
          const reply = text === null ? null : parseCachedReply(text);
          if (reply === null) return miss();
          hits++;
          return reply;
        },
        (error: unknown) => {
          fail(error);
          return miss();
        },
      );
    },
    set(key, reply, ttlSeconds) {
      if (!usable()) return;
      if (!(ttlSeconds > 0) || !Number.isFinite(ttlSeconds)) {
        // Nothing is kept, and the key then holds nothing rather than an older reply (as the contract says).
        redis.del(prefix + key).catch(fail);
        return;
      }
      let text: string;
      try {
        text = JSON.stringify(reply);
      } catch {
        return;
      }
      redis.set(prefix + key, text, 'PX', Math.max(1, Math.round(ttlSeconds * 1000))).catch(fail);
    },
    delete(key) {
      if (!usable()) return;
      redis.del(prefix + key).catch(fail);
    },
    stats(): CacheStats {
      return { entries: null, bytes: null, hits, misses, evictions: null };
    },
    degraded() {
      if (degradedSince === null) return null;
      return `every lookup is a miss since ${Math.round((Date.now() - degradedSince) / 1000)} s: Redis at ${where} does not answer (${lastProblem})`;
    },
    async close() {
      closed = true;
      clearInterval(prober);
      redis.disconnect();
    },
  };
}
