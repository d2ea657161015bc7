/**
 * Budgets in Redis, shared by every process that names the same Redis: one
 * atomic script per admission (`gcra-script.ts`), time from Redis.
 *
 * When Redis is away (unreachable, restarting, hanging) the limiter falls
 * back to a memory limiter with the same rates, so calls are still answered
 * and limited, per process. It notices at the first failed command or lost
 * connection, logs it once, and from then on asks only memory: no call waits
 * on a dead Redis. Every `probeIntervalMs`, and as soon as the connection is
 * ready again, one probe runs the script; when it succeeds the limiter is back
 * on Redis (logged once). Budgets spent in memory meanwhile are not carried
 * over: Redis's own state, or a fresh budget if Redis lost it, applies.
 */
import { errorFields } from '../../log/logger.js';
import { admissionOf } from '../gcra.js';
import { createMemoryRateLimiter } from '../memory/memory-rate-limiter.js';
import type { Admission, BudgetLimits, RateLimiter } from '../rate-limiter.js';
import { gcraScript } from './gcra-script.js';
import { redactedUrl, waitForFirstAnswer, type RedisPartOptions } from '../../redis/redis-connection.js';
import { createScriptClient } from '../../redis/redis-script-client.js';

/** Redis's address and timeouts (`RedisPartOptions`); keys start with `taskgate:limit:` unless `keyPrefix` says otherwise. */
export type RedisRateLimiterOptions = RedisPartOptions;

export async function createRedisRateLimiter(options: RedisRateLimiterOptions): Promise<RateLimiter> {
  const { logger } = options;
  const prefix = options.keyPrefix ?? 'taskgate:limit:';
  const where = redactedUrl(options.url);
  const client = createScriptClient({
    url: options.url,
    script: gcraScript,
    connectionName: 'taskgate-limits',
    commandTimeoutMs: options.commandTimeoutMs ?? 250,
    connectTimeoutMs: 1_000,
  });
  const fallback = createMemoryRateLimiter();
  /** When the limiter fell back to memory; null while it uses Redis. */
  let degradedSince: number | null = null;
  let lastProblem = 'not connected yet';
  let probing = false;
  let started = false;
  let closed = false;

  // The hash tag keeps a key's two budgets in one slot, as one script needs under Redis Cluster.
  const keysOf = (key: string): [string, string] => [`${prefix}{${key}}:requests`, `${prefix}{${key}}:tokens`];

  function fallBack(problem: unknown): void {
    if (closed) return;
    lastProblem = problem instanceof Error ? problem.message : String(problem);
    if (degradedSince !== null) return;
    degradedSince = Date.now();
    logger.warn(
      'rate limits: Redis does not answer; each process now limits on its own (a key may get up to one budget per process) until it does',
      {
        redis: where,
        ...errorFields(problem),
      },
    );
  }

  async function probe(): Promise<void> {
    if (degradedSince === null || probing || closed || !client.isReady()) return;
    probing = true;
    try {
      parseAdmission(await client.run(keysOf('probe'), ['admit', 1_000_000_000, 0]), {
        requestsPerMinute: 1_000_000_000,
        tokensPerMinute: null,
      });
      if (closed || degradedSince === null) return;
      logger.info('rate limits: Redis answers again; limits are shared again', {
        redis: where,
        degraded_seconds: Math.round((Date.now() - degradedSince) / 1000),
      });
      degradedSince = null;
    } catch (error) {
      fallBack(error);
    } finally {
      probing = false;
    }
  }

  client.redis.on('error', (error: unknown) => {
    // ioredis reports every failed reconnect here; the log says it once, in `fallBack`.
    lastProblem = error instanceof Error ? error.message : String(error);
  });
  client.redis.on('close', () => {
    if (started) fallBack(new Error(`connection lost (${lastProblem})`));
  });
  client.redis.on('ready', () => void probe());
  const prober = setInterval(() => void probe(), options.probeIntervalMs ?? 1_000);
  prober.unref();

  await waitForFirstAnswer(client.redis, options.startTimeoutMs ?? 2_000);
  started = true;
  if (client.isReady()) logger.info('rate limits: shared in Redis', { redis: where });
  else fallBack(new Error(`no connection at start (${lastProblem})`));

  return {
    admit(key, limits) {
      if (degradedSince !== null || !client.isReady()) {
        if (degradedSince === null) fallBack(new Error(`connection ${client.redis.status}`));
        return fallback.admit(key, limits);
      }
      return client.run(keysOf(key), ['admit', limits.requestsPerMinute, limits.tokensPerMinute ?? 0]).then(
        (reply) => parseAdmission(reply, limits),
        (error: unknown) => {
          fallBack(error);
          return fallback.admit(key, limits);
        },
      );
    },
    spendTokens(key, tokensPerMinute, tokens) {
      if (!(tokens > 0)) return;
      if (degradedSince !== null || !client.isReady()) return fallback.spendTokens(key, tokensPerMinute, tokens);
      client.run(keysOf(key), ['spend', 1, tokensPerMinute, tokens]).catch((error: unknown) => {
        fallBack(error);
        fallback.spendTokens(key, tokensPerMinute, tokens);
      });
    },
    degraded() {
      if (degradedSince === null) return null;
      return `limits are per process since ${Math.round((Date.now() - degradedSince) / 1000)} s: Redis at ${where} does not answer (${lastProblem})`;
    },
    async close() {
      closed = true;
      clearInterval(prober);
      client.redis.disconnect();
      await fallback.close();
    },
  };
}

/** The script's `{ taken, request backlog, token backlog }` as an admission; anything else is an error (and a fallback). */
function parseAdmission(reply: unknown, limits: BudgetLimits): Admission {
  if (!Array.isArray(reply) || reply.length !== 3) throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  const [taken, requestBacklog, tokenBacklog] = [reply[0], Number(reply[1]), Number(reply[2])];
  if ((taken !== 0 && taken !== 1) || !Number.isFinite(requestBacklog) || !Number.isFinite(tokenBacklog)) {
    throw new Error(`unexpected reply from the rate-limit script: ${JSON.stringify(reply)}`);
  }
  return admissionOf(limits, taken === 1, requestBacklog, tokenBacklog);
}
