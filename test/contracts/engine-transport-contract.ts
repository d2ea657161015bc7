/**
 * The transport contract (`src/engines/transport/engine-transport.ts`) as a
 * test suite of wire cases on real sockets. Every transport runs it unchanged
 * (`describeEngineTransportContract('http1', createHttp1Transport)`, and
 * `('undici', …)`), so it uses only `EngineTransport` and what the engine at
 * the other end saw (`test/helpers/misbehaving-engine.ts`): which requests it
 * read in full, on which connection, and who closed each connection when.
 */
import { once } from 'node:events';
import { createServer, type AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import {
  PreparedRequest,
  TransportError,
  type EngineTransport,
  type RequestTimeouts,
  type StreamedReply,
  type TransportErrorCode,
  type TransportOptions,
} from '../../src/engines/transport/engine-transport.js';
import { malformedVariants, startMisbehavingEngine, type MisbehavingEngine, type Script } from '../helpers/misbehaving-engine.js';

export type TransportFactory = (options: TransportOptions) => EngineTransport;

const timeouts: RequestTimeouts = { headersMs: 2_000, bodyIdleMs: 0 };
const chatBody = (stream = false): string =>
  JSON.stringify({ model: 'tiny', messages: [{ role: 'user', content: 'hello there' }], stream });
const live = (): AbortSignal => new AbortController().signal;
const sleep = (milliseconds: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, milliseconds));

export function describeEngineTransportContract(transportName: string, createTransport: TransportFactory): void {
  describe(`EngineTransport contract: ${transportName}`, () => {
    const engines: MisbehavingEngine[] = [];
    const transports: EngineTransport[] = [];

    afterEach(async () => {
      // Engines first: their sockets closing ends whatever a transport still has in flight, so its close cannot wait on it.
      await Promise.all(engines.splice(0).map((engine) => engine.close()));
      await Promise.all(transports.splice(0).map((transport) => Promise.race([transport.close(), sleep(2_000)])));
    });

    async function engineWith(script: Script): Promise<MisbehavingEngine> {
      const engine = await startMisbehavingEngine(script);
      engines.push(engine);
      return engine;
    }

    function transportFor(origin: URL, options: Partial<TransportOptions> = {}): EngineTransport {
      const transport = createTransport({ origin, maxConnections: 4, connectTimeoutMs: 1_000, ...options });
      transports.push(transport);
      return transport;
    }

    const chat = (origin: URL): PreparedRequest =>
      new PreparedRequest(
        'POST',
        '/v1/chat/completions',
        { 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer engine-key' },
        origin.host,
      );
    const models = (origin: URL): PreparedRequest => new PreparedRequest('GET', '/v1/models', { accept: 'application/json' }, origin.host);

    /** Sends a chat request and reads its reply whole. */
    async function exchange(
      transport: EngineTransport,
      engine: MisbehavingEngine,
      stream = false,
    ): Promise<{ reply: StreamedReply; text: string }> {
      const reply = await transport.send(chat(engine.origin), chatBody(stream), live(), timeouts);
      return { reply, text: await reply.text() };
    }

    /** The error of a request that must fail, whether sending or reading its reply fails. */
    async function failureOf(sending: Promise<StreamedReply>): Promise<unknown> {
      try {
        await (await sending).text();
      } catch (error) {
        return error;
      }
      throw new Error('the request succeeded');
    }

    function expectTransportError(error: unknown, code: TransportErrorCode, requestSent: boolean): void {
      expect(error).toBeInstanceOf(TransportError);
      expect(error).toMatchObject({ code, requestSent });
    }

    /** The connection the engine saw the client close. */
    const closedByClient = (engine: MisbehavingEngine, connection: number) => () =>
      engine.closedByClient().some((record) => record.id === connection);

    describe('requests and replies', () => {
      it('sends the method, path, headers and body, with a content-length (none for a GET without body)', async () => {
        const engine = await engineWith({ kind: 'reply' });
        const transport = transportFor(engine.origin);
        await exchange(transport, engine);
        await (await transport.send(models(engine.origin), null, live(), timeouts)).text();
        const [post, get] = engine.requests();
        expect(post).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: chatBody() });
        expect(post?.headers).toMatchObject({
          host: engine.origin.host,
          'content-type': 'application/json',
          authorization: 'Bearer engine-key',
          'content-length': String(Buffer.byteLength(chatBody())),
        });
        expect(get).toMatchObject({ method: 'GET', path: '/v1/models', body: '' });
        expect(get?.headers['content-length'] ?? '0').toBe('0');
      });

      it('reads a JSON reply whole: status, lower-case headers with repeated ones joined, body', async () => {
        const engine = await engineWith({
          kind: 'json',
          content: 'all good',
          headers: [
            ['X-Repeated', 'a'],
            ['x-repeated', 'b'],
          ],
        });
        const { reply, text } = await exchange(transportFor(engine.origin), engine);
        expect(reply.statusCode).toBe(200);
        expect(reply.headers['content-type']).toBe('application/json');
        expect(reply.headers['x-repeated']).toBe('a, b');
        expect(JSON.parse(text)).toMatchObject({ object: 'chat.completion', choices: [{ message: { content: 'all good' } }] });
      });

      it('reads a chunked SSE stream whole and in order', async () => {
        const engine = await engineWith({ kind: 'stream', events: 5, gapMs: 5 });
        const { reply, text } = await exchange(transportFor(engine.origin), engine, true);
        expect(reply.headers['content-type']).toBe('text/event-stream');
        const contents = text
          .split('\n\n')
          .filter((event) => event.startsWith('data: {'))
          .map(
            (event) => (JSON.parse(event.slice(6)) as { choices: Array<{ delta: { content?: string } }> }).choices[0]?.delta.content ?? '',
          );
        expect(contents.join('')).toBe('word0 word1 word2 word3 word4 ');
        expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      });

      it('sends requests one after another over one kept-alive connection', async () => {
        const engine = await engineWith({ kind: 'reply' });
        const transport = transportFor(engine.origin);
        await exchange(transport, engine);
        await exchange(transport, engine, true);
        await exchange(transport, engine);
        expect(engine.connections()).toHaveLength(1);
        expect(engine.requests().map((request) => request.onConnection)).toEqual([1, 2, 3]);
      });

      it('opens no more than maxConnections; the rest wait and go as connections free', async () => {
        const engine = await engineWith({ kind: 'json', delayMs: 20 });
        const transport = transportFor(engine.origin, { maxConnections: 2 });
        const texts = await Promise.all(Array.from({ length: 6 }, async () => (await exchange(transport, engine)).text));
        expect(texts.every((text) => text.includes('chat.completion'))).toBe(true);
        expect(engine.connections()).toHaveLength(2);
        expect(engine.generations()).toBe(6);
      });

      it('hands over refusals and errors as replies (503 and 429 with retry-after, 500), and keeps the connection', async () => {
        const engine = await engineWith((request) =>
          request.ordinal === 1
            ? { kind: 'refuse', status: 503, retryAfterSeconds: 3 }
            : request.ordinal === 2
              ? { kind: 'refuse', status: 429, retryAfterSeconds: 7 }
              : { kind: 'error' },
        );
        const transport = transportFor(engine.origin);
        const replies = [await exchange(transport, engine), await exchange(transport, engine), await exchange(transport, engine)];
        expect(replies.map(({ reply }) => reply.statusCode)).toEqual([503, 429, 500]);
        expect(replies.map(({ reply }) => reply.headers['retry-after'])).toEqual(['3', '7', undefined]);
        expect(JSON.parse(replies[2]?.text ?? '')).toMatchObject({ error: { message: 'engine failure' } });
        expect(engine.connections()).toHaveLength(1);
      });

      it('hands over a content-encoded body as it came (decoding it is the engine’s choice, not the transport’s)', async () => {
        const engine = await engineWith({ kind: 'gzip', content: 'compressed' });
        const reply = await transportFor(engine.origin).send(chat(engine.origin), chatBody(), live(), timeouts);
        expect(reply.headers['content-encoding']).toBe('gzip');
        const parts: Buffer[] = [];
        for (let buffers = await reply.read(); buffers !== null; buffers = await reply.read()) parts.push(...buffers);
        expect(JSON.parse(gunzipSync(Buffer.concat(parts)).toString('utf8'))).toMatchObject({
          choices: [{ message: { content: 'compressed' } }],
        });
      });

      it('hands a large body to a slow reader whole and in order', async () => {
        const engine = await engineWith({ kind: 'stream', events: 300, eventBytes: 4_000 });
        const reply = await transportFor(engine.origin).send(chat(engine.origin), chatBody(true), live(), timeouts);
        const received: Buffer[] = [];
        for (let buffers = await reply.read(); buffers !== null; buffers = await reply.read()) {
          received.push(...buffers);
          await sleep(2);
        }
        const text = Buffer.concat(received).toString('utf8');
        const words = [...text.matchAll(/"content":"(word\d+) /g)].map((match) => match[1]);
        expect(words).toEqual(Array.from({ length: 300 }, (_, index) => `word${index}`));
        expect(text.endsWith('data: [DONE]\n\n')).toBe(true);
      });
    });

    describe('one generation per request', () => {
      it('a reused connection the engine closes after reading the request: CONNECTION_CLOSED, read once, never sent again (3 idle connections warm)', async () => {
        const engine = await engineWith((request) => (request.ordinal === 4 ? { kind: 'close' } : { kind: 'json', delayMs: 30 }));
        const transport = transportFor(engine.origin);
        await Promise.all([exchange(transport, engine), exchange(transport, engine), exchange(transport, engine)]);
        expect(engine.connections()).toHaveLength(3);
        expectTransportError(await failureOf(transport.send(chat(engine.origin), chatBody(), live(), timeouts)), 'CONNECTION_CLOSED', true);
        await sleep(200);
        expect(engine.generations()).toBe(4);
        expect(engine.requests()[3]?.onConnection).toBe(2);
        expect(engine.connections()).toHaveLength(3);
        // The transport goes on: the next request is served.
        expect((await exchange(transport, engine)).reply.statusCode).toBe(200);
      });

      it('a new connection the engine closes after reading the request: CONNECTION_CLOSED, read once', async () => {
        const engine = await engineWith({ kind: 'close' });
        const transport = transportFor(engine.origin);
        expectTransportError(await failureOf(transport.send(chat(engine.origin), chatBody(), live(), timeouts)), 'CONNECTION_CLOSED', true);
        await sleep(200);
        expect(engine.generations()).toBe(1);
        expect(engine.connections()).toHaveLength(1);
      });

      it('a reply cut short by the engine closing: the read fails CONNECTION_CLOSED, read once', async () => {
        const engine = await engineWith({ kind: 'stream', events: 5, closeAfter: 2 });
        const reply = await transportFor(engine.origin).send(chat(engine.origin), chatBody(true), live(), timeouts);
        expectTransportError(await reply.text().catch((error: unknown) => error), 'CONNECTION_CLOSED', true);
        await sleep(200);
        expect(engine.generations()).toBe(1);
      });

      it('a refused connection (nobody listens): CONNECT_FAILED, not sent', async () => {
        const server = createServer();
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        const origin = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
        server.close();
        await once(server, 'close');
        const transport = transportFor(origin);
        expectTransportError(await failureOf(transport.send(chat(origin), chatBody(), live(), timeouts)), 'CONNECT_FAILED', false);
      });

      it('a connect that does not complete (a TLS handshake nobody answers): CONNECT_TIMEOUT, not sent', async () => {
        const server = createServer((socket) => socket.on('error', () => undefined));
        server.listen(0, '127.0.0.1');
        await once(server, 'listening');
        const origin = new URL(`https://127.0.0.1:${(server.address() as AddressInfo).port}`);
        try {
          const transport = transportFor(origin, { connectTimeoutMs: 150 });
          const started = Date.now();
          expectTransportError(await failureOf(transport.send(chat(origin), chatBody(), live(), timeouts)), 'CONNECT_TIMEOUT', false);
          expect(Date.now() - started).toBeLessThan(1_500);
        } finally {
          server.close();
        }
      });

      it('an idle connection the engine closed is not reused: the next request goes on a new one, read once', async () => {
        const engine = await engineWith((request) => (request.ordinal === 1 ? { kind: 'close-idle', afterMs: 50 } : { kind: 'json' }));
        const transport = transportFor(engine.origin);
        await exchange(transport, engine);
        await engine.waitFor(() => engine.connections()[0]?.closedBy === 'engine', 'the engine closing the idle connection');
        await sleep(50);
        expect((await exchange(transport, engine)).reply.statusCode).toBe(200);
        expect(engine.generations()).toBe(2);
        expect(engine.requests()[1]?.connection).toBe(2);
      });
    });

    describe('nothing waits forever', () => {
      it('a head that does not come: HEADERS_TIMEOUT within the timeout, and the engine sees the connection close', async () => {
        const engine = await engineWith({ kind: 'stall' });
        const transport = transportFor(engine.origin);
        const started = Date.now();
        const error = await failureOf(transport.send(chat(engine.origin), chatBody(), live(), { headersMs: 200, bodyIdleMs: 0 }));
        const elapsed = Date.now() - started;
        expectTransportError(error, 'HEADERS_TIMEOUT', true);
        expect(elapsed).toBeGreaterThanOrEqual(180);
        // Slack: undici's head and body timers tick every 500 ms, so they fire up to a second late.
        expect(elapsed).toBeLessThan(1_500);
        await engine.waitFor(closedByClient(engine, 1), 'the client closing the stalled connection', 1_000);
      });

      it('a body that stops: BODY_TIMEOUT on read, and the engine sees the connection close', async () => {
        const engine = await engineWith({ kind: 'head-then-stall' });
        const reply = await transportFor(engine.origin).send(chat(engine.origin), chatBody(), live(), {
          headersMs: 1_000,
          bodyIdleMs: 200,
        });
        expect(reply.statusCode).toBe(200);
        const started = Date.now();
        expectTransportError(await reply.text().catch((error: unknown) => error), 'BODY_TIMEOUT', true);
        expect(Date.now() - started).toBeLessThan(1_500);
        await engine.waitFor(closedByClient(engine, 1), 'the client closing the stalled connection', 1_000);
      });
    });

    describe('cancellation', () => {
      it('cancel mid-stream: the engine sees its connection close promptly, and reads reject with the reason', async () => {
        const engine = await engineWith({ kind: 'stream', endless: true, gapMs: 10 });
        const reply = await transportFor(engine.origin).send(chat(engine.origin), chatBody(true), live(), timeouts);
        expect(await reply.read()).not.toBeNull();
        const reason = new Error('the client went away');
        reply.cancel(reason);
        await engine.waitFor(closedByClient(engine, 1), 'the engine seeing the cancelled request go', 1_000);
        expect(engine.requests()[0]?.clientClosedAt).not.toBeNull();
        await expect(reply.read()).rejects.toBe(reason);
      });

      it('an aborted signal mid-stream does the same, with the signal’s reason', async () => {
        const engine = await engineWith({ kind: 'stream', endless: true, gapMs: 10 });
        const controller = new AbortController();
        const reply = await transportFor(engine.origin).send(chat(engine.origin), chatBody(true), controller.signal, timeouts);
        expect(await reply.read()).not.toBeNull();
        const reason = new Error('the caller gave up');
        controller.abort(reason);
        await engine.waitFor(closedByClient(engine, 1), 'the engine seeing the aborted request go', 1_000);
        await expect(reply.read()).rejects.toBe(reason);
      });

      it('an aborted signal while waiting for the head rejects the send with its reason and closes the connection', async () => {
        const engine = await engineWith({ kind: 'stall' });
        const controller = new AbortController();
        const sending = transportFor(engine.origin).send(chat(engine.origin), chatBody(), controller.signal, timeouts);
        await engine.waitFor(() => engine.generations() === 1, 'the engine reading the request');
        const reason = new Error('the caller gave up');
        controller.abort(reason);
        await expect(sending).rejects.toBe(reason);
        await engine.waitFor(closedByClient(engine, 1), 'the engine seeing the aborted request go', 1_000);
      });

      it('an aborted signal drops a request still waiting for a connection: it is never sent; one aborted before the send is not either', async () => {
        const engine = await engineWith({ kind: 'stream', endless: true, gapMs: 10 });
        const transport = transportFor(engine.origin, { maxConnections: 1 });
        const first = await transport.send(chat(engine.origin), chatBody(true), live(), timeouts);
        const queued = new AbortController();
        const waiting = transport.send(chat(engine.origin), chatBody(true), queued.signal, timeouts);
        queued.abort(new Error('gave up in the queue'));
        await expect(waiting).rejects.toBe(queued.signal.reason);
        const before = new AbortController();
        before.abort(new Error('gave up before'));
        await expect(transport.send(chat(engine.origin), chatBody(), before.signal, timeouts)).rejects.toBe(before.signal.reason);
        first.cancel(new Error('done'));
        await sleep(150);
        expect(engine.generations()).toBe(1);
      });
    });

    describe('backpressure', () => {
      it('a reply nobody reads holds the engine back (its writes block, the bytes written stay bounded) until reading resumes', async () => {
        const engine = await engineWith({ kind: 'flood' });
        const reply = await transportFor(engine.origin).send(chat(engine.origin), chatBody(true), live(), timeouts);
        const written = () => engine.requests()[0]?.bytesWritten ?? 0;
        await sleep(300);
        const held = written();
        await sleep(300);
        expect(engine.requests()[0]?.blockedWrites).toBeGreaterThan(0);
        // Socket buffers on both sides hold a few MB at most; a transport reading on regardless would take hundreds.
        expect(written() - held).toBeLessThan(1024 * 1024);
        expect(written()).toBeLessThan(48 * 1024 * 1024);
        let read = 0;
        while (read < 8 * 1024 * 1024) read += ((await reply.read()) ?? []).reduce((sum, buffer) => sum + buffer.length, 0);
        expect(written()).toBeGreaterThan(held);
        reply.cancel(new Error('enough'));
      });
    });

    describe('strict framing', () => {
      // Timed, so a lenient transport that reads on (to the connection's end, say) fails with another code instead of hanging.
      const strict: RequestTimeouts = { headersMs: 1_000, bodyIdleMs: 1_000 };

      it.each(malformedVariants)('%s: MALFORMED_RESPONSE, and the connection is not reused', async (variant) => {
        const engine = await engineWith((request) => (request.ordinal === 1 ? { kind: 'malformed', variant } : { kind: 'json' }));
        const transport = transportFor(engine.origin);
        expectTransportError(await failureOf(transport.send(chat(engine.origin), chatBody(), live(), strict)), 'MALFORMED_RESPONSE', true);
        expect((await exchange(transport, engine)).reply.statusCode).toBe(200);
        expect(engine.requests()[1]?.connection).toBe(2);
        await engine.waitFor(closedByClient(engine, 1), 'the client closing the connection of the malformed reply', 1_000);
      });

      // The strongest form, which both transports meet: the request fails, though its whole reply had arrived (undici's transport
      // confirms a body's end a turn later to see it). Not reusing the connection alone would be the weaker form.
      it('bytes after a complete reply, in the same write: the request fails MALFORMED_RESPONSE and its connection is not reused', async () => {
        const engine = await engineWith((request) => (request.ordinal === 1 ? { kind: 'trailing-bytes' } : { kind: 'json' }));
        const transport = transportFor(engine.origin);
        expectTransportError(await failureOf(transport.send(chat(engine.origin), chatBody(), live(), strict)), 'MALFORMED_RESPONSE', true);
        expect((await exchange(transport, engine)).reply.statusCode).toBe(200);
        expect(engine.requests()[1]?.connection).toBe(2);
        await engine.waitFor(closedByClient(engine, 1), 'the client closing the connection of the reply with stray bytes', 1_000);
      });

      it('bytes on an idle connection retire it: the next request goes on a new one', async () => {
        const engine = await engineWith((request) => (request.ordinal === 1 ? { kind: 'stray-later', afterMs: 30 } : { kind: 'json' }));
        const transport = transportFor(engine.origin);
        await exchange(transport, engine);
        await sleep(150);
        expect((await exchange(transport, engine)).reply.statusCode).toBe(200);
        expect(engine.requests()[1]?.connection).toBe(2);
        await engine.waitFor(closedByClient(engine, 1), 'the client closing the connection that got stray bytes', 1_000);
      });
    });

    describe('close', () => {
      it('fails requests not yet sent with CLOSED, waits for those in flight, then refuses new ones', async () => {
        const engine = await engineWith({ kind: 'stream', events: 5, gapMs: 40 });
        const transport = transportFor(engine.origin, { maxConnections: 1 });
        const inFlight = await transport.send(chat(engine.origin), chatBody(true), live(), timeouts);
        const waiting = transport.send(chat(engine.origin), chatBody(true), live(), timeouts);
        let closed = false;
        const closing = transport.close().then(() => (closed = true));
        expectTransportError(await waiting.catch((error: unknown) => error), 'CLOSED', false);
        await sleep(50);
        expect(closed).toBe(false);
        expect((await inFlight.text()).endsWith('data: [DONE]\n\n')).toBe(true);
        await closing;
        expectTransportError(await failureOf(transport.send(chat(engine.origin), chatBody(), live(), timeouts)), 'CLOSED', false);
        expect(engine.generations()).toBe(1);
        await engine.waitFor(closedByClient(engine, 1), 'the client closing its connection on close', 1_000);
      });
    });
  });
}
