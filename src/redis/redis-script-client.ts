/**
 * One Lua script run with EVALSHA over a fail-fast connection
 * (`redis-connection.ts`): the rate limiter's GCRA (`limits/redis/gcra-script.ts`),
 * the budget ledger's reservations (`budgets/redis/budget-script.ts`).
 */
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { connectRedis, type RedisConnectionOptions } from './redis-connection.js';

export interface ScriptClientOptions extends RedisConnectionOptions {
  /** The Lua script `run` runs. */
  script: string;
}

export interface ScriptClient {
  readonly redis: Redis;
  /** Runs the script on `keys`; NOSCRIPT (a Redis restarted or flushed since) loads it and runs it again. */
  run(keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown>;
  /** True while the connection is up and past its ready check. */
  isReady(): boolean;
}

export function createScriptClient(options: ScriptClientOptions): ScriptClient {
  const { script } = options;
  const scriptSha = createHash('sha1').update(script).digest('hex');
  const redis = connectRedis(options);

  async function run(keys: readonly string[], args: ReadonlyArray<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(scriptSha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      await redis.script('LOAD', script);
      return redis.evalsha(scriptSha, keys.length, ...keys, ...args);
    }
  }

  return { redis, run, isReady: () => redis.status === 'ready' };
}
