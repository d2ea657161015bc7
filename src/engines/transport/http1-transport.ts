/**
 * taskgate's own keep-alive HTTP/1.1 transport to one engine, the default
 * (`engine-transport.ts` says what every transport owes). A request is one
 * write of text made ahead (the engine's line and headers are fixed, so only
 * the length and body change); its reply is parsed by `ResponseParser`
 * straight off the socket's reads, and its body bytes wait in a short queue
 * until the reader takes them all at once (`http1-exchange.ts`: one request
 * and its reply). This file keeps the connections and the queue for them.
 *
 * Why not only undici (the reference transport): on a stream's way to its
 * first byte, on cold caches, undici's dispatch (the pool, the request's
 * checks, the handler layers) is long before the request is written. This
 * is the little of it an engine call needs (measured: docs/benchmarks.md).
 *
 *   - Connections: up to `maxConnections`, reused last-in first-out (the
 *     warmest first); a request beyond them waits in a queue. No pipelining:
 *     a long generation must not hold up the requests behind it.
 *   - An idle connection is reused only within the server's keep-alive hint
 *     less a second, else 4 s (below uvicorn's and Node's 5 s). One the server
 *     closes, or that receives any byte while idle, is dropped at once. A
 *     request is never sent twice: if its connection closes after the write,
 *     it fails with CONNECTION_CLOSED and the caller decides.
 *   - Timeouts: `connectTimeoutMs` for TCP (and TLS) connect, and per
 *     request one from the write to the reply's head, and optionally one for
 *     the gaps in the body.
 *   - A reader that falls behind (a slow client) pauses the socket at 64 KiB
 *     queued; taking the queue resumes it.
 *   - `signal` aborting, or `cancel`, closes the connection: the engine sees
 *     the client go and stops generating.
 */
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { abortReason } from '../abort-reason.js';
import { watchAbort } from '../../fast-path/abort-watch.js';
import { Exchange, type ConnectionOwner } from './http1-exchange.js';
import {
  TransportError,
  type EngineTransport,
  type PreparedRequest,
  type RequestTimeouts,
  type StreamedReply,
  type TransportOptions,
} from './engine-transport.js';

const defaultKeepAliveMs = 4_000;

export function createHttp1Transport(options: TransportOptions): EngineTransport {
  return new Http1Transport(options);
}

class Http1Transport implements EngineTransport, ConnectionOwner {
  private readonly idle: Connection[] = [];
  private readonly queue: Exchange[] = [];
  /** Connections open or opening, idle ones included. */
  private open = 0;
  private closed = false;
  private drained: (() => void) | null = null;

  constructor(private readonly options: TransportOptions) {}

  send(request: PreparedRequest, body: string | null, signal: AbortSignal, timeouts: RequestTimeouts): Promise<StreamedReply> {
    const requestText = body === null ? `${request.head}\r\n` : `${request.head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(new TransportError('CLOSED', 'the engine is shutting down'));
      if (signal.aborted) return reject(abortReason(signal));
      const exchange = new Exchange(this, requestText, signal, timeouts.headersMs, timeouts.bodyIdleMs, resolve, reject);
      watchAbort(signal, exchange);
      const connection = this.take();
      if (connection === null) this.queue.push(exchange);
      else exchange.start(connection);
    });
  }

  /** Waits for the requests in flight, then closes every connection. */
  close(): Promise<void> {
    this.closed = true;
    for (const exchange of this.queue.splice(0)) exchange.fail(new TransportError('CLOSED', 'the engine is shutting down'));
    for (const connection of this.idle.splice(0)) connection.socket.destroy();
    if (this.open === 0) return Promise.resolve();
    return new Promise((resolve) => {
      this.drained = resolve;
    });
  }

  /** A connection for a request now: an idle one still within its keep-alive, or a new one; null at the limit. */
  private take(): Connection | null {
    const now = Date.now();
    for (let connection = this.idle.pop(); connection !== undefined; connection = this.idle.pop()) {
      if (connection.expiresAt > now && !connection.socket.destroyed) {
        connection.socket.ref();
        return connection;
      }
      connection.socket.destroy();
    }
    if (this.open >= this.options.maxConnections) return null;
    this.open += 1;
    const { socket, timer } = this.connect();
    return new Connection(this, socket, timer, this.options.origin.protocol === 'https:' ? 'secureConnect' : 'connect');
  }

  private connect(): { socket: Socket; timer: NodeJS.Timeout } {
    const { origin, connectTimeoutMs } = this.options;
    const port = Number(origin.port || (origin.protocol === 'https:' ? 443 : 80));
    const host = origin.hostname.replace(/^\[|\]$/g, '');
    const socket =
      origin.protocol === 'https:'
        ? connectTls({ host, port, servername: isIP(host) === 0 ? host : undefined, ALPNProtocols: ['http/1.1'] })
        : connectTcp({ host, port });
    socket.setNoDelay(true);
    const timer = setTimeout(
      () => socket.destroy(new TransportError('CONNECT_TIMEOUT', `no connection within ${connectTimeoutMs} ms`)),
      connectTimeoutMs,
    );
    socket.once('close', () => clearTimeout(timer));
    return { socket, timer };
  }

  /** A request is over: its connection goes back to the idle list (or is closed), and the next queued request gets one. */
  release(connection: Connection, reusable: boolean, keepAliveTimeoutMs: number | null): void {
    connection.exchange = null;
    if (reusable && !this.closed && !connection.socket.destroyed) {
      connection.expiresAt = Date.now() + (keepAliveTimeoutMs === null ? defaultKeepAliveMs : Math.max(0, keepAliveTimeoutMs - 1_000));
      connection.socket.unref();
      this.idle.push(connection);
    } else {
      connection.socket.destroy();
    }
    this.next();
  }

  /** A connection has closed: it no longer counts, and may free a place for a queued request. */
  closedConnection(connection: Connection): void {
    this.open -= 1;
    const at = this.idle.indexOf(connection);
    if (at !== -1) this.idle.splice(at, 1);
    if (this.open === 0 && this.drained !== null) this.drained();
    this.next();
  }

  private next(): void {
    while (this.queue.length > 0) {
      const exchange = this.queue[0] as Exchange;
      if (exchange.finished) {
        this.queue.shift();
        continue;
      }
      const connection = this.take();
      if (connection === null) return;
      this.queue.shift();
      exchange.start(connection);
    }
  }
}

/** One socket and the request it carries, if any. Its listeners are added once, not per request. */
export class Connection {
  exchange: Exchange | null = null;
  /** TCP (and TLS) is up: a failure before it is a failed connect, so the request was never sent. */
  connected = false;
  expiresAt = 0;

  constructor(
    private readonly pool: Pick<Http1Transport, 'closedConnection'>,
    readonly socket: Socket,
    connectTimer: NodeJS.Timeout,
    connectEvent: 'connect' | 'secureConnect',
  ) {
    socket.once(connectEvent, () => {
      clearTimeout(connectTimer);
      this.connected = true;
    });
    socket.on('data', (bytes: Buffer) => {
      // Bytes on an idle connection belong to no request: the connection can no longer be trusted.
      if (this.exchange === null) socket.destroy();
      else this.exchange.receive(bytes);
    });
    socket.on('error', (error: Error) => this.exchange?.connectionLost(error));
    socket.on('end', () => socket.destroy());
    socket.on('close', () => {
      this.exchange?.connectionLost(null);
      this.pool.closedConnection(this);
    });
  }
}
