/**
 * One request to an engine whose reply is read as it arrives: a stream of
 * server-sent events. Over undici's dispatcher API, the bytes of each network
 * read wait in a short queue until the reader takes them, all at once, with
 * no stream object between; a reader that falls behind (a slow client) pauses
 * the socket, and taking the queue resumes it. What `Pool.request()` and its
 * Readable body do, with one step per read instead of several
 * (docs/benchmarks.md).
 *
 * `requestStreamedReply` resolves at the reply's head, and rejects with the
 * undici error when connecting, sending or waiting for the head fails. After
 * the head, a failure (the connection lost, `cancel`, the signal) rejects the
 * pending or next `read`.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { abortReason } from './abort-reason.js';
import { stopWatching, watchAbort } from './abort-watch.js';

/** Queued bytes past which the socket is paused until the reader takes them. */
const PAUSE_AT_BYTES = 64 * 1024;

export interface StreamedReply {
  readonly statusCode: number;
  readonly headers: IncomingHttpHeaders;
  /** Every buffer that arrived since the last read (waiting for one when none has), or null once the body has ended. */
  read(): Promise<Buffer[] | null>;
  /** The rest of the body as text. */
  text(): Promise<string>;
  /** Stops the reply: the request is cancelled (the engine sees its connection close), what was queued is dropped, and reads reject with `reason`. */
  cancel(reason: Error): void;
}

/** Sends the request; resolves once the reply's head is in. `signal` aborting cancels it at any point. */
export function requestStreamedReply(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal): Promise<StreamedReply> {
  return new Promise((resolve, reject) => {
    const reader = new StreamedReplyReader(resolve, reject, signal);
    watchAbort(signal, reader);
    dispatcher.dispatch(options, reader);
  });
}

class StreamedReplyReader implements Dispatcher.DispatchHandler, StreamedReply {
  statusCode = 0;
  headers: IncomingHttpHeaders = {};
  private controller: Dispatcher.DispatchController | null = null;
  private queue: Buffer[] = [];
  private queuedBytes = 0;
  private ended = false;
  private failure: { error: Error } | null = null;
  private headReceived = false;
  private waiter: { resolve: (buffers: Buffer[] | null) => void; reject: (error: Error) => void } | null = null;

  constructor(
    private readonly resolveHead: (reply: StreamedReply) => void,
    private readonly rejectHead: (error: Error) => void,
    private readonly signal: AbortSignal,
  ) {}

  /** The signal aborted. */
  handleEvent(): void {
    this.cancel(abortReason(this.signal));
  }

  cancel(reason: Error): void {
    if (this.ended || this.failure !== null) return;
    // What is queued is not wanted any more: reads reject from now on.
    this.queue = [];
    this.queuedBytes = 0;
    this.controller?.abort(reason);
    this.fail(reason);
  }

  read(): Promise<Buffer[] | null> {
    if (this.queue.length > 0) return Promise.resolve(this.take());
    if (this.failure !== null) return Promise.reject(this.failure.error);
    if (this.ended) return Promise.resolve(null);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  async text(): Promise<string> {
    const parts: Buffer[] = [];
    for (let buffers = await this.read(); buffers !== null; buffers = await this.read()) parts.push(...buffers);
    return Buffer.concat(parts).toString('utf8');
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.failure !== null) controller.abort(this.failure.error);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational head (1xx) is not the reply's.
    if (statusCode < 200 || this.failure !== null) return;
    this.statusCode = statusCode;
    this.headers = headers;
    this.headReceived = true;
    this.resolveHead(this);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
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
    this.ended = true;
    stopWatching(this.signal, this);
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.resolve(null);
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  private take(): Buffer[] {
    const buffers = this.queue;
    this.queue = [];
    this.queuedBytes = 0;
    if (this.controller?.paused === true) this.controller.resume();
    return buffers;
  }

  private fail(error: Error): void {
    if (this.failure !== null || this.ended) return;
    this.failure = { error };
    stopWatching(this.signal, this);
    if (!this.headReceived) {
      this.rejectHead(error);
      return;
    }
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(error);
  }
}
