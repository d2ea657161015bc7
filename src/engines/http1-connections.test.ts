import { once } from 'node:events';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createTcpServer, type AddressInfo, type Server as TcpServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { EngineConnectionError, Http1Connections, type StreamedReply } from './http1-connections.js';

const servers: Array<HttpServer | TcpServer> = [];
const pools: Http1Connections[] = [];

afterEach(async () => {
  await Promise.all(pools.splice(0).map((pool) => pool.close()));
  for (const server of servers.splice(0)) {
    if ('closeAllConnections' in server) server.closeAllConnections();
    server.close();
  }
});

const live = (): AbortSignal => new AbortController().signal;
const get = (path = '/'): string => `GET ${path} HTTP/1.1\r\nhost: test\r\n\r\n`;

async function listen<T extends HttpServer | TcpServer>(server: T): Promise<{ server: T; origin: URL }> {
  servers.push(server);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return { server, origin: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`) };
}

function poolFor(origin: URL, maxConnections = 4): Http1Connections {
  const pool = new Http1Connections({ origin, maxConnections, connectTimeoutMs: 1_000 });
  pools.push(pool);
  return pool;
}

/** An HTTP server writing `parts` (waiting for drain), reporting the connections it saw and when a client went away mid-reply. */
async function serve(parts: string[] = ['ok']) {
  const sockets = new Set<Socket>();
  let closedByClient!: () => void;
  const closed = new Promise<void>((resolve) => (closedByClient = resolve));
  const { server, origin } = await listen(
    createHttpServer(async (request, response) => {
      sockets.add(request.socket);
      response.once('close', () => {
        if (!response.writableFinished) closedByClient();
      });
      response.writeHead(200, { 'content-type': 'text/event-stream', 'x-path': request.url });
      for (const part of parts) {
        if (response.destroyed) return;
        if (!response.write(part)) await once(response, 'drain').catch(() => undefined);
      }
      response.end();
    }),
  );
  return { server, origin, sockets, closed };
}

async function readAll(reply: StreamedReply): Promise<string> {
  return reply.text();
}

describe('Http1Connections', () => {
  it('sends requests one after another over one kept-alive connection', async () => {
    const { origin, sockets } = await serve(['data: 1\n\n', 'data: 2\n\n']);
    const pool = poolFor(origin);
    for (let call = 0; call < 3; call++) {
      const reply = await pool.request(get(`/${call}`), live(), 1_000);
      expect(reply.statusCode).toBe(200);
      expect(reply.headers['x-path']).toBe(`/${call}`);
      expect(await readAll(reply)).toBe('data: 1\n\ndata: 2\n\n');
    }
    expect(sockets.size).toBe(1);
  });

  it('opens no more than maxConnections; the rest wait and go as connections free', async () => {
    const { origin, sockets } = await serve(['x'.repeat(1_000)]);
    const pool = poolFor(origin, 2);
    const texts = await Promise.all(Array.from({ length: 6 }, async () => readAll(await pool.request(get(), live(), 2_000))));
    expect(texts.every((text) => text === 'x'.repeat(1_000))).toBe(true);
    expect(sockets.size).toBe(2);
  });

  it('sends a request again on a new connection when the reused one closes before replying', async () => {
    let requests = 0;
    const { origin } = await listen(
      createTcpServer((socket) => {
        socket.on('data', () => {
          requests += 1;
          // The first request on each connection is answered; a second one finds the server closing it.
          if ((socket as Socket & { answered?: boolean }).answered === true) return void socket.destroy();
          (socket as Socket & { answered?: boolean }).answered = true;
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
        });
      }),
    );
    const pool = poolFor(origin, 1);
    expect(await readAll(await pool.request(get(), live(), 1_000))).toBe('ok');
    expect(await readAll(await pool.request(get(), live(), 1_000))).toBe('ok');
    expect(requests).toBe(3);
  });

  it('does not send a request again when a new connection closes before replying', async () => {
    const { origin } = await listen(createTcpServer((socket) => socket.on('data', () => socket.destroy())));
    const failing = poolFor(origin).request(get(), live(), 1_000);
    await expect(failing).rejects.toBeInstanceOf(EngineConnectionError);
    await expect(failing).rejects.toMatchObject({ code: 'CONNECTION_CLOSED' });
  });

  it('times out a reply whose head does not come, and a body that stops', async () => {
    const { origin } = await listen(
      createTcpServer((socket) =>
        socket.on('data', (bytes) => {
          if (bytes.toString().startsWith('GET /body')) socket.write('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nhel');
        }),
      ),
    );
    const pool = poolFor(origin);
    await expect(pool.request(get('/head'), live(), 100)).rejects.toMatchObject({ code: 'HEADERS_TIMEOUT' });
    const reply = await pool.request(get('/body'), live(), 1_000, 100);
    await expect(reply.text()).rejects.toMatchObject({ code: 'BODY_TIMEOUT' });
  });

  it('times out a connection that does not complete (a TLS handshake nobody answers)', async () => {
    const { origin } = await listen(createTcpServer(() => undefined));
    const pool = new Http1Connections({ origin: new URL(origin.href.replace('http:', 'https:')), maxConnections: 1, connectTimeoutMs: 100 });
    pools.push(pool);
    await expect(pool.request(get(), live(), 5_000)).rejects.toMatchObject({ code: 'CONNECT_TIMEOUT' });
  });

  it('hands a large body to a slow reader whole and in order (the socket paused meanwhile, nothing dropped)', async () => {
    const parts = Array.from({ length: 400 }, (_, index) => `${String(index).padStart(4, '0')}${'x'.repeat(4_000)}\n`);
    const { origin } = await serve(parts);
    const reply = await poolFor(origin).request(get(), live(), 1_000);
    const received: Buffer[] = [];
    for (let buffers = await reply.read(); buffers !== null; buffers = await reply.read()) {
      received.push(...buffers);
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
    expect(Buffer.concat(received).toString()).toBe(parts.join(''));
  });

  it('pauses the socket while the reader holds 64 KiB: the engine cannot write far ahead', async () => {
    let finished = false;
    const part = 'w'.repeat(256 * 1024);
    const { origin } = await listen(
      createHttpServer(async (_request, response) => {
        response.writeHead(200);
        for (let index = 0; index < 64; index++) if (!response.write(part)) await once(response, 'drain');
        response.end(() => (finished = true));
      }),
    );
    const reply = await poolFor(origin).request(get(), live(), 1_000);
    let length = (await reply.read())?.reduce((sum, buffer) => sum + buffer.length, 0) ?? 0;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(finished).toBe(false);
    for (let buffers = await reply.read(); buffers !== null; buffers = await reply.read()) for (const buffer of buffers) length += buffer.length;
    expect(length).toBe(64 * part.length);
  });

  it('cancel stops the request (the server sees its client go) and the next read rejects with the reason', async () => {
    const { origin, closed } = await serve(Array.from({ length: 10_000 }, () => 'y'.repeat(1_000)));
    const reply = await poolFor(origin).request(get(), live(), 1_000);
    await reply.read();
    const reason = new Error('stopped');
    reply.cancel(reason);
    await closed;
    await expect(reply.read()).rejects.toBe(reason);
  });

  it('an aborted signal cancels a request mid-reply, and one still waiting for a connection', async () => {
    const { origin, closed } = await serve(Array.from({ length: 10_000 }, () => 'z'.repeat(1_000)));
    const pool = poolFor(origin, 1);
    const controller = new AbortController();
    const reply = await pool.request(get(), controller.signal, 1_000);
    const queued = new AbortController();
    const waiting = pool.request(get(), queued.signal, 1_000);
    queued.abort();
    await expect(waiting).rejects.toBe(queued.signal.reason);
    await reply.read();
    controller.abort();
    await closed;
    await expect(reply.read()).rejects.toBe(controller.signal.reason);
  });

  it('refuses requests once closed', async () => {
    const { origin } = await serve();
    const pool = poolFor(origin);
    await pool.close();
    await expect(pool.request(get(), live(), 1_000)).rejects.toMatchObject({ code: 'POOL_CLOSED' });
  });
});
