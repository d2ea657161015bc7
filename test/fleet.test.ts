/**
 * Three taskgate processes on one PostgreSQL database and one Redis behave as
 * one service, as a user meets them behind a load balancer: shared limits,
 * traces readable through any process, a pin served everywhere within a
 * second, one router leader that another process replaces when it is killed,
 * and a Redis or PostgreSQL that goes away degrading the service, never
 * stopping it.
 *
 * Each process is the built CLI (`taskgate serve`) on its own port. Redis is a
 * `redis-server` this file owns (it is killed mid-run); the database is one
 * this file creates and drops. The engine is the arithmetic engine on
 * loopback: `big` and `small` answer sums, `small` for a tenth of the price.
 */
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startArithmeticEngine, type ArithmeticEngine } from './helpers/arithmetic-engine.js';
import { postgres, requireOrSkip, requireServiceOrSkip } from './helpers/machine-requirements.js';
import { postgresDatabases } from './helpers/postgres-schemas.js';
import { redisServerProgram, startRedisServer, type RedisServer } from './helpers/redis-server.js';
import { startTcpProxy, type TcpProxy } from './helpers/tcp-proxy.js';
import { serveTaskgate, type ServingProcess } from './helpers/taskgate-process.js';
import { temporaryDirectory } from './helpers/temporary-directory.js';

const file = 'test/fleet.test.ts';
const databaseUrl = await requireServiceOrSkip(postgres, file);
const redisProgram = databaseUrl === null ? null : requireOrSkip(redisServerProgram, file);

const ADMIN_KEY = 'tg-fleet-test-admin-key-0123456789';

interface Reply {
  status: number;
  headers: Headers;
  json: Record<string, unknown>;
}

interface Member {
  name: string;
  process: ServingProcess;
  baseUrl: string;
  origin: string;
}

describe.skipIf(databaseUrl === null || redisProgram === null)('a fleet of three processes on one PostgreSQL and one Redis', () => {
  const databases = postgresDatabases(databaseUrl as string, 'tg_fleet');
  let directory: string;
  let engine: ArithmeticEngine;
  let redis: RedisServer;
  let proxy: TcpProxy;
  let members: Member[] = [];
  let question = 0;

  async function send(
    member: Member,
    method: string,
    path: string,
    body?: unknown,
    key = ADMIN_KEY,
    headers: Record<string, string> = {},
  ): Promise<Reply> {
    const response = await fetch(`${member.baseUrl}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, headers: response.headers, json: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>) };
  }

  /** One call asking `model` for a sum, in `workload`. */
  function ask(member: Member, workload: string, options: { key?: string; model?: string } = {}): Promise<Reply> {
    question += 1;
    const body = {
      model: options.model ?? 'big',
      messages: [{ role: 'user', content: `What is ${question % 97} + ${(question * 7) % 89}?` }],
    };
    return send(member, 'POST', '/chat/completions', body, options.key, { 'x-taskgate-workload': workload });
  }

  async function readiness(
    member: Member,
  ): Promise<{ status: number; body: { router: string; degraded: string[]; store: string; limits: string } }> {
    const response = await fetch(`${member.origin}/readyz`);
    return {
      status: response.status,
      body: (await response.json()) as { router: string; degraded: string[]; store: string; limits: string },
    };
  }

  async function leaders(from: readonly Member[]): Promise<Member[]> {
    const states = await Promise.all(from.map(async (member) => ((await readiness(member)).body.router === 'leader' ? member : null)));
    return states.filter((member): member is Member => member !== null);
  }

  async function createKey(member: Member, body: Record<string, unknown>): Promise<string> {
    const reply = await send(member, 'POST', '/keys', body);
    expect(reply.status).toBe(201);
    return reply.json.key as string;
  }

  const alive = () => members.filter((member) => member.process.child.exitCode === null && member.process.child.signalCode === null);

  beforeAll(async () => {
    directory = temporaryDirectory('taskgate-fleet-');
    const url = new URL(await databases.fresh());
    redis = await startRedisServer(redisProgram as string);
    engine = await startArithmeticEngine({ big: 1, small: 1 }, 5);
    // The third process reaches PostgreSQL through a proxy the test can cut.
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    const proxied = new URL(url);
    proxied.host = `127.0.0.1:${proxy.port}`;
    const config = join(directory, 'taskgate.yaml');
    writeFileSync(
      config,
      `engines:\n  - { id: arithmetic, type: openai, base_url: "${engine.baseUrl}" }\n` +
        `models:\n` +
        `  - { id: big, served_by: [{ engine: arithmetic, name: big }], price: { input: 10, output: 10 }, context_window: 8192 }\n` +
        `  - { id: small, served_by: [{ engine: arithmetic, name: small }], price: { input: 1, output: 1 }, context_window: 8192 }\n` +
        `limits: { requests_per_minute: 1000000 }\n`,
    );
    // Started at once on an empty database: they migrate and register the admin key concurrently.
    members = await Promise.all(
      ['first', 'second', 'third'].map(async (name, index) => {
        const serving = await serveTaskgate(['--config', config, '--data-dir', join(directory, name)], {
          TASKGATE_DATABASE_URL: (index === 2 ? proxied : url).toString(),
          TASKGATE_REDIS_URL: redis.url,
          TASKGATE_ADMIN_KEY: ADMIN_KEY,
        });
        return { name, process: serving, baseUrl: serving.baseUrl, origin: new URL(serving.baseUrl).origin };
      }),
    );
  }, 60_000);

  afterAll(async () => {
    for (const member of members) member.process.child.kill('SIGKILL');
    await Promise.all(members.map((member) => member.process.exited));
    await proxy?.close();
    await redis?.stop();
    await engine?.close();
  }, 30_000);

  it('has exactly one router leader, shown by /readyz and /metrics', async () => {
    await vi.waitFor(async () => expect(await leaders(members)).toHaveLength(1), { timeout: 20_000, interval: 200 });
    const gauges = await Promise.all(
      members.map(async (member) => {
        const text = await (await fetch(`${member.origin}/metrics`, { headers: { authorization: `Bearer ${ADMIN_KEY}` } })).text();
        return Number(/^taskgate_router_leader (\d)$/m.exec(text)?.[1]);
      }),
    );
    expect(gauges.sort()).toEqual([0, 0, 1]);
  });

  it('a key limited to N requests a minute gets exactly N successes across the three, with retry-after on every 429 and no remaining count twice', async () => {
    const limit = 10;
    const key = await createKey(members[0] as Member, { requests_per_minute: limit });
    const replies = await Promise.all(Array.from({ length: 30 }, (_, index) => ask(members[index % 3] as Member, 'limited', { key })));
    const allowed = replies.filter((reply) => reply.status === 200);
    const refused = replies.filter((reply) => reply.status === 429);
    expect(allowed).toHaveLength(limit);
    expect(refused).toHaveLength(30 - limit);
    for (const reply of refused) expect(Number(reply.headers.get('retry-after'))).toBeGreaterThan(0);
    const remaining = allowed.map((reply) => reply.headers.get('x-ratelimit-remaining-requests'));
    expect(new Set(remaining).size).toBe(limit);
    for (const reply of replies) expect(reply.headers.get('x-ratelimit-limit-requests')).toBe(String(limit));
  });

  it('every call through any process leaves exactly one trace, readable through every process', async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, (_, index) => ask(members[index % 3] as Member, 'traced')));
    const ids = replies.map((reply) => {
      expect(reply.status).toBe(200);
      return reply.headers.get('x-request-id') as string;
    });
    for (const member of members) {
      await vi.waitFor(
        async () => {
          const listed = await send(member, 'GET', '/projects/default/workloads/traced/traces?limit=100');
          expect((listed.json.data as Array<{ request_id: string }>).map((trace) => trace.request_id).sort()).toEqual([...ids].sort());
        },
        { timeout: 10_000, interval: 100 },
      );
      for (const id of ids) expect((await send(member, 'GET', `/traces/${id}`)).json).toMatchObject({ request_id: id, workload: 'traced' });
    }
  });

  it('a pin made through one process is served by the other two within a second', async () => {
    expect((await ask(members[1] as Member, 'pinned')).json.model).toBe('big');
    const pinned = await send(members[0] as Member, 'PUT', '/projects/default/workloads/pinned/routes/big/pin', { model: 'small' });
    expect(pinned.status).toBe(200);
    await Promise.all(
      [members[1], members[2]].map((member) =>
        vi.waitFor(async () => expect((await ask(member as Member, 'pinned')).json.model).toBe('small'), { timeout: 1_000, interval: 20 }),
      ),
    );
  });

  it('Redis stopped mid-run: every call is answered, /readyz stays 200 with limits degraded, and shared limits come back with it', async () => {
    await redis.kill();
    const during = await Promise.all(Array.from({ length: 30 }, (_, index) => ask(members[index % 3] as Member, 'redis-away')));
    expect(during.map((reply) => reply.status)).toEqual(during.map(() => 200));
    for (const member of members) {
      const { status, body } = await readiness(member);
      expect(status).toBe(200);
      expect(body.degraded).toContain('limits');
    }

    await redis.start();
    // Back on Redis within 10 s of its return, calls or no calls.
    for (const member of members) {
      await vi.waitFor(async () => expect((await readiness(member)).body.degraded).not.toContain('limits'), {
        timeout: 12_000,
        interval: 200,
      });
    }
    const key = await createKey(members[1] as Member, { requests_per_minute: 4 });
    const replies = await Promise.all(Array.from({ length: 12 }, (_, index) => ask(members[index % 3] as Member, 'redis-back', { key })));
    expect(replies.filter((reply) => reply.status === 200)).toHaveLength(4);
    expect(replies.filter((reply) => reply.status >= 500)).toEqual([]);
  }, 60_000);

  it('PostgreSQL going away from one process: it keeps answering known keys, /readyz lists the store as degraded, and its traces are written when it returns', async () => {
    const cutOff = members[2] as Member;
    await proxy.cut();
    const replies: Reply[] = [];
    for (let call = 0; call < 8; call++) replies.push(await ask(cutOff, 'store-away'));
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 200));
    const { status, body } = await readiness(cutOff);
    expect(status).toBe(200);
    expect(body.degraded).toContain('store');

    await proxy.restore();
    await vi.waitFor(async () => expect((await readiness(cutOff)).body.degraded).not.toContain('store'), {
      timeout: 20_000,
      interval: 200,
    });
    const ids = replies.map((reply) => reply.headers.get('x-request-id') as string);
    await vi.waitFor(
      async () => {
        const listed = await send(members[0] as Member, 'GET', '/projects/default/workloads/store-away/traces?limit=100');
        expect((listed.json.data as Array<{ request_id: string }>).map((trace) => trace.request_id).sort()).toEqual([...ids].sort());
      },
      { timeout: 20_000, interval: 200 },
    );
  }, 60_000);

  it('killing the leader hands the router to another process within 30 s, and no evidence or stored trace is lost', async () => {
    const contract = { sample_rate: 1, pass_rate: 0.8, min_samples: 200 };
    expect((await send(members[0] as Member, 'PUT', '/projects/default/workloads/evidence/eval', contract)).status).toBe(200);
    const smallEvidence = async (member: Member) => {
      const view = await send(member, 'GET', '/projects/default/workloads/evidence/routes');
      const route = (view.json.routes as Array<{ requested_model: string; candidates: Array<{ model: string; evaluated: number }> }>).find(
        (entry) => entry.requested_model === 'big',
      );
      return route?.candidates.find((candidate) => candidate.model === 'small')?.evaluated ?? 0;
    };
    const ids: string[] = [];
    const traffic = async (from: readonly Member[], calls: number) => {
      for (let call = 0; call < calls; call++) {
        const reply = await ask(from[call % from.length] as Member, 'evidence');
        expect(reply.status).toBe(200);
        ids.push(reply.headers.get('x-request-id') as string);
      }
    };

    await vi.waitFor(async () => expect(await leaders(members)).toHaveLength(1), { timeout: 30_000, interval: 200 });
    const [leader] = await leaders(members);
    const survivors = members.filter((member) => member !== leader);
    await traffic(members, 30);
    // Followers' samples reach the leader through the store; its replays become evidence every process reads.
    await vi.waitFor(async () => expect(await smallEvidence(survivors[0] as Member)).toBeGreaterThanOrEqual(10), {
      timeout: 20_000,
      interval: 200,
    });
    await vi.waitFor(
      async () => {
        const listed = await send(survivors[0] as Member, 'GET', '/projects/default/workloads/evidence/traces?limit=100');
        expect((listed.json.data as unknown[]).length).toBe(ids.length);
      },
      { timeout: 10_000, interval: 100 },
    );
    const before = await smallEvidence(survivors[0] as Member);

    (leader as Member).process.child.kill('SIGKILL');
    await (leader as Member).process.exited;
    const killedAt = Date.now();
    await vi.waitFor(async () => expect(await leaders(survivors)).toHaveLength(1), { timeout: 30_000, interval: 200 });
    expect(Date.now() - killedAt).toBeLessThan(30_000);

    expect(await smallEvidence(survivors[0] as Member)).toBeGreaterThanOrEqual(before);
    await traffic(survivors, 20);
    // The new leader goes on from the evidence in the store.
    await vi.waitFor(async () => expect(await smallEvidence(survivors[1] as Member)).toBeGreaterThan(before), {
      timeout: 20_000,
      interval: 200,
    });
    await vi.waitFor(
      async () => {
        const listed = await send(survivors[1] as Member, 'GET', '/projects/default/workloads/evidence/traces?limit=100');
        expect((listed.json.data as Array<{ request_id: string }>).map((trace) => trace.request_id).sort()).toEqual([...ids].sort());
      },
      { timeout: 10_000, interval: 100 },
    );
    expect(alive()).toHaveLength(2);
  }, 120_000);
});
