/**
 * The reference transport: the contract (`engine-transport.ts`) on undici's
 * `Client`, Node's own HTTP/1.1 client and llhttp parser. It runs the same
 * wire suite as `http1`, so either can stand in for the other.
 *
 * undici gives: keep-alive connections with a parser that refuses both
 * framings, two lengths, folded headers and bad status lines; connect,
 * head and body-gap timeouts; a check of an idle connection for bytes or a
 * close before it is reused. No redirects and no retries: v7's dispatch
 * follows none (its typings dropped `maxRedirections`, which only the
 * redirect interceptor reads) and no retry interceptor is composed, and with
 * `pipelining: 1` a written request that loses its connection fails; only
 * requests not yet written wait for the next connection.
 *
 * What this file adds for the contract:
 *   - One `Client` per connection, up to `maxConnections`, reused last-in
 *     first-out, and a queue before them that this file owns (undici's Pool
 *     would queue too, but its queued requests can only be failed by tearing
 *     a connection down, and `close` must fail them).
 *   - `requestSent`: undici calls `onRequestStart` just before it writes the
 *     request, in the same tick, so a failure before it is a connect failure
 *     and one after it a lost request, never resent.
 *   - Strictness undici lacks: a `transfer-encoding` other than chunked (it
 *     would read to the connection's end), and bytes after a complete reply:
 *     undici destroys the connection for them (`bad response`) only after
 *     handing the reply over, so the end of a body is confirmed a turn of the
 *     event loop later, once the connection is seen alive or closed for a
 *     good reason.
 *   - Known differences left: undici reads `HTTP/2.0 200` as a reply that
 *     closes its connection (llhttp takes the version; a dispatch handler
 *     cannot see it); it refuses `100 Continue` heads, which the contract
 *     allows; its head and body timers tick every half second, so a timeout
 *     fires up to a second late (engine timeouts are seconds or more).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { Client, errors, type Dispatcher } from 'undici';
import { abortReason } from '../abort-reason.js';
import { stopWatching, watchAbort } from '../abort-watch.js';
import { readText, TransportError, type EngineTransport, type PreparedRequest, type RequestTimeouts, type StreamedReply, type TransportOptions } from './engine-transport.js';

const PAUSE_AT_BYTES = 64 * 1024;

export function createUndiciTransport(options: TransportOptions): EngineTransport {
  return new UndiciTransport(options);
}

/** One undici `Client`: one connection at a time (it reconnects when its socket has gone), and the exchange using it. */
class Connection {
  readonly client: Client;
  exchange: Exchange | null = null;

  constructor(options: TransportOptions) {
    this.client = new Client(options.origin, {
      pipelining: 1,
      connectTimeout: options.connectTimeoutMs,
      // Reuse within the server's keep-alive hint less a second, else 4 s (below uvicorn's and Node's 5 s).
      keepAliveTimeout: 4_000,
      keepAliveTimeoutThreshold: 1_000,
      maxHeaderSize: 64 * 1024,
    });
    this.client.on('disconnect', (_origin: URL, _targets: unknown, error: Error) => this.exchange?.disconnected(error));
  }
}

class UndiciTransport implements EngineTransport {
  private readonly connections: Connection[] = [];
  private readonly idle: Connection[] = [];
  private readonly queue: Exchange[] = [];
  private closed = false;
  private closing: Promise<void> | null = null;

  constructor(private readonly options: TransportOptions) {}

  send(request: PreparedRequest, body: string | null, signal: AbortSignal, timeouts: RequestTimeouts): Promise<StreamedReply> {
    return new Promise((resolve, reject) => {
      if (this.closed) return reject(closedError());
      if (signal.aborted) return reject(abortReason(signal));
      const exchange = new Exchange(this, request, body, signal, timeouts, resolve, reject);
      watchAbort(signal, exchange);
      const connection = this.take();
      if (connection === null) this.queue.push(exchange);
      else exchange.start(connection);
    });
  }

  close(): Promise<void> {
    if (this.closing === null) {
      this.closed = true;
      for (const exchange of this.queue.splice(0)) exchange.fail(closedError());
      // A client's close waits for the request it carries, then closes its socket; a second close of a client rejects, so it is made once.
      this.closing = Promise.all(this.connections.map((connection) => connection.client.close())).then(() => undefined);
    }
    return this.closing;
  }

  /** A request waiting for a connection gave up. */
  dequeue(exchange: Exchange): void {
    const at = this.queue.indexOf(exchange);
    if (at !== -1) this.queue.splice(at, 1);
  }

  /** An exchange is over and undici is done with its request: the connection serves the next one. */
  release(connection: Connection): void {
    connection.exchange = null;
    const next = this.queue.shift();
    if (next !== undefined) {
      // Not from inside undici's callback that ended the last request: its client is mid-update.
      queueMicrotask(() => next.start(connection));
    } else if (!this.closed) {
      this.idle.push(connection);
    }
  }

  private take(): Connection | null {
    const connection = this.idle.pop();
    if (connection !== undefined) return connection;
    if (this.connections.length >= this.options.maxConnections) return null;
    const created = new Connection(this.options);
    this.connections.push(created);
    return created;
  }
}

type State = 'queued' | 'dispatched' | 'head' | 'ending' | 'ended' | 'failed';

/** One request and its reply: undici's dispatch handler, and the `StreamedReply` its caller reads. */
class Exchange implements StreamedReply, Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  private state: State = 'queued';
  private connection: Connection | null = null;
  private controller: Dispatcher.DispatchController | null = null;
  private sent = false;
  /** undici has ended or failed the request (its connection may carry another). */
  private undiciDone = false;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private failure: Error | null = null;
  private waiter: { resolve: (buffers: Buffer[] | null) => void; reject: (error: Error) => void } | null = null;

  constructor(
    private readonly transport: UndiciTransport,
    private readonly request: PreparedRequest,
    private readonly body: string | null,
    private readonly signal: AbortSignal,
    private readonly timeouts: RequestTimeouts,
    private readonly resolveHead: (reply: StreamedReply) => void,
    private readonly rejectHead: (error: Error) => void,
  ) {}

  start(connection: Connection): void {
    if (this.state !== 'queued') return this.transport.release(connection);
    this.state = 'dispatched';
    this.connection = connection;
    connection.exchange = this;
    connection.client.dispatch(
      {
        method: this.request.method,
        path: this.request.path,
        headers: this.request.headers,
        body: this.body ?? undefined,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyIdleMs,
      },
      this,
    );
  }

  // undici's side.

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    // Cancelled while connecting: abort before the write.
    if (this.failure !== null) return controller.abort(this.failure);
    this.sent = true;
  }

  onResponseStart(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    if (statusCode < 200) return; // 103 Early Hints: the real head follows
    const encoding = headers['transfer-encoding'];
    if (encoding !== undefined && !String(encoding).toLowerCase().trimEnd().endsWith('chunked')) {
      return controller.abort(new TransportError('MALFORMED_RESPONSE', `a transfer-encoding it cannot read (${String(encoding)})`));
    }
    this.statusCode = statusCode;
    this.headers = joined(headers);
    this.state = 'head';
    this.resolveHead(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.state !== 'head') return;
    this.queue.push(chunk);
    this.queuedBytes += chunk.length;
    const waiter = this.waiter;
    if (waiter !== null) {
      this.waiter = null;
      waiter.resolve(this.take());
    } else if (this.queuedBytes >= PAUSE_AT_BYTES) {
      controller.pause();
    }
  }

  onResponseEnd(): void {
    this.undiciDone = true;
    if (this.state !== 'head') return this.releaseIfDone();
    this.state = 'ending';
    setImmediate(confirmEnd, this);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.undiciDone = true;
    if (this.state === 'ending' || this.state === 'ended' || this.state === 'failed') return this.releaseIfDone();
    this.fail(error instanceof TransportError ? error : transportErrorOf(error, this.sent, this.state === 'head'));
  }

  /** A turn after the body's end: a connection still open had nothing after the reply. */
  confirmEnd(): void {
    if (this.state === 'ending' && this.connection?.client.stats.connected === true) this.end();
    // Otherwise its `disconnect` tells why it closed.
  }

  /** The connection this exchange holds closed. */
  disconnected(error: Error): void {
    if (this.state !== 'ending') return;
    if (isMalformed(error, true)) this.fail(new TransportError('MALFORMED_RESPONSE', `bytes after a complete reply (${error.message})`, error));
    else this.end();
  }

  // The caller's side.

  read(): Promise<Buffer[] | null> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.state === 'ended') return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  text(): Promise<string> {
    return readText(this);
  }

  cancel(reason: Error): void {
    if (this.state === 'ended' || this.state === 'failed') return;
    this.queue = [];
    this.queuedBytes = 0;
    this.fail(reason);
  }

  /** The signal aborted (`watchAbort`). */
  handleEvent(): void {
    this.cancel(abortReason(this.signal));
  }

  fail(error: Error): void {
    if (this.state === 'ended' || this.state === 'failed') return;
    const before = this.state;
    this.state = 'failed';
    this.failure = error;
    stopWatching(this.signal, this);
    if (before === 'queued') this.transport.dequeue(this);
    // Destroys the connection, so the engine sees the client go (undici then calls onResponseError, ignored here).
    if (!this.undiciDone) this.controller?.abort(error);
    if (before === 'queued' || before === 'dispatched') this.rejectHead(error);
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(error);
    this.releaseIfDone();
  }

  private end(): void {
    this.state = 'ended';
    stopWatching(this.signal, this);
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.resolve(null);
    this.releaseIfDone();
  }

  private releaseIfDone(): void {
    const connection = this.connection;
    if (connection === null || !this.undiciDone || (this.state !== 'ended' && this.state !== 'failed')) return;
    this.connection = null;
    this.transport.release(connection);
  }

  private take(): Buffer[] {
    const buffers = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    if (this.controller?.paused === true) this.controller.resume();
    return buffers;
  }
}

/** Module-level, so a reply's end makes no closure. */
function confirmEnd(exchange: Exchange): void {
  exchange.confirmEnd();
}

function closedError(): TransportError {
  return new TransportError('CLOSED', 'the engine transport is closed');
}

/** Lower-case names (undici's already are), repeated fields joined with `, ` as the contract says. */
function joined(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const result: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) (result as Record<string, string>)[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}

/** Not a reply undici's parser could read, or a reply where none was asked for (`bad response`). */
function isMalformed(error: Error, headReceived: boolean): boolean {
  const code = (error as { code?: unknown }).code;
  if (error instanceof errors.HTTPParserError) return !(headReceived && error.message.includes('EOF')); // EOF: a body cut short
  if (code === 'UND_ERR_HEADERS_OVERFLOW') return true;
  if (error instanceof errors.SocketError) return error.message.startsWith('bad ');
  // Two content-lengths fail the parser, but undici reports them as a length mismatch before any body.
  return code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' && !headReceived;
}

function transportErrorOf(error: Error, sent: boolean, headReceived: boolean): TransportError {
  const code = (error as { code?: unknown }).code;
  if (!sent) {
    if (code === 'UND_ERR_CONNECT_TIMEOUT') return new TransportError('CONNECT_TIMEOUT', `no connection to the engine: ${error.message}`, error);
    if (code === 'UND_ERR_CLOSED' || code === 'UND_ERR_DESTROYED') return new TransportError('CLOSED', 'the engine transport is closed', error);
    return new TransportError('CONNECT_FAILED', `could not connect to the engine: ${error.message}`, error);
  }
  if (code === 'UND_ERR_HEADERS_TIMEOUT') return new TransportError('HEADERS_TIMEOUT', 'no reply head in time', error);
  if (code === 'UND_ERR_BODY_TIMEOUT') return new TransportError('BODY_TIMEOUT', 'no bytes of the reply in time', error);
  if (isMalformed(error, headReceived)) return new TransportError('MALFORMED_RESPONSE', `not a valid HTTP/1.1 reply: ${error.message}`, error);
  // Once written, any other loss (closed, reset, a failed write) may come after the engine started: never a resend.
  return new TransportError('CONNECTION_CLOSED', headReceived ? 'the engine closed the connection mid-reply' : 'the engine closed the connection before replying', error);
}
