/**
 * One ioredis connection set up to fail fast, and the GCRA script run over
 * it with EVALSHA. A limiter must never make a call wait on a Redis that is
 * away, so: no offline queue (a command while disconnected fails at once),
 * no resending of commands lost with a connection, a short command timeout
 * (a Redis that hangs costs one timeout, then the limiter stops asking), and
 * reconnection forever with a backoff capped at 2 s, so a Redis that comes
 * back is in use again within a few seconds.
 */
import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { gcraScript } from './gcra-script.js';

export interface ScriptClientOptions {
  url: string;
  /** Longest a command may take (ms). */
  commandTimeoutMs: number;
  /** Longest a TCP connect may take (ms). */
  connectTimeoutMs: number;
}

export interface ScriptClient {
  readonly redis: Redis;
  /** Runs the GCRA script on `keys`; NOSCRIPT (a Redis restarted or flushed since) loads it and runs it again. */
  run(keys: readonly [string, string], args: ReadonlyArray<string | number>): Promise<unknown>;
  /** True while the connection is up and past its ready check. */
  isReady(): boolean;
}

const scriptSha = createHash('sha1').update(gcraScript).digest('hex');

/** The reconnect delay after `attempt` failed attempts: 100 ms doubling, capped at 2 s, never giving up. */
export function reconnectDelay(attempt: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(attempt, 6));
}

export function createScriptClient(options: ScriptClientOptions): ScriptClient {
  const redis = new Redis(options.url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs,
    retryStrategy: reconnectDelay,
    connectionName: 'taskgate-limits',
  });

  async function run(keys: readonly [string, string], args: ReadonlyArray<string | number>): Promise<unknown> {
    try {
      return await redis.evalsha(scriptSha, 2, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      await redis.script('LOAD', gcraScript);
      return redis.evalsha(scriptSha, 2, ...keys, ...args);
    }
  }

  return { redis, run, isReady: () => redis.status === 'ready' };
}
