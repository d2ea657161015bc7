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
 *
 * This file keeps the clients and the queue; `undici-exchange.ts` is one
 * request and its reply, `undici-errors.ts` what undici's errors mean.
 */
import { Client } from 'undici';
import { abortReason } from '../abort-reason.js';
import { watchAbort } from '../../fast-path/abort-watch.js';
import {
  TransportError,
  type EngineTransport,
  type PreparedRequest,
  type RequestTimeouts,
  type StreamedReply,
  type TransportOptions,
} from './engine-transport.js';
import { Exchange, type ConnectionOwner } from './undici-exchange.js';

export function createUndiciTransport(options: TransportOptions): EngineTransport {
  return new UndiciTransport(options);
}

/** One undici `Client`: one connection at a time (it reconnects when its socket has gone), and the exchange using it. */
export class Connection {
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

class UndiciTransport implements EngineTransport, ConnectionOwner {
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

function closedError(): TransportError {
  return new TransportError('CLOSED', 'the engine transport is closed');
}
