import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '../../../test/helpers/capturing-logger.js';
import { redis, requireOrSkip, requireServiceOrSkip } from '../../../test/helpers/machine-requirements.js';
import { redisServerProgram, startRedisServer, type RedisServer } from '../../../test/helpers/redis-server.js';
import { silentLogger } from '../../log/logger.js';
import { describeRateLimiterContract } from '../../../test/contracts/rate-limiter-contract.js';
import type { RateLimiter } from '../rate-limiter.js';
import { createRedisRateLimiter } from './redis-rate-limiter.js';

const url = await requireServiceOrSkip(redis, 'src/limits/redis/redis-rate-limiter.test.ts');
const program = requireOrSkip(redisServerProgram, 'src/limits/redis/redis-rate-limiter.test.ts', 'Its outage tests are skipped.');

const freshKey = () => `key_test_${randomUUID()}`;
const requestsOnly = (requestsPerMinute: number) => ({ requestsPerMinute, tokensPerMinute: null });

/** Polls until `check` holds, failing after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

describe.skipIf(url === null)('redis rate limiter, on the machine’s Redis', () => {
  describeRateLimiterContract('redis', () => createRedisRateLimiter({ url: url as string, logger: silentLogger }));

  let inspector: Redis;
  beforeAll(() => {
    inspector = new Redis(url as string);
  });
  afterAll(async () => {
    await inspector.quit();
  });

  it('several processes share one budget exactly, and no remaining count repeats between them', async () => {
    const limiters = await Promise.all([1, 2, 3].map(() => createRedisRateLimiter({ url: url as string, logger: silentLogger })));
    try {
      const key = freshKey();
      const admissions = await Promise.all(
        Array.from({ length: 30 }, (_, index) => (limiters[index % 3] as RateLimiter).admit(key, requestsOnly(10))),
      );
      const admitted = admissions.filter((admission) => admission.allowed);
      expect(admitted).toHaveLength(10);
      expect(admitted.map((admission) => admission.requests.remaining).sort((a, b) => a - b)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      // Tokens spent through one process count in every other.
      const limits = { requestsPerMinute: 100, tokensPerMinute: 10 };
      const tokenKey = freshKey();
      const [first, second, third] = limiters as [RateLimiter, RateLimiter, RateLimiter];
      await first.admit(tokenKey, limits);
      second.spendTokens(tokenKey, 10, 7);
      // The spender's next admission runs after its spend (one connection, in order); the others' after that.
      expect((await second.admit(tokenKey, limits)).tokens?.remaining).toBe(3);
      expect((await first.admit(tokenKey, limits)).tokens?.remaining).toBe(3);
      expect((await third.admit(tokenKey, limits)).tokens?.remaining).toBe(3);
    } finally {
      await Promise.all(limiters.map((limiter) => limiter.close()));
    }
  });

  it('keeps each budget under taskgate:limit: with a TTL of its backlog, so idle keys vanish', async () => {
    const limiter = await createRedisRateLimiter({ url: url as string, logger: silentLogger });
    try {
      const key = freshKey();
      await limiter.admit(key, { requestsPerMinute: 2, tokensPerMinute: 10 });
      await limiter.admit(key, { requestsPerMinute: 2, tokensPerMinute: 10 });
      limiter.spendTokens(key, 10, 15);
      // Refused (tokens), taking nothing; run after the spend on the same connection.
      expect((await limiter.admit(key, { requestsPerMinute: 2, tokensPerMinute: 10 })).refusedBy).toBe('tokens');
      const requestTtl = await inspector.pttl(`taskgate:limit:{${key}}:requests`);
      const tokenTtl = await inspector.pttl(`taskgate:limit:{${key}}:tokens`);
      // Two requests of 30 s each: full again within 60 s. 15 tokens of 6 s: 90 s.
      expect(requestTtl).toBeGreaterThan(50_000);
      expect(requestTtl).toBeLessThanOrEqual(60_000);
      expect(tokenTtl).toBeGreaterThan(80_000);
      expect(tokenTtl).toBeLessThanOrEqual(90_000);
      expect(await inspector.keys(`*${key}*`)).toHaveLength(2);
    } finally {
      await limiter.close();
    }
  });
});

describe.skipIf(program === null)('redis rate limiter, on a Redis this test owns', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(program as string);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('loads its script again when Redis has lost it (NOSCRIPT), without falling back', async () => {
    const limiter = await createRedisRateLimiter({ url: server.url, logger: silentLogger });
    const admin = new Redis(server.url);
    try {
      const key = freshKey();
      expect((await limiter.admit(key, requestsOnly(3))).requests.remaining).toBe(2);
      await admin.script('FLUSH');
      expect((await limiter.admit(key, requestsOnly(3))).requests.remaining).toBe(1);
      expect(limiter.degraded()).toBeNull();
    } finally {
      await admin.quit();
      await limiter.close();
    }
  });

  it('falls back to memory while Redis is down, says so once, and shares budgets again once it is back', async () => {
    const { logger, lines } = capturingLogger();
    const limiter = await createRedisRateLimiter({ url: server.url, logger });
    try {
      const key = freshKey();
      expect((await limiter.admit(key, requestsOnly(2))).requests.remaining).toBe(1);

      await server.kill();
      // Every admission is answered, from this process's memory: a fresh budget of the same rate.
      const during = [];
      for (let index = 0; index < 3; index++) during.push(await limiter.admit(key, requestsOnly(2)));
      expect(during.map((admission) => admission.allowed)).toEqual([true, true, false]);
      limiter.spendTokens(key, 10, 5);
      expect(limiter.degraded()).toMatch(/per process .*Redis at redis:\/\/127\.0\.0\.1:\d+.* does not answer/);

      await server.start();
      await until(() => limiter.degraded() === null, 'back on Redis');
      // The restarted Redis is empty: a fresh shared budget, kept in Redis.
      const admin = new Redis(server.url);
      try {
        expect((await limiter.admit(key, requestsOnly(2))).requests.remaining).toBe(1);
        expect(await admin.exists(`taskgate:limit:{${key}}:requests`)).toBe(1);
      } finally {
        await admin.quit();
      }
      expect(lines.filter((line) => line.msg.includes('does not answer'))).toHaveLength(1);
      expect(lines.filter((line) => line.msg.includes('answers again'))).toHaveLength(1);
    } finally {
      await limiter.close();
    }
  });

  it('a Redis that hangs costs one command timeout, then calls go to memory until it answers again', async () => {
    const limiter = await createRedisRateLimiter({ url: server.url, logger: silentLogger, commandTimeoutMs: 100 });
    try {
      const key = freshKey();
      await limiter.admit(key, requestsOnly(5));
      process.kill(server.pid as number, 'SIGSTOP');
      try {
        const first = await limiter.admit(key, requestsOnly(5));
        expect(first.allowed).toBe(true);
        expect(limiter.degraded()).not.toBeNull();
        expect((await limiter.admit(key, requestsOnly(5))).allowed).toBe(true);
      } finally {
        process.kill(server.pid as number, 'SIGCONT');
      }
      await until(() => limiter.degraded() === null, 'back on Redis');
      // Redis kept the request taken before it hung, and ran the one that timed out once it woke: a
      // command that timed out may still count (documented), never twice.
      expect((await limiter.admit(key, requestsOnly(5))).requests.remaining).toBe(2);
    } finally {
      await limiter.close();
    }
  });
});

describe('redis rate limiter, with no Redis at all', () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  beforeAll(async () => {
    // Accepts connections and never answers a byte.
    silent = createServer((socket) => {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  });
  afterAll(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it('starts on its fallback when nothing listens, answers every call, and logs the fallback once', async () => {
    const closedPort = await new Promise<number>((resolve) => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as { port: number };
        probe.close(() => resolve(port));
      });
    });
    const { logger, lines } = capturingLogger();
    const limiter = await createRedisRateLimiter({ url: `redis://:secret-password@127.0.0.1:${closedPort}`, logger });
    try {
      const key = freshKey();
      const admissions = [];
      for (let index = 0; index < 4; index++) admissions.push(await limiter.admit(key, { requestsPerMinute: 3, tokensPerMinute: 100 }));
      expect(admissions.map((admission) => admission.allowed)).toEqual([true, true, true, false]);
      expect(admissions[0]?.tokens).toMatchObject({ limit: 100, remaining: 100 });
      expect(limiter.degraded()).toContain('does not answer');
      expect(limiter.degraded()).not.toContain('secret-password');
      expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
      expect(JSON.stringify(lines)).not.toContain('secret-password');
    } finally {
      await limiter.close();
    }
  });

  it('does not hang its start or its calls on a server that never answers', async () => {
    const { port } = silent.address() as { port: number };
    const limiter = await createRedisRateLimiter({ url: `redis://127.0.0.1:${port}`, logger: silentLogger, startTimeoutMs: 200 });
    try {
      expect(limiter.degraded()).not.toBeNull();
      expect(await limiter.admit(freshKey(), requestsOnly(1))).toMatchObject({ allowed: true });
    } finally {
      await limiter.close();
    }
  });
});
