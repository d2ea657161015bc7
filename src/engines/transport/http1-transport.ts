/**
 * taskgate's own keep-alive HTTP/1.1 transport to one engine, the default
 * (`engine-transport.ts` says what every transport owes). A request is one
 * write of text made ahead (the engine's line and headers are fixed, so only
 * the length and body change); its reply is parsed by `ResponseParser`
 * straight off the socket's reads, and its body bytes wait in a short queue
 * until the reader takes them all at once.
 *
 * Why not only undici (the reference transport): on a stream's way to its
 * first byte, on cold caches, undici's dispatch (the pool, the request's
 * checks, the handler layers) took some 150 µs before the request was
 * written. This is the little of it an engine call needs (docs/benchmarks.md).
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
import type { IncomingHttpHeaders } from 'node:http';
import { connect as connectTcp, isIP, type Socket } from 'node:net';
import { connect as connectTls } from 'node:tls';
import { abortReason } from '../abort-reason.js';
import { stopWatching, watchAbort } from '../abort-watch.js';
import { MalformedResponseError, ResponseParser, type ResponseHead } from './http1-response-parser.js';
import { readText, TransportError, type EngineTransport, type PreparedRequest, type RequestTimeouts, type StreamedReply, type TransportOptions } from './engine-transport.js';

const PAUSE_AT_BYTES = 64 * 1024;
const defaultKeepAliveMs = 4_000;

export function createHttp1Transport(options: TransportOptions): EngineTransport {
  return new Http1Transport(options);
}

class Http1Transport implements EngineTransport {
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
    const socket = origin.protocol === 'https:' ? connectTls({ host, port, servername: isIP(host) === 0 ? host : undefined, ALPNProtocols: ['http/1.1'] }) : connectTcp({ host, port });
    socket.setNoDelay(true);
    const timer = setTimeout(() => socket.destroy(new TransportError('CONNECT_TIMEOUT', `no connection within ${connectTimeoutMs} ms`)), connectTimeoutMs);
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
class Connection {
  exchange: Exchange | null = null;
  /** TCP (and TLS) is up: a failure before it is a failed connect, so the request was never sent. */
  connected = false;
  expiresAt = 0;

  constructor(
    private readonly pool: Http1Transport,
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

/** One request and its reply: the `StreamedReply` its caller reads. */
class Exchange implements StreamedReply {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  finished = false;
  private connection: Connection | null = null;
  private readonly parser = new ResponseParser(this);
  private head: ResponseHead | null = null;
  /** The whole request is with the kernel: from here the engine may have started on it. */
  private written = false;
  private timer: NodeJS.Timeout | null = null;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private paused = false;
  private ended = false;
  private failure: { error: Error } | null = null;
  private waiter: { resolve: (buffers: Buffer[] | null) => void; reject: (error: Error) => void } | null = null;

  constructor(
    private readonly pool: Http1Transport,
    private readonly requestText: string,
    private readonly signal: AbortSignal,
    private readonly headersTimeoutMs: number,
    private readonly bodyIdleTimeoutMs: number,
    private readonly resolveHead: (reply: StreamedReply) => void,
    private readonly rejectHead: (error: Error) => void,
  ) {}

  start(connection: Connection): void {
    this.connection = connection;
    connection.exchange = this;
    connection.socket.write(this.requestText, (error) => {
      if (error == null) this.written = true;
    });
    // Set after the write: the engine is already at work while this runs.
    this.timer = setTimeout(timeOut, this.headersTimeoutMs, this);
  }

  receive(bytes: Buffer): void {
    try {
      this.parser.push(bytes);
    } catch (error) {
      this.cancel(error instanceof MalformedResponseError ? new TransportError('MALFORMED_RESPONSE', `not a valid HTTP/1.1 reply: ${error.message}`) : (error as Error));
    }
  }

  onHead(head: ResponseHead): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = this.bodyIdleTimeoutMs > 0 ? setTimeout(timeOut, this.bodyIdleTimeoutMs, this) : null;
    this.head = head;
    this.statusCode = head.statusCode;
    this.headers = head.headers;
    this.resolveHead(this);
  }

  onBody(bytes: Buffer): void {
    if (this.failure !== null) return;
    this.timer?.refresh();
    this.queue.push(bytes);
    this.queuedBytes += bytes.length;
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.resolve(this.take());
    } else if (this.queuedBytes >= PAUSE_AT_BYTES && !this.paused) {
      this.paused = true;
      this.connection?.socket.pause();
    }
  }

  onEnd(): void {
    this.ended = true;
    this.settle();
    const connection = this.connection;
    this.connection = null;
    if (connection !== null) {
      if (this.paused) connection.socket.resume();
      this.pool.release(connection, this.head?.keepAlive === true, this.head?.keepAliveTimeoutMs ?? null);
    }
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.resolve(null);
  }

  /** The socket failed or closed while this request was on it. */
  connectionLost(error: Error | null): void {
    const connection = this.connection;
    if (connection === null) return;
    if (error === null && this.parser.finish()) return; // a body that runs to the end of the connection (onEnd has run)
    this.connection = null;
    connection.exchange = null;
    this.fail(this.lostError(connection, error));
  }

  /**
   * Why the connection went: not connected, or the request not written whole,
   * means the engine never had it; after the write it may have started, even
   * on a reused connection the server was closing as the request went out.
   */
  private lostError(connection: Connection, error: Error | null): Error {
    if (error instanceof TransportError) return error;
    const system = (error as { code?: unknown } | null)?.code;
    const detail = typeof system === 'string' ? ` (${system})` : '';
    if (!connection.connected) return new TransportError('CONNECT_FAILED', `cannot connect to the engine${detail}`, error ?? undefined);
    if (!this.written) return new TransportError('WRITE_FAILED', `the request could not be written${detail}`, error ?? undefined);
    const when = this.head === null ? 'after the request was sent, before any reply' : 'mid-reply';
    return new TransportError('CONNECTION_CLOSED', `the engine closed the connection ${when}${detail}`, error ?? undefined);
  }

  read(): Promise<Buffer[] | null> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.failure !== null) return Promise.reject(this.failure.error);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  text(): Promise<string> {
    return readText(this);
  }

  cancel(reason: Error): void {
    if (this.ended || this.failure !== null) return;
    this.queue = [];
    this.queuedBytes = 0;
    const connection = this.connection;
    this.connection = null;
    if (connection !== null) {
      connection.exchange = null;
      connection.socket.destroy();
    }
    this.fail(reason);
  }

  /** The head, or the body's next bytes, did not come in time. */
  timedOut(): void {
    this.cancel(
      this.head === null
        ? new TransportError('HEADERS_TIMEOUT', `no reply within ${this.headersTimeoutMs} ms`)
        : new TransportError('BODY_TIMEOUT', `no bytes of the reply for ${this.bodyIdleTimeoutMs} ms`),
    );
  }

  /** The signal aborted (`watchAbort`). */
  handleEvent(): void {
    this.cancel(abortReason(this.signal));
  }

  fail(error: Error): void {
    if (this.failure !== null || this.ended) return;
    this.failure = { error };
    this.settle();
    if (this.head === null) {
      this.rejectHead(error);
      return;
    }
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(error);
  }

  private settle(): void {
    this.finished = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    stopWatching(this.signal, this);
  }

  private take(): Buffer[] {
    const buffers = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    if (this.paused) {
      this.paused = false;
      this.connection?.socket.resume();
    }
    return buffers;
  }
}

/** Module-level, so a request's timer makes no closure. */
function timeOut(exchange: Exchange): void {
  exchange.timedOut();
}
