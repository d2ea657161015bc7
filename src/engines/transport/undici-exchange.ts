/**
 * One request of the `undici` transport and its reply: undici's dispatch
 * handler on one side, the `StreamedReply` its caller reads on the other
 * (`undici-transport.ts` tells what this adds to undici for the contract).
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { abortReason } from '../abort-reason.js';
import { stopWatching } from '../../fast-path/abort-watch.js';
import { readText, TransportError, type PreparedRequest, type RequestTimeouts, type StreamedReply } from './engine-transport.js';
import type { Connection } from './undici-transport.js';
import { isMalformed, transportErrorOf } from './undici-errors.js';

const PAUSE_AT_BYTES = 64 * 1024;

/** What an exchange needs of its transport: to leave its queue, and to hand its connection back. */
export interface ConnectionOwner {
  /** A request waiting for a connection gave up. */
  dequeue(exchange: Exchange): void;
  /** An exchange is over and undici is done with its request: the connection serves the next one. */
  release(connection: Connection): void;
}

type State = 'queued' | 'dispatched' | 'head' | 'ending' | 'ended' | 'failed';

/** One request and its reply: undici's dispatch handler, and the `StreamedReply` its caller reads. */
export class Exchange implements StreamedReply, Dispatcher.DispatchHandler {
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
    private readonly transport: ConnectionOwner,
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
    if (isMalformed(error, true))
      this.fail(new TransportError('MALFORMED_RESPONSE', `bytes after a complete reply (${error.message})`, error));
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

/** Lower-case names (undici's already are), repeated fields joined with `, ` as the contract says. */
function joined(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const result: IncomingHttpHeaders = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value !== undefined) (result as Record<string, string>)[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return result;
}
