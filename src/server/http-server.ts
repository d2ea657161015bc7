/**
 * The listening socket and its shutdown. On stop: refuse new connections,
 * let calls in flight finish for up to `graceMs`, then cut the rest (their
 * handlers see the client go away and trace the call as aborted), and resolve
 * once every handler has returned, so the trace writer can flush after it.
 *
 * What never reaches a handler is answered here, in the same OpenAI error body
 * with an `x-request-id` as every other reply: bytes that are not HTTP (400),
 * headers over the parser's limit (431), a request that does not arrive within
 * `requestTimeoutMs` (408), and a connection shed by the slow-connection guard
 * (408, or cut when a handler has its request: slow-connections.ts). No
 * connection is refused for being new.
 */
import { createServer, maxHeaderSize, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { GatewayError, HeadersTooLargeError, MalformedHttpError, RequestTimeoutError } from '../api/errors.js';
import { rawErrorReply } from './http-response.js';
import { newRequestId } from '../fast-path/request-id.js';
import { createSlowConnections } from './slow-connections.js';

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
  /** Slow connections (over a second without delivering a whole request) one address may hold before its oldest are shed; 0 for no cap. Default 64. */
  maxSlowPerAddress?: number;
  /** Slow connections all addresses may hold together before the oldest are shed; 0 for no cap. Default 1,024. */
  maxSlowTotal?: number;
  /** Told of each connection the guard closes, and the cap it was closed for (for `/metrics` and the log). */
  onShed?: (cap: 'address' | 'total') => void;
}

export async function listen(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  options: ListenOptions,
): Promise<HttpServer> {
  const requestTimeoutMs = options.requestTimeoutMs ?? 30_000;
  const slow = createSlowConnections({
    caps: { perAddress: options.maxSlowPerAddress ?? 64, total: options.maxSlowTotal ?? 1_024 },
    shed: (socket, reply, cap) => {
      options.onShed?.(cap);
      if (reply !== null && socket.writable) refuse(socket, reply);
      else socket.destroy();
    },
  });
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
  server.on('connection', (socket: Socket) => slow.connected(socket));
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
