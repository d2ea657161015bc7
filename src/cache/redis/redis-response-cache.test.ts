import { randomUUID } from 'node:crypto';
import { createServer } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturingLogger } from '../../../test/helpers/capturing-logger.js';
import { redis, requireOrSkip, requireServiceOrSkip } from '../../../test/helpers/machine-requirements.js';
import { redisServerProgram, startRedisServer, type RedisServer } from '../../../test/helpers/redis-server.js';
import { describeResponseCacheContract, fullReply } from '../../../test/contracts/response-cache-contract.js';
import { silentLogger } from '../../log/logger.js';
import { createRedisResponseCache } from './redis-response-cache.js';

const url = await requireServiceOrSkip(redis, 'src/cache/redis/redis-response-cache.test.ts');
const program = requireOrSkip(redisServerProgram, 'src/cache/redis/redis-response-cache.test.ts', 'Its outage tests are skipped.');

/** Polls until `check` holds, failing after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe.skipIf(url === null)('redis response cache, on the machine’s Redis', () => {
  // A prefix per run: nothing else's keys are read, and this run's are found by it.
  const prefix = `taskgate:test-cache:${randomUUID()}:`;
  describeResponseCacheContract('redis', () => createRedisResponseCache({ url: url as string, logger: silentLogger, keyPrefix: prefix }));

  let inspector: Redis;
  beforeAll(() => {
    inspector = new Redis(url as string);
  });
  afterAll(async () => {
    const keys = await inspector.keys(`${prefix}*`);
    if (keys.length > 0) await inspector.del(...keys);
    await inspector.quit();
  });

  it('keeps each entry as JSON text under its prefix, with its time to live in milliseconds', async () => {
    const cache = await createRedisResponseCache({ url: url as string, logger: silentLogger, keyPrefix: prefix });
    try {
      cache.set('entry', fullReply(), 90);
      expect(await cache.get('entry')).toEqual(fullReply());
      expect(JSON.parse((await inspector.get(`${prefix}entry`)) ?? 'null')).toEqual(fullReply());
      const ttl = await inspector.pttl(`${prefix}entry`);
      expect(ttl).toBeGreaterThan(85_000);
      expect(ttl).toBeLessThanOrEqual(90_000);
      expect(cache.stats()).toEqual({ entries: null, bytes: null, hits: 1, misses: 0, evictions: null });
    } finally {
      await cache.close();
    }
  });

  it('shares entries between processes that name the same Redis', async () => {
    const [writer, reader] = await Promise.all(
      [1, 2].map(() => createRedisResponseCache({ url: url as string, logger: silentLogger, keyPrefix: prefix })),
    );
    try {
      writer!.set('shared', fullReply('from the writer'), 60);
      // The writer's SET has gone out before its own GET; the reader waits for that GET to be answered.
      expect((await writer!.get('shared'))?.message.content).toBe('from the writer');
      expect((await reader!.get('shared'))?.message.content).toBe('from the writer');
    } finally {
      await Promise.all([writer!.close(), reader!.close()]);
    }
  });

  it('answers a value that is not a kept reply (another version, anything else) as a miss', async () => {
    const cache = await createRedisResponseCache({ url: url as string, logger: silentLogger, keyPrefix: prefix });
    try {
      await inspector.set(`${prefix}not-json`, 'not json', 'PX', 60_000);
      await inspector.set(`${prefix}other-shape`, JSON.stringify({ model: 'm', message: 'hello' }), 'PX', 60_000);
      expect(await cache.get('not-json')).toBeNull();
      expect(await cache.get('other-shape')).toBeNull();
      expect(cache.stats()).toMatchObject({ hits: 0, misses: 2 });
      expect(cache.degraded()).toBeNull();
    } finally {
      await cache.close();
    }
  });
});

describe('redis response cache, with no Redis at the address', () => {
  it('starts degraded, answers every lookup as a miss at once, and drops writes without throwing', async () => {
    const { logger, lines } = capturingLogger();
    const cache = await createRedisResponseCache({ url: `redis://127.0.0.1:${await closedPort()}`, logger, startTimeoutMs: 2_000 });
    try {
      expect(cache.degraded()).toMatch(/Redis at redis:\/\/127\.0\.0\.1:\d+\/? does not answer/);
      const started = performance.now();
      expect(await cache.get('key')).toBeNull();
      expect(performance.now() - started).toBeLessThan(50);
      expect(() => cache.set('key', fullReply(), 60)).not.toThrow();
      expect(() => cache.delete('key')).not.toThrow();
      expect(await cache.get('key')).toBeNull();
      expect(cache.stats()).toMatchObject({ hits: 0, misses: 2 });
      expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
    } finally {
      await cache.close();
    }
  });
});

describe.skipIf(program === null)('redis response cache, through an outage', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(program as string);
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('misses while Redis is away, says so in degraded(), and uses Redis again once it answers', async () => {
    const { logger, lines } = capturingLogger();
    const cache = await createRedisResponseCache({ url: server.url, logger, probeIntervalMs: 50 });
    try {
      cache.set('key', fullReply(), 60);
      expect(await cache.get('key')).toEqual(fullReply());
      await server.kill();
      await until(() => cache.degraded() !== null, 'degraded');
      expect(await cache.get('key')).toBeNull();
      await server.start();
      await until(() => cache.degraded() === null, 'back on Redis');
      // The restarted Redis is empty (nothing persisted): a miss, then the cache works again.
      expect(await cache.get('key')).toBeNull();
      cache.set('key', fullReply(), 60);
      expect(await cache.get('key')).toEqual(fullReply());
      const messages = lines.map((line) => line.msg);
      expect(messages.filter((message) => message.includes('does not answer'))).toHaveLength(1);
      expect(messages.filter((message) => message.includes('answers again'))).toHaveLength(1);
    } finally {
      await cache.close();
    }
  });
});
