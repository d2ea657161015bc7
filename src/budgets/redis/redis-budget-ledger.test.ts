import { randomUUID } from 'node:crypto';
import { createServer, type Server, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { describeBudgetLedgerContract, testCap } from '../../../test/contracts/budget-ledger-contract.js';
import { capturingLogger } from '../../../test/helpers/capturing-logger.js';
import { redis, requireOrSkip, requireServiceOrSkip } from '../../../test/helpers/machine-requirements.js';
import { redisServerProgram, startRedisServer, type RedisServer } from '../../../test/helpers/redis-server.js';
import { startTcpProxy, type TcpProxy } from '../../../test/helpers/tcp-proxy.js';
import { silentLogger } from '../../log/logger.js';
import type { BudgetLedger, ReserveResult, Ticket } from '../budget-ledger.js';
import { createRedisBudgetLedger, type RedisBudgetLedgerOptions } from './redis-budget-ledger.js';

const file = 'src/budgets/redis/redis-budget-ledger.test.ts';
const url = await requireServiceOrSkip(redis, file);
const program = requireOrSkip(redisServerProgram, file, 'Its tests on a Redis of its own are skipped.');

/** Keys of this run only, so parallel runs on the machine's Redis never meet (and are deleted after). */
const keyPrefix = `taskgate:budget:test-${randomUUID()}:`;

/** Polls until `check` holds, failing after `timeoutMs`. */
async function until(check: () => boolean, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`still not ${what} after ${timeoutMs} ms`);
    await sleep(20);
  }
}

function ticketOf(result: ReserveResult): Ticket {
  if (!result.reserved) throw new Error(`expected a reservation: ${JSON.stringify(result)}`);
  return result.ticket;
}

/** A port nothing listens on. */
async function closedPort(): Promise<number> {
  return new Promise<number>((resolve) => {
    const probe = createServer();
    probe.listen(0, '127.0.0.1', () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

describe.skipIf(url === null)('redis budget ledger, on the machine’s Redis', () => {
  const open = (options: Partial<RedisBudgetLedgerOptions> = {}) =>
    createRedisBudgetLedger({ url: url as string, logger: silentLogger, onOutage: 'open', keyPrefix, ...options });

  describeBudgetLedgerContract('redis', () => open());

  let inspector: Redis;
  beforeAll(() => {
    inspector = new Redis(url as string);
  });
  afterAll(async () => {
    const keys = await inspector.keys(`${keyPrefix}*`);
    if (keys.length > 0) await inspector.del(...keys);
    await inspector.quit();
  });

  it('keeps each cap under its key, as whole micro-dollars, until a day after its period ends', async () => {
    const ledger = await open();
    try {
      const cap = testCap(10_000_000);
      ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 1_234_567 }));
      expect(await inspector.get(`${keyPrefix}${cap.id}`)).toBe('1234567');
      const expectedTtl = cap.resetsAt + 24 * 60 * 60 * 1000 - Date.now();
      const ttl = await inspector.pttl(`${keyPrefix}${cap.id}`);
      expect(ttl).toBeGreaterThan(expectedTtl - 5_000);
      expect(ttl).toBeLessThanOrEqual(expectedTtl);
    } finally {
      await ledger.close();
    }
  });

  it('several ledgers (as processes would have) share one cap exactly under 200 concurrent reservations', async () => {
    const ledgers = await Promise.all([1, 2, 3].map(() => open()));
    try {
      const cap = testCap(50_000);
      const results = await Promise.all(
        Array.from({ length: 200 }, (_, index) => (ledgers[index % 3] as BudgetLedger).reserve({ caps: [cap], amountMicros: 700 })),
      );
      expect(results.filter((result) => result.reserved)).toHaveLength(71);
      expect(await inspector.get(`${keyPrefix}${cap.id}`)).toBe(String(71 * 700));
    } finally {
      await Promise.all(ledgers.map((ledger) => ledger.close()));
    }
  });

  describe('while Redis is cut off (a proxy in between)', () => {
    let proxy: TcpProxy;
    beforeAll(async () => {
      const { hostname, port } = new URL(url as string);
      proxy = await startTcpProxy({ host: hostname, port: Number(port || 6379) });
    });
    afterAll(async () => {
      await proxy.close();
    });
    const throughProxy = (onOutage: 'open' | 'closed', logger = silentLogger) => {
      const proxied = new URL(url as string);
      proxied.hostname = '127.0.0.1';
      proxied.port = String(proxy.port);
      return createRedisBudgetLedger({ url: proxied.toString(), logger, onOutage, keyPrefix, probeIntervalMs: 50 });
    };

    it("'open': goes on from the spend it last knew, then adds what it spent meanwhile to Redis once it answers", async () => {
      const { logger, lines } = capturingLogger();
      const ledger = await throughProxy('open', logger);
      const other = await open();
      try {
        const cap = testCap(10_000);
        const key = `${keyPrefix}${cap.id}`;
        const before = ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 4_000 }));
        // Another process spends too; this one does not see it until Redis tells it.
        ticketOf(await other.reserve({ caps: [cap], amountMicros: 1_000 }));

        await proxy.cut();
        await until(() => ledger.degraded() !== null, 'degraded');
        expect(ledger.degraded()).toMatch(/per process .*Redis at redis:\/\/127\.0\.0\.1:\d+.* does not answer/);
        // From the 4000 it knew: 3000 fits, 3001 more would not.
        const during = ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 3_000 }));
        expect(await ledger.reserve({ caps: [cap], amountMicros: 3_001 })).toEqual({ reserved: false, refusedBy: cap, spentMicros: 7_000 });
        const late = ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 500 }));
        ledger.settle(during, 2_500);
        ledger.settle(before, 3_000);
        expect((await ledger.spent([cap.id])).get(cap.id)).toBe(6_000);
        // Meanwhile Redis goes on counting the others.
        ticketOf(await other.reserve({ caps: [cap], amountMicros: 1_000 }));

        await proxy.restore();
        await until(() => ledger.degraded() === null, 'back on Redis');
        // Redis: 4000 + 1000 + 1000 from before and the other process, + 2500 + 500 − 1000 spent here meanwhile.
        expect(await inspector.get(key)).toBe('8000');
        // A ticket reserved while away settles on Redis once it is back.
        ledger.settle(late, 100);
        expect((await ledger.spent([cap.id])).get(cap.id)).toBe(7_600);
        expect(await inspector.get(key)).toBe('7600');
        expect(lines.filter((line) => line.msg.includes('does not answer'))).toHaveLength(1);
        expect(lines.filter((line) => line.msg.includes('answers again'))).toHaveLength(1);
      } finally {
        await ledger.close();
        await other.close();
      }
    });

    it("'closed': refuses reservations that name a cap as unavailable, keeps settlements, and takes reservations again once Redis answers", async () => {
      const ledger = await throughProxy('closed');
      try {
        const cap = testCap(10_000);
        const ticket = ticketOf(await ledger.reserve({ caps: [cap], amountMicros: 1_000 }));

        await proxy.cut();
        await until(() => ledger.degraded() !== null, 'degraded');
        expect(ledger.degraded()).toMatch(/refused .*budgets\.on_outage: closed.*does not answer/);
        const started = Date.now();
        expect(await ledger.reserve({ caps: [cap], amountMicros: 1 })).toEqual({ reserved: false, unavailable: true });
        expect(Date.now() - started).toBeLessThan(100);
        // A call no budget covers is not stopped by an outage of budgets.
        expect(await ledger.reserve({ caps: [], amountMicros: 5 })).toMatchObject({ reserved: true });
        ledger.settle(ticket, 400);
        expect((await ledger.spent([cap.id])).get(cap.id)).toBe(400);

        await proxy.restore();
        await until(() => ledger.degraded() === null, 'back on Redis');
        expect(await inspector.get(`${keyPrefix}${cap.id}`)).toBe('400');
        expect(await ledger.reserve({ caps: [cap], amountMicros: 9_600 })).toMatchObject({ reserved: true });
      } finally {
        await ledger.close();
      }
    });
  });
});

describe.skipIf(program === null)('redis budget ledger, on a Redis this test owns', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedisServer(program as string);
  });
  afterAll(async () => {
    await server.stop();
  });

  it('loads its script again when Redis has lost it (NOSCRIPT), without degrading', async () => {
    const ledger = await createRedisBudgetLedger({ url: server.url, logger: silentLogger, onOutage: 'closed' });
    const admin = new Redis(server.url);
    try {
      const cap = testCap(1_000);
      await ledger.reserve({ caps: [cap], amountMicros: 600 });
      await admin.script('FLUSH');
      expect(await ledger.reserve({ caps: [cap], amountMicros: 600 })).toMatchObject({ reserved: false, spentMicros: 600 });
      expect(ledger.degraded()).toBeNull();
    } finally {
      await admin.quit();
      await ledger.close();
    }
  });

  it('gives a Redis that restarted empty the spend made while it was down', async () => {
    const ledger = await createRedisBudgetLedger({ url: server.url, logger: silentLogger, onOutage: 'open', probeIntervalMs: 50 });
    try {
      const cap = testCap(10_000);
      await ledger.reserve({ caps: [cap], amountMicros: 2_000 });
      await server.kill();
      expect(await ledger.reserve({ caps: [cap], amountMicros: 3_000 })).toMatchObject({ reserved: true });
      expect(ledger.degraded()).not.toBeNull();
      await server.start();
      await until(() => ledger.degraded() === null, 'back on Redis');
      // The 2000 from before died with Redis; the 3000 from the outage did not.
      const admin = new Redis(server.url);
      try {
        expect(await admin.get(`taskgate:budget:${cap.id}`)).toBe('3000');
        expect(await admin.pttl(`taskgate:budget:${cap.id}`)).toBeGreaterThan(24 * 60 * 60 * 1000);
      } finally {
        await admin.quit();
      }
    } finally {
      await ledger.close();
    }
  });

  it('a Redis that hangs costs one command timeout, then calls are answered locally until it answers again', async () => {
    const ledger = await createRedisBudgetLedger({
      url: server.url,
      logger: silentLogger,
      onOutage: 'open',
      commandTimeoutMs: 100,
      probeIntervalMs: 50,
    });
    try {
      const cap = testCap(10_000);
      await ledger.reserve({ caps: [cap], amountMicros: 1_000 });
      process.kill(server.pid as number, 'SIGSTOP');
      try {
        expect(await ledger.reserve({ caps: [cap], amountMicros: 1_000 })).toMatchObject({ reserved: true });
        expect(ledger.degraded()).not.toBeNull();
        const started = Date.now();
        expect(await ledger.reserve({ caps: [cap], amountMicros: 1_000 })).toMatchObject({ reserved: true });
        expect(Date.now() - started).toBeLessThan(50);
      } finally {
        process.kill(server.pid as number, 'SIGCONT');
      }
      await until(() => ledger.degraded() === null, 'back on Redis');
      // Redis ran the reservation that timed out once it woke, and was given the two made locally: a command that
      // timed out counts twice at worst (more reserved, never less).
      const spent = (await ledger.spent([cap.id])).get(cap.id);
      expect([3_000, 4_000]).toContain(spent);
    } finally {
      await ledger.close();
    }
  });
});

describe('redis budget ledger, with no Redis at all', () => {
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

  it("starts degraded when nothing listens: 'open' enforces caps in this process, 'closed' refuses; logged once, no password", async () => {
    const port = await closedPort();
    const { logger, lines } = capturingLogger();
    const opened = await createRedisBudgetLedger({ url: `redis://:secret-password@127.0.0.1:${port}`, logger, onOutage: 'open' });
    const closed = await createRedisBudgetLedger({
      url: `redis://:secret-password@127.0.0.1:${port}`,
      logger: silentLogger,
      onOutage: 'closed',
    });
    try {
      const cap = testCap(1_000);
      const results = [];
      for (let index = 0; index < 3; index++) results.push(await opened.reserve({ caps: [cap], amountMicros: 400 }));
      expect(results.map((result) => result.reserved)).toEqual([true, true, false]);
      expect(await closed.reserve({ caps: [cap], amountMicros: 400 })).toEqual({ reserved: false, unavailable: true });
      expect(opened.degraded()).toContain('does not answer');
      expect(opened.degraded()).not.toContain('secret-password');
      expect(lines.filter((line) => line.level === 'warn')).toHaveLength(1);
      expect(JSON.stringify(lines)).not.toContain('secret-password');
    } finally {
      await opened.close();
      await closed.close();
    }
  });

  it('does not hang its start or its calls on a server that never answers', async () => {
    const { port } = silent.address() as { port: number };
    const ledger = await createRedisBudgetLedger({
      url: `redis://127.0.0.1:${port}`,
      logger: silentLogger,
      onOutage: 'open',
      startTimeoutMs: 200,
    });
    try {
      expect(ledger.degraded()).not.toBeNull();
      expect(await ledger.reserve({ caps: [testCap(10)], amountMicros: 1 })).toMatchObject({ reserved: true });
    } finally {
      await ledger.close();
    }
  });
});
