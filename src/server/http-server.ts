/**
 * The listening socket and its shutdown. On stop: refuse new connections,
 * let calls in flight finish for up to `graceMs`, then cut the rest (their
 * handlers see the client go away and trace the call as aborted), and resolve
 * once every handler has returned, so the trace writer can flush after it.
 *
 * What never reaches a handler is answered here, in the same OpenAI error body
 * with an `x-request-id` as every other reply: bytes that are not HTTP (400),
 * headers over the parser's limit (431), a request that does not arrive within
 * `requestTimeoutMs` (408), and a connection from an address that already holds
 * `maxSlowPerAddress` connections slow to deliver their request (429).
 */
import { createServer, maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { GatewayError, HeadersTooLargeError, MalformedHttpError, RequestTimeoutError, TooManyConnectionsError } from '../api/errors.js';
import { rawErrorReply } from './http-response.js';
import { bodyStillArriving } from './read-body.js';
import { newRequestId } from './request-id.js';

export interface HttpServer {
  readonly server: Server;
  readonly port: number;
  /** Calls whose handler has not returned yet. */
  inFlight(): number;
  stop(graceMs: number): Promise<void>;
}

export interface ListenOptions {
  host: string;
  port: number;
  /** Time for a request's headers and body to arrive; 0 turns the bound off. Default 30 s. */
  requestTimeoutMs?: number;
  /** Connections one address may hold that have spent over a second without delivering a whole request; 0 for no cap. Default 64. */
  maxSlowPerAddress?: number;
}

export async function listen(handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>, options: ListenOptions): Promise<HttpServer> {
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const slow = createSlowConnections(options.maxSlowPerAddress ?? 64);
  let inFlight = 0;
  let drained: (() => void) | null = null;
  const server = createServer(
    {
      keepAliveTimeout: 65_000,
      // Node's own bound, a backstop: a handler reading a body times it out first (read-body.ts), with a trace.
      requestTimeout: requestTimeoutMs === 0 ? 0 : requestTimeoutMs + 1_000,
      headersTimeout: requestTimeoutMs === 0 ? 60_000 : Math.min(60_000, requestTimeoutMs),
      connectionsCheckingInterval: 1_000,
    },
    (request, response) => {
      inFlight++;
      slow.requestStarted(request);
      void handle(request, response).finally(() => {
        inFlight--;
        if (inFlight === 0 && drained !== null) drained();
      });
    },
  );
  server.on('connection', (socket: Socket) => {
    const refusal = slow.connected(socket);
    if (refusal !== null) refuse(socket, refusal);
  });
  server.on('clientError', (error: Error & { code?: string; reason?: string }, socket: Socket) => {
    const reply = clientErrorReply(error, requestTimeoutMs);
    // A reply already under way on this socket (its handler answered) cannot be followed by another one.
    const answered = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage?.headersSent === true;
    if (reply !== null && socket.writable && !answered) refuse(socket, reply);
    else socket.destroy();
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });

  function waitForHandlers(timeoutMs: number): Promise<void> {
    if (inFlight === 0) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      drained = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }

  return {
    server,
    port: (server.address() as AddressInfo).port,
    inFlight: () => inFlight,
    async stop(graceMs) {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      await waitForHandlers(graceMs);
      server.closeAllConnections();
      await waitForHandlers(5_000);
      await closed;
    },
  };
}

/** Answers on a bare socket and closes it; nothing more is read from it. */
function refuse(socket: Socket, error: GatewayError): void {
  socket.pause();
  socket.end(rawErrorReply(error, newRequestId()), () => socket.destroy());
}

/** The reply to a parser error or timeout, or null when the client is gone and nothing should be written. */
function clientErrorReply(error: Error & { code?: string; reason?: string }, requestTimeoutMs: number): GatewayError | null {
  switch (error.code) {
    case 'ECONNRESET':
    case 'EPIPE':
      return null;
    case 'HPE_HEADER_OVERFLOW':
      return new HeadersTooLargeError(maxHeaderSize);
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new RequestTimeoutError(requestTimeoutMs);
    default:
      return new MalformedHttpError((error.reason ?? error.code ?? 'parse error').toLowerCase());
  }
}

/**
 * Counts, per remote address, the slow connections: those that have spent
 * over `slowAfterMs` without delivering a whole request, from connect until
 * the first request's body is in, and again while each later request with a
 * body arrives. A client's burst of new connections is not slow; a client
 * trickling headers or bodies is. An idle keep-alive connection has delivered
 * its request and is not counted.
 *
 * One timer sweeps the waiting connections a few times a second (a
 * connection turns slow between `slowAfterMs` and 1.25 times it), rather
 * than a timer set and cleared for every request: most bodies are in a few
 * microseconds after their head, and a timer each cost a stream some 10 µs of
 * its first byte on cold caches.
 */
function createSlowConnections(limit: number, slowAfterMs = 1_000) {
  const slowByAddress = new Map<string, number>();
  const states = new WeakMap<Socket, { address: string; slow: boolean }>();
  /** Connections waiting for a whole request, with when they began to. */
  const waitingSince = new Map<Socket, number>();
  let sweeper: NodeJS.Timeout | null = null;
  /** Sweeps in a row that found nothing waiting: after 40 (10 s) the timer stops until a connection waits again. */
  let idleSweeps = 0;

  function sweep(): void {
    if (waitingSince.size === 0) {
      if (++idleSweeps >= 40 && sweeper !== null) {
        clearInterval(sweeper);
        sweeper = null;
      }
      return;
    }
    idleSweeps = 0;
    const slowBefore = performance.now() - slowAfterMs;
    for (const [socket, since] of waitingSince) {
      if (since > slowBefore) continue;
      waitingSince.delete(socket);
      const state = states.get(socket);
      if (state === undefined) continue;
      state.slow = true;
      slowByAddress.set(state.address, (slowByAddress.get(state.address) ?? 0) + 1);
    }
  }

  function waiting(socket: Socket): void {
    const state = states.get(socket);
    if (state === undefined || state.slow || waitingSince.has(socket)) return;
    waitingSince.set(socket, performance.now());
    idleSweeps = 0;
    if (sweeper === null) {
      sweeper = setInterval(sweep, slowAfterMs / 4);
      sweeper.unref();
    }
  }

  function delivered(socket: Socket): void {
    waitingSince.delete(socket);
    const state = states.get(socket);
    if (state === undefined || !state.slow) return;
    state.slow = false;
    const count = (slowByAddress.get(state.address) ?? 1) - 1;
    if (count <= 0) slowByAddress.delete(state.address);
    else slowByAddress.set(state.address, count);
  }

  return {
    /** A new connection: watched, or refused when its address already holds `limit` slow ones. */
    connected(socket: Socket): GatewayError | null {
      // The address is read now: a closed socket no longer has one.
      const address = socket.remoteAddress ?? '';
      if (limit > 0 && (slowByAddress.get(address) ?? 0) >= limit) return new TooManyConnectionsError(limit);
      states.set(socket, { address, slow: false });
      waiting(socket);
      socket.once('close', () => delivered(socket));
      return null;
    },
    /** A request's headers are in; the connection is delivered once its body is too. */
    requestStarted(request: IncomingMessage): void {
      const socket = request.socket;
      if (!bodyStillArriving(request)) return delivered(socket);
      waiting(socket);
      request.once('end', () => delivered(socket));
      request.once('close', () => delivered(socket));
    },
  };
}
