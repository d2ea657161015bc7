/**
 * One request to an engine whose reply is read whole: a JSON completion, a
 * model list. Over undici's dispatcher API, the body's buffers are gathered
 * as they arrive, with no stream object, no promise per read and one abort
 * listener: what `Pool.request()` and `body.text()` do, some 5 µs a call
 * cheaper (docs/benchmarks.md).
 *
 * A failure rejects with `WholeReplyError`, which says whether it came before
 * the reply's head (connecting, sending, waiting) or while its body was read,
 * so the engine can name it (`openai-engine.ts`). The undici error is its
 * `cause`, unchanged.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { abortReason } from './abort-reason.js';
import { stopWatching, watchAbort } from './abort-watch.js';

export interface WholeReply {
  statusCode: number;
  headers: IncomingHttpHeaders;
  text: string;
}

export class WholeReplyError extends Error {
  constructor(
    readonly phase: 'before-head' | 'body',
    override readonly cause: unknown,
  ) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    this.name = 'WholeReplyError';
  }
}

/** Sends the request and resolves with the whole reply; `signal` aborting cancels it at once (the caller maps that). */
export function requestWholeReply(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions, signal: AbortSignal): Promise<WholeReply> {
  return new Promise((resolve, reject) => {
    new WholeReplyReader(resolve, reject, signal).start(dispatcher, options);
  });
}

class WholeReplyReader implements Dispatcher.DispatchHandler {
  private controller: Dispatcher.DispatchController | null = null;
  private statusCode = 0;
  private headers: IncomingHttpHeaders = {};
  private readonly parts: Buffer[] = [];
  private headReceived = false;
  private settled = false;

  constructor(
    private readonly resolve: (reply: WholeReply) => void,
    private readonly reject: (error: WholeReplyError) => void,
    private readonly signal: AbortSignal,
  ) {}

  start(dispatcher: Dispatcher, options: Dispatcher.DispatchOptions): void {
    watchAbort(this.signal, this);
    dispatcher.dispatch(options, this);
  }

  /** The signal aborted: cancel the request now, or as soon as undici starts it. */
  handleEvent(): void {
    this.controller?.abort(abortReason(this.signal));
    this.fail(abortReason(this.signal));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.settled) controller.abort(abortReason(this.signal));
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // An informational head (1xx) is not the reply's.
    if (statusCode < 200) return;
    this.statusCode = statusCode;
    this.headers = headers;
    this.headReceived = true;
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.parts.push(chunk);
  }

  onResponseEnd(): void {
    if (this.settled) return;
    this.settled = true;
    stopWatching(this.signal, this);
    const { parts } = this;
    const text = parts.length === 1 ? (parts[0] as Buffer).toString('utf8') : Buffer.concat(parts).toString('utf8');
    this.resolve({ statusCode: this.statusCode, headers: this.headers, text });
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    this.fail(error);
  }

  private fail(error: unknown): void {
    if (this.settled) return;
    this.settled = true;
    stopWatching(this.signal, this);
    this.reject(new WholeReplyError(this.headReceived ? 'body' : 'before-head', error));
  }
}
