/**
 * The slow-connection guard through the real server, from one address
 * (127.0.0.1) as every client behind a proxy would be: it never refuses a
 * prompt client, not under a load that keeps the loop busy, not while
 * hundreds of slow sockets from the same address are open, and a busy event
 * loop is not counted as a client's slowness. The shedding rule itself is
 * src/server/slow-connections.test.ts.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startScriptedEngine, type ScriptedEngine } from './helpers/scripted-engine.js';
import { ADMIN_KEY, engineConfig, startTestGateway, type TestGateway } from './helpers/test-gateway.js';

let engine: ScriptedEngine;
let taskgate: TestGateway;

beforeAll(async () => {
  engine = await startScriptedEngine();
  // The default caps: 64 slow connections an address.
  taskgate = await startTestGateway(engineConfig([engine.baseUrl]));
});
afterAll(async () => {
  await taskgate.stop();
  await engine.close();
});

/** A raw socket and what it was sent back, and whether the server closed it. */
interface Held {
  socket: Socket;
  reply: Buffer[];
  closed: boolean;
}

const partialHead = `POST /v1/chat/completions HTTP/1.1\r\nhost: 127.0.0.1\r\nauthorization: Bearer ${ADMIN_KEY}\r\n`;

/** Opens `count` sockets to the gateway and sends each `bytes` once connected. */
async function openSockets(port: number, count: number, bytes: string): Promise<Held[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<Held>((resolve, reject) => {
          const socket = connect(port, '127.0.0.1');
          const held: Held = { socket, reply: [], closed: false };
          socket.on('data', (chunk: Buffer) => held.reply.push(chunk));
          socket.on('close', () => (held.closed = true));
          socket.once('error', reject);
          socket.once('connect', () => {
            socket.off('error', reject);
            socket.on('error', () => undefined);
            socket.write(bytes);
            resolve(held);
          });
        }),
    ),
  );
}

/** The status and error code of a raw reply ('' when there was none). */
function statusOf(held: Held): string {
  const text = Buffer.concat(held.reply).toString('latin1');
  if (text === '') return '';
  const body = JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as { error?: { code: string } };
  return `${text.split(' ')[1]} ${body.error?.code ?? ''}`.trim();
}

async function chat(content: string, key = ADMIN_KEY): Promise<number> {
  const response = await taskgate.postChat({ model: 'model-0', messages: [{ role: 'user', content }] }, { key });
  await response.text();
  return response.status;
}

describe('the slow-connection guard', () => {
  it('2,000 calls at concurrency 200 from one address: none refused', async () => {
    const { text } = await taskgate.createKey({ requestsPerMinute: 100_000 });
    let next = 0;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 200 }, async () => {
        while (next < 2_000) {
          next += 1;
          const response = await taskgate.postChat(
            { model: 'model-0', messages: [{ role: 'user', content: 'load' }], stream: next % 2 === 0 },
            { key: text },
          );
          await response.text();
          statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
        }
      }),
    );
    expect(Object.fromEntries(statuses)).toEqual({ 200: 2_000 });
  }, 60_000);

  it('with 500 slow-header sockets from the same address, its prompt calls and the dashboard login are served, and the oldest slow ones are shed', async () => {
    const port = taskgate.gateway.port;
    const waves: Held[][] = [];
    try {
      waves.push(await openSockets(port, 500, partialHead));
      // All 500 open, not slow yet.
      expect(await Promise.all(Array.from({ length: 10 }, () => chat('beside 500 new sockets')))).toEqual(Array(10).fill(200));

      // Slow after a second: all but the newest 64 are shed, each with a 408 body.
      await expect.poll(() => waves[0]!.filter((held) => held.closed).length, { timeout: 10_000 }).toBe(500 - 64);
      const shed = waves[0]!.filter((held) => held.closed);
      expect(new Set(shed.map(statusOf))).toEqual(new Set(['408 request_timeout']));
      expect(await Promise.all(Array.from({ length: 20 }, () => chat('beside 64 slow sockets')))).toEqual(Array(20).fill(200));
      const login = await fetch(`${taskgate.origin}/dashboard/login`);
      expect(login.status).toBe(200);
      expect(await login.text()).toContain('<form method="post" action="/dashboard/login">');

      // A second wave: once it is slow, the first wave's survivors are the oldest and go first.
      waves.push(await openSockets(port, 436, partialHead));
      await expect.poll(() => waves.flat().filter((held) => !held.closed).length, { timeout: 10_000 }).toBe(64);
      expect(waves[0]!.every((held) => held.closed)).toBe(true);
      expect(await Promise.all(Array.from({ length: 20 }, () => chat('beside the second wave')))).toEqual(Array(20).fill(200));
      expect(waves.flat().filter((held) => !held.closed).length).toBe(64);
      // Every one shed is counted for the operator (and the log says so, once every 30 s).
      const metrics = await (
        await fetch(`${taskgate.origin}/metrics`, { headers: { authorization: `Bearer ${taskgate.adminKey}` } })
      ).text();
      expect(metrics).toContain(`taskgate_slow_connections_shed_total{cap="address"} ${2 * 436}`);
      expect(taskgate.logLines.some((line) => line.includes('slow connections closed'))).toBe(true);
    } finally {
      for (const held of waves.flat()) held.socket.destroy();
    }
  }, 60_000);

  it("a busy event loop is not the client's slowness: calls waiting while it was blocked are served", async () => {
    const capped = await startTestGateway(engineConfig([engine.baseUrl], { extra: 'server: { max_slow_connections_per_address: 3 }' }));
    const held: Held[] = [];
    try {
      // Ten connections the server has accepted (so they are waiting for their requests)…
      const body = JSON.stringify({ model: 'model-0', messages: [{ role: 'user', content: 'blocked' }] });
      held.push(...(await openSockets(capped.gateway.port, 10, '')));
      await sleep(200);
      // …whose whole requests reach the kernel while this process's loop is blocked for 1.6 s, so the server reads them late.
      for (const { socket } of held)
        socket.write(
          `${partialHead}content-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`,
        );
      const blockedUntil = performance.now() + 1_600;
      while (performance.now() < blockedUntil);
      await expect.poll(() => held.every((entry) => entry.closed), { timeout: 10_000 }).toBe(true);
      expect(held.map((entry) => statusOf(entry).split(' ')[0])).toEqual(Array(10).fill('200'));
    } finally {
      for (const entry of held) entry.socket.destroy();
      await capped.stop();
    }
  });
});
