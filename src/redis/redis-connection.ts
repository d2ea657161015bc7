/**
 * One ioredis connection set up to fail fast, for every part that keeps
 * something in Redis (the rate limiter, the budget ledger, the response
 * cache). None may make a call wait on a Redis that is away, so: no offline
 * queue (a command while disconnected fails at once), no resending of
 * commands lost with a connection, a short command timeout (a Redis that
 * hangs costs one timeout, then the caller stops asking), and reconnection
 * forever with a backoff capped at 2 s, so a Redis that comes back is in use
 * again within a few seconds.
 */
import { Redis } from 'ioredis';
import type { Logger } from '../log/logger.js';

/** What every part that keeps something in Redis is told: the rate limiter, the budget ledger, the response cache. */
export interface RedisPartOptions {
  /** `redis://` or `rediss://`, with credentials and database if any. */
  url: string;
  logger: Logger;
  /** Prefix of every key the part writes (each part has its own default). */
  keyPrefix?: string;
  /** Longest a Redis command may take before the part stops asking and degrades (ms). Default 250. */
  commandTimeoutMs?: number;
  /** How long the start waits for Redis before starting degraded (ms). Default 2000. */
  startTimeoutMs?: number;
  /** How often a degraded part tries Redis again (ms). Default 1000. */
  probeIntervalMs?: number;
}

export interface RedisConnectionOptions {
  url: string;
  /** The connection's name in Redis's CLIENT LIST: `taskgate-limits`, `taskgate-budgets`, `taskgate-cache`. */
  connectionName: string;
  /** Longest a command may take (ms). */
  commandTimeoutMs: number;
  /** Longest a TCP connect may take (ms). */
  connectTimeoutMs: number;
}

export function connectRedis(options: RedisConnectionOptions): Redis {
  return new Redis(options.url, {
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs,
    connectTimeout: options.connectTimeoutMs,
    retryStrategy: reconnectDelay,
    connectionName: options.connectionName,
  });
}

/** The reconnect delay after `attempt` failed attempts: 100 ms doubling, capped at 2 s, never giving up. */
export function reconnectDelay(attempt: number): number {
  return Math.min(2_000, 50 * 2 ** Math.min(attempt, 6));
}

/** Resolves once the connection is ready, fails, or `timeoutMs` passes: a start never hangs on Redis. */
export function waitForFirstAnswer(redis: Redis, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      redis.off('error', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
    redis.once('error', done);
  });
}

/** The URL without its password, for logs and `/readyz`. */
export function redactedUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== '') parsed.password = '***';
    return parsed.toString();
  } catch {
    return 'redis://(unparseable URL)';
  }
}
