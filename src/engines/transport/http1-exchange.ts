/**
 * One request of the `http1` transport and its reply, the `StreamedReply`
 * its caller reads: written on a connection the transport gives it, parsed
 * by `ResponseParser` straight off the socket's reads, its body bytes queued
 * until the reader takes them all at once (`http1-transport.ts` tells the
 * rules: pausing, timeouts, cancellation).
 */
import type { IncomingHttpHeaders } from 'node:http';
import { abortReason } from '../abort-reason.js';
import { stopWatching } from '../../fast-path/abort-watch.js';
import { MalformedResponseError, ResponseParser, type ResponseHead } from './http1-response-parser.js';
import type { Connection } from './http1-transport.js';
import { readText, TransportError, type StreamedReply } from './engine-transport.js';

const PAUSE_AT_BYTES = 64 * 1024;

/** What an exchange needs of its transport: to hand its connection back when the reply is over. */
export interface ConnectionOwner {
  release(connection: Connection, reusable: boolean, keepAliveTimeoutMs: number | null): void;
}

/** One request and its reply: the `StreamedReply` its caller reads. */
export class Exchange implements StreamedReply {
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
    private readonly pool: ConnectionOwner,
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
      this.cancel(
        error instanceof MalformedResponseError
          ? new TransportError('MALFORMED_RESPONSE', `not a valid HTTP/1.1 reply: ${error.message}`)
          : (error as Error),
      );
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
