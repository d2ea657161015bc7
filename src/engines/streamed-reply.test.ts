import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import { requestStreamedReply } from './streamed-reply.js';

let server: Server | null = null;
let pool: Pool | null = null;

afterEach(async () => {
  await pool?.close();
  server?.closeAllConnections();
  server?.close();
  server = null;
  pool = null;
});

/** A server that writes `parts` one by one (waiting for drain), and reports when its client went away. */
async function serve(parts: string[]): Promise<{ pool: Pool; closed: Promise<unknown> }> {
  let closedByClient!: () => void;
  const closed = new Promise((resolve) => (closedByClient = () => resolve(undefined)));
  server = createServer(async (_request, response) => {
    response.once('close', () => {
      if (!response.writableFinished) closedByClient();
    });
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const part of parts) {
      if (response.destroyed) return;
      if (!response.write(part)) await once(response, 'drain').catch(() => undefined);
    }
    response.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  pool = new Pool(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
  return { pool, closed };
}

describe('streamed reply', () => {
  it('hands a large body to a slow reader whole and in order (the socket paused meanwhile, nothing dropped)', async () => {
    const parts = Array.from({ length: 400 }, (_, index) => `${String(index).padStart(4, '0')}${'x'.repeat(4_000)}\n`);
    const { pool } = await serve(parts);
    const reply = await requestStreamedReply(pool, { method: 'GET', path: '/' }, new AbortController().signal);
    expect(reply.statusCode).toBe(200);
    const received: Buffer[] = [];
    for (let buffers = await reply.read(); buffers !== null; buffers = await reply.read()) {
      received.push(...buffers);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(Buffer.concat(received).toString()).toBe(parts.join(''));
  });

  it('cancel stops the request (the server sees its client go) and the next read rejects with the reason', async () => {
    const { pool, closed } = await serve(Array.from({ length: 10_000 }, () => 'y'.repeat(1_000)));
    const reply = await requestStreamedReply(pool, { method: 'GET', path: '/' }, new AbortController().signal);
    await reply.read();
    const reason = new Error('stopped');
    reply.cancel(reason);
    await closed;
    await expect(reply.read()).rejects.toBe(reason);
  });

  it('an aborted signal cancels the request', async () => {
    const { pool, closed } = await serve(Array.from({ length: 10_000 }, () => 'z'.repeat(1_000)));
    const controller = new AbortController();
    const reply = await requestStreamedReply(pool, { method: 'GET', path: '/' }, controller.signal);
    await reply.read();
    controller.abort();
    await closed;
    await expect(reply.read()).rejects.toBe(controller.signal.reason);
  });
});
