/**
 * The `openai` engine: any OpenAI-compatible server (vLLM, SGLang, llama.cpp
 * server, Ollama, TGI) is this one implementation configured by URL. The wire
 * format and each server's quirks live in `openai-wire.ts`; the HTTP client
 * behind one contract in `transport/` (taskgate's own HTTP/1.1 connections by
 * default, undici as the reference). This file holds the calls' slots and
 * their bounded queue (`concurrency-gate.ts`), timeouts, cancellation and
 * the mapping of every failure to the error catalog.
 *
 * One generation per call: a failure is `resendable` (the pool may try
 * another replica) only when the engine provably did not start the request:
 * the connection was refused or never made, the write failed, the queue here
 * was full, or the engine refused it with 429 or 503. A connection closed
 * after the request went out is a 502 `engine_connection_closed`; a timeout
 * after it, a 504; a reply that is not valid HTTP/1.1 or not a completion, a
 * 502: never sent again, because the engine may have generated.
 *
 * Timeouts:
 *   - `connectTimeoutMs`: TCP/TLS connect;
 *   - `firstByteTimeoutMs`: until the response head and, for streams, until
 *     the first chunk. Servers send the head of a non-streamed reply only once
 *     it is fully generated, so for `complete()` this bounds the whole
 *     generation;
 *   - `idleTimeoutMs`: the longest gap between two stream chunks, and between
 *     the body bytes of a whole reply (written at once, so it amounts to the
 *     whole read).
 * Streams run their own timer for the body: the wait for the first chunk and
 * the gaps after it need different limits, and the timer only counts time
 * spent waiting for the engine, not time the consumer (a slow client) holds a
 * chunk.
 *
 * A call queued because all `maxConcurrency` slots are busy waits at most
 * `queueTimeoutMs`, and only `maxQueue` wait; its timeouts start when it is sent.
 */
import type { IncomingHttpHeaders } from 'node:http';
import {
  ClientAbortError,
  EngineError,
  EngineOverloadedError,
  EngineTimeoutError,
  EngineUnavailableError,
  GatewayError,
  InvalidRequestError,
} from '../api/errors.js';
import type { Logger } from '../log/logger.js';
import type { Engine, EngineChunk, EngineCompletion, EngineRequest } from './engine.js';
import { completionAsChunks, describeUpstreamError, parseChatCompletion, parseStreamEvent, serializeChatRequest, streamDone } from './openai-wire.js';
import { ServerSentEventDecoder } from './sse-parser.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import { createTransport } from './transport/create-transport.js';
import { PreparedRequest, TransportError, type EngineTransport, type StreamedReply, type TransportKind } from './transport/engine-transport.js';

export interface OpenAIEngineOptions {
  /** The `engines[].id` from the config. */
  id: string;
  /** Ends in `/v1`; `/chat/completions` and `/models` are appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** Calls sent to the engine at once; calls beyond this wait in a queue. */
  maxConcurrency: number;
  /** Calls that may wait for a slot (default 256); past it, 503 `engine_overloaded`. */
  maxQueue?: number;
  /** The longest a call waits for a slot (default 30 s); then 503 `engine_overloaded`. */
  queueTimeoutMs?: number;
  /** The HTTP client (default `http1`, taskgate's own; `undici` the reference). */
  transport?: TransportKind;
  connectTimeoutMs: number;
  /** Until the response headers, and for streams until the first chunk. */
  firstByteTimeoutMs: number;
  /** The longest gap between two stream chunks; also the body read of a whole reply. */
  idleTimeoutMs: number;
  /** Extra headers sent with every request. */
  headers?: Record<string, string>;
}

/** `/readyz` must answer quickly even when generation timeouts are minutes long. */
const readyTimeoutMs = 5_000;
/** After `[DONE]` the rest of the body (normally nothing) is read to keep the socket; this long at most. */
const drainAfterDoneMs = 1_000;

export function createOpenAIEngine(options: OpenAIEngineOptions, logger: Logger): Engine {
  return new OpenAIEngine(options, logger);
}

class OpenAIEngine implements Engine {
  readonly id: string;
  /** Connections to the engine (`transport/`). */
  private readonly transport: EngineTransport;
  private readonly gate: ConcurrencyGate;
  /** A chat call, JSON or streamed, and the readiness check (`GET …/models`): method, path and headers made once. */
  private readonly jsonRequest: PreparedRequest;
  private readonly streamRequest: PreparedRequest;
  private readonly readyRequest: PreparedRequest;
  private readonly readyTimeoutMs: number;
  private readonly modelsPath: string;
  private readonly logger: Logger;

  constructor(
    private readonly options: OpenAIEngineOptions,
    logger: Logger,
  ) {
    this.id = options.id;
    this.logger = logger.child({ engine: options.id });
    const url = new URL(options.baseUrl);
    const prefix = url.pathname.replace(/\/+$/, '');
    const completionsPath = `${prefix}/chat/completions`;
    this.modelsPath = `${prefix}/models`;
    // One connection more than the calls: the readiness check never waits behind generations.
    this.transport = createTransport(options.transport ?? 'http1', { origin: new URL(url.origin), maxConnections: options.maxConcurrency + 1, connectTimeoutMs: options.connectTimeoutMs });
    this.gate = new ConcurrencyGate({ name: options.id, maxConcurrent: options.maxConcurrency, maxQueue: options.maxQueue ?? 256, queueTimeoutMs: options.queueTimeoutMs ?? 30_000 });
    // `identity`: a proxy in front of the engine must not compress what taskgate reads as it arrives.
    const common: Record<string, string> = { ...options.headers, 'content-type': 'application/json', 'accept-encoding': 'identity' };
    if (options.apiKey !== undefined) common.authorization = `Bearer ${options.apiKey}`;
    this.jsonRequest = new PreparedRequest('POST', completionsPath, { ...common, accept: 'application/json' }, url.host);
    this.streamRequest = new PreparedRequest('POST', completionsPath, { ...common, accept: 'text/event-stream' }, url.host);
    this.readyRequest = new PreparedRequest('GET', this.modelsPath, { ...common, accept: 'application/json' }, url.host);
    this.readyTimeoutMs = Math.min(readyTimeoutMs, options.firstByteTimeoutMs);
  }

  async complete(request: EngineRequest, signal: AbortSignal): Promise<EngineCompletion> {
    if (signal.aborted) throw new ClientAbortError();
    const entered = this.gate.enter(signal);
    if (entered !== true) await entered;
    try {
      let reply: StreamedReply;
      try {
        reply = await this.transport.send(this.jsonRequest, serializeChatRequest(request, false), signal, { headersMs: this.options.firstByteTimeoutMs, bodyIdleMs: this.options.idleTimeoutMs });
      } catch (error) {
        throw this.beforeHeadersError(error, signal, this.options.firstByteTimeoutMs);
      }
      this.refuseEncoded(reply);
      let text: string;
      try {
        text = await reply.text();
      } catch (error) {
        throw this.duringBodyError(error, signal);
      }
      if (reply.statusCode < 200 || reply.statusCode > 299) throw this.statusError(reply.statusCode, reply.headers, text);
      return parseChatCompletion(text, this.id);
    } finally {
      this.gate.leave();
    }
  }

  stream(request: EngineRequest, signal: AbortSignal): AsyncIterable<EngineChunk[]> {
    return this.streamChunks(request, signal);
  }

  private async *streamChunks(request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineChunk[], void, undefined> {
    if (signal.aborted) throw new ClientAbortError();
    const entered = this.gate.enter(signal);
    if (entered !== true) await entered;
    // The slot is held until the stream ends, however it ends.
    try {
      const startedAt = performance.now();
      let reply: StreamedReply;
      try {
        // No body timeout here: the StreamWatch below times the body.
        reply = await this.transport.send(this.streamRequest, serializeChatRequest(request, true), signal, { headersMs: this.options.firstByteTimeoutMs, bodyIdleMs: 0 });
      } catch (error) {
        throw this.beforeHeadersError(error, signal, this.options.firstByteTimeoutMs);
      }
      this.refuseEncoded(reply);
      const firstChunkWithinMs = Math.max(1, this.options.firstByteTimeoutMs - (performance.now() - startedAt));
      const watch = new StreamWatch(reply, this.id, this.options.firstByteTimeoutMs, firstChunkWithinMs, this.options.idleTimeoutMs, drainAfterDoneMs);
      // An error status, or JSON where SSE was asked for (a server or proxy
      // without streaming, or an error body sent with 200): read it whole,
      // within the first-byte deadline.
      if (reply.statusCode < 200 || reply.statusCode > 299 || isJson(reply.headers['content-type'])) {
        let text: string;
        try {
          text = await reply.text();
        } catch (error) {
          throw this.duringBodyError(error, signal);
        } finally {
          watch.stop();
        }
        if (reply.statusCode < 200 || reply.statusCode > 299) throw this.statusError(reply.statusCode, reply.headers, text);
        const chunks = completionAsChunks(parseChatCompletion(text, this.id));
        if (chunks.length > 0) yield chunks;
        return;
      }

      const decoder = new ServerSentEventDecoder();
      let bodyEnded = false;
      let sawEvent = false;
      let sawDone = false;
      let firstChunk = true;
      /** Choices seen, and how many of them got a finish_reason (see the end-of-body check). */
      let choicesSeen = 0;
      let choicesFinished = 0;
      try {
        while (!bodyEnded) {
          const buffers = await reply.read();
          if (buffers === null) {
            bodyEnded = true;
            decoder.end();
          } else {
            // One push for the whole read: the decoder's text is joined and scanned once, not once per buffer.
            decoder.push(buffers.length === 1 ? (buffers[0] as Buffer) : Buffer.concat(buffers));
          }
          // Every event of this read, in one batch. One that fails to parse is
          // thrown after the batch before it has gone out, as if read alone.
          const batch: EngineChunk[] = [];
          let failure: { error: unknown } | null = null;
          for (let data = decoder.nextEvent(); data !== null; data = decoder.nextEvent()) {
            // Events after `[DONE]` are ignored; the body is only read to its end
            // so the connection can be reused.
            sawEvent = true;
            if (sawDone) continue;
            if (data === streamDone) {
              sawDone = true;
              watch.drain();
              continue;
            }
            let chunk: EngineChunk | null;
            try {
              chunk = parseStreamEvent(data, this.id);
            } catch (error) {
              failure = { error };
              break;
            }
            if (chunk === null) continue;
            for (const choice of chunk.choices) {
              if (choice.index >= choicesSeen) choicesSeen = choice.index + 1;
              if (choice.finish_reason !== null) choicesFinished += 1;
            }
            if (firstChunk) watch.firstChunkArrived();
            firstChunk = false;
            batch.push(chunk);
          }
          if (batch.length > 0) {
            watch.consumerHasChunk = true;
            yield batch;
            watch.consumerHasChunk = false;
            // A batch must not outlive an abort that came while the consumer held the one before.
            if (signal.aborted) throw new ClientAbortError();
            if (!sawDone) watch.waitingAgain();
          }
          if (failure !== null) throw failure.error;
        }
      } catch (error) {
        if (sawDone && !signal.aborted) return; // the reply was complete; only the drain failed
        throw this.duringStreamError(error, signal);
      } finally {
        watch.stop();
        // Cancelling before the end aborts the upstream request (the server sees the socket close).
        if (!bodyEnded) reply.cancel(new EngineError(`Stream from engine ${this.id} stopped by taskgate.`, undefined, 'engine_stream_stopped'));
      }
      if (!sawEvent) throw new EngineError(`Engine ${this.id} sent a stream without a single event.`, undefined, 'engine_bad_reply');
      // A server that ends the body without `[DONE]` after every choice has
      // finished is done (llama.cpp before September 2024, ik_llama.cpp,
      // llama-box). Anything else ending early is a truncated reply.
      if (!sawDone && (choicesSeen === 0 || choicesFinished < choicesSeen)) {
        throw new EngineError(`Engine ${this.id} ended the stream before it finished.`, undefined, 'engine_stream_truncated');
      }
    } finally {
      this.gate.leave();
    }
  }

  async checkReady(signal: AbortSignal): Promise<void> {
    let statusCode: number;
    try {
      const reply = await this.transport.send(this.readyRequest, null, signal, { headersMs: this.readyTimeoutMs, bodyIdleMs: this.readyTimeoutMs });
      statusCode = reply.statusCode;
      // Read to its end, so the connection is kept for the next call.
      await reply.text();
    } catch (error) {
      throw this.beforeHeadersError(error, signal, this.readyTimeoutMs);
    }
    if (statusCode !== 200) {
      throw new EngineUnavailableError(`Engine ${this.id} is not ready: GET ${this.modelsPath} replied ${statusCode}.`);
    }
  }

  async close(): Promise<void> {
    await this.transport.close();
  }

  /** A compressed body is read by nothing here (taskgate asks for `identity`): a 502, and the request cancelled. */
  private refuseEncoded(reply: StreamedReply): void {
    const encoding = reply.headers['content-encoding'];
    if (encoding === undefined || encoding.trim().toLowerCase() === 'identity') return;
    const error = new EngineError(`Engine ${this.id} sent its reply with content-encoding '${encoding}', which taskgate does not accept.`, undefined, 'engine_bad_reply');
    reply.cancel(error);
    throw error;
  }

  /** The engine replied with an error status. */
  private statusError(status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
    const { message, param } = describeUpstreamError(text, status);
    // Upstream messages are never logged: a validation error can quote the prompt.
    // 429 and 503 are refusals before any work: another replica may take the call.
    if (status === 429) return new EngineOverloadedError(`Engine ${this.id} is overloaded: ${message}`, retryAfterOf(headers) ?? 1);
    if (status === 503) return new EngineUnavailableError(`Engine ${this.id} is unavailable (HTTP 503): ${message}`, undefined, 'engine_unavailable', retryAfterOf(headers));
    if (status === 401 || status === 403) {
      // Our own credentials for the engine are wrong: a configuration error,
      // not the caller's, who would otherwise be told their request is invalid.
      this.logger.error('engine refused the configured credentials', { status });
      return new EngineError(`Engine ${this.id} refused taskgate's credentials (HTTP ${status}).`, undefined, 'engine_auth_failed');
    }
    if (status === 408) return new EngineTimeoutError(`Engine ${this.id} timed out the request: ${message}`);
    if (status >= 400 && status < 500) {
      // 404 is usually a model name the engine does not serve: a catalog
      // mistake worth a warning, though the caller still gets the message.
      if (status === 404) this.logger.warn('engine replied 404: check served_by names and base_url', { status });
      return new InvalidRequestError(message, param, 'upstream_invalid_request');
    }
    if (status >= 500) return new EngineError(`Engine ${this.id} failed (HTTP ${status}): ${message}`);
    return new EngineError(`Engine ${this.id} replied with unexpected HTTP ${status}.`, undefined, 'engine_bad_reply');
  }

  /** Connecting, sending or waiting for the headers failed. */
  private beforeHeadersError(error: unknown, signal: AbortSignal, headersTimeoutMs: number): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error;
    const engine = `Engine ${this.id}`;
    const code = error instanceof TransportError ? error.code : undefined;
    switch (code) {
      case 'CONNECT_TIMEOUT':
        return new EngineTimeoutError(`${engine} did not accept a connection within ${this.options.connectTimeoutMs} ms.`, error, true);
      case 'CONNECT_FAILED':
      case 'WRITE_FAILED':
        return new EngineUnavailableError(`${engine} cannot be reached (${causeCodeOf(error) ?? code.toLowerCase()}).`, error);
      case 'CLOSED':
        return new EngineUnavailableError(`${engine} is shutting down.`, error);
      case 'HEADERS_TIMEOUT':
        return new EngineTimeoutError(`${engine} did not start replying within ${headersTimeoutMs} ms.`, error);
      case 'BODY_TIMEOUT':
        return new EngineTimeoutError(`${engine} stopped sending its reply for ${this.options.idleTimeoutMs} ms.`, error);
      case 'MALFORMED_RESPONSE':
        return new EngineError(`${engine} sent a reply that is not valid HTTP/1.1 (${(error as Error).message}).`, error, 'engine_bad_reply');
      default:
        // After the request was written: the engine may have started on it, so it is not sent again.
        return new EngineError(`${engine} closed the connection after it received the request, before replying.`, error, 'engine_connection_closed');
    }
  }

  /** Reading a whole reply's body failed. */
  private duringBodyError(error: unknown, signal: AbortSignal): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error; // the StreamWatch's timeout
    if (error instanceof TransportError && error.code === 'BODY_TIMEOUT') {
      return new EngineTimeoutError(`Engine ${this.id} stopped sending its reply for ${this.options.idleTimeoutMs} ms.`, error);
    }
    if (error instanceof TransportError && error.code === 'MALFORMED_RESPONSE') {
      return new EngineError(`Engine ${this.id} sent a reply that is not valid HTTP/1.1 (${error.message}).`, error, 'engine_bad_reply');
    }
    return new EngineError(`Engine ${this.id} closed the connection before its reply ended.`, error, 'engine_reply_truncated');
  }

  /** Reading a stream failed after the headers (our own timeouts and parse errors are already GatewayErrors). */
  private duringStreamError(error: unknown, signal: AbortSignal): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error;
    if (error instanceof TransportError && error.code === 'MALFORMED_RESPONSE') {
      return new EngineError(`Engine ${this.id} sent a stream that is not valid HTTP/1.1 (${error.message}).`, error, 'engine_bad_reply');
    }
    return new EngineError(`Engine ${this.id} closed the stream before it finished.`, error, 'engine_stream_truncated');
  }
}

/** The system error under a transport's (`ECONNREFUSED`), when there is one. */
function causeCodeOf(error: unknown): string | undefined {
  const code = ((error as Error).cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function isJson(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.includes('json');
}

/** `retry-after` in whole seconds, when the engine sent one. */
function retryAfterOf(headers: IncomingHttpHeaders): number | undefined {
  const value = headers['retry-after'];
  const seconds = typeof value === 'string' ? Number(value) : Number.NaN;
  return Number.isFinite(seconds) && seconds >= 0 ? Math.ceil(seconds) : undefined;
}

/**
 * The stream's timer: first the deadline for the first chunk, then the
 * longest gap between chunks, then, after `[DONE]`, a short wait for the
 * body's end. While the consumer holds a chunk the wait does not count, so
 * only time spent waiting for the engine does. Passing a deadline cancels
 * the reply with an EngineTimeoutError, which aborts the upstream request and
 * surfaces from the pending read.
 *
 * One timer per stream: a new deadline only moves a number, and the timer,
 * when it fires, checks the deadline and re-arms for what is left. It waits
 * at most `checkEveryMs` (the idle limit or the wait after `[DONE]`,
 * whichever is shorter), so no deadline set later can fall before the timer
 * fires. Re-arming a Node timer at each phase cost a stream three setTimeout
 * and clearTimeout pairs.
 */
class StreamWatch {
  consumerHasChunk = false;
  private timer: NodeJS.Timeout;
  private deadline: number;
  /** What the stream waits for; the timeout's message is written only if it fires. */
  private waitingFor: 'first chunk' | 'next chunk' | 'end after [DONE]' = 'first chunk';
  private readonly checkEveryMs: number;

  constructor(
    readonly reply: Pick<StreamedReply, 'cancel'>,
    private readonly engineId: string,
    private readonly firstByteTimeoutMs: number,
    firstChunkWithinMs: number,
    private readonly idleTimeoutMs: number,
    private readonly drainWithinMs: number,
  ) {
    this.checkEveryMs = Math.min(idleTimeoutMs, drainWithinMs);
    this.deadline = performance.now() + firstChunkWithinMs;
    this.timer = setTimeout(onStreamWatchTimeout, Math.min(firstChunkWithinMs, this.checkEveryMs), this);
  }

  firstChunkArrived(): void {
    this.waitingFor = 'next chunk';
    this.waitingAgain();
  }

  /** The consumer asked for the next chunk: the gap is measured from now. */
  waitingAgain(): void {
    this.deadline = performance.now() + this.idleTimeoutMs;
  }

  /** After `[DONE]`: a short deadline for the body's end. */
  drain(): void {
    this.waitingFor = 'end after [DONE]';
    this.deadline = performance.now() + this.drainWithinMs;
  }

  timedOut(): void {
    const left = this.deadline - performance.now();
    if (this.consumerHasChunk || left > 0) {
      this.timer = setTimeout(onStreamWatchTimeout, this.consumerHasChunk ? this.checkEveryMs : Math.min(Math.ceil(left), this.checkEveryMs), this);
      return;
    }
    const engine = `Engine ${this.engineId}`;
    const message =
      this.waitingFor === 'first chunk' ? `${engine} sent no first chunk within ${this.firstByteTimeoutMs} ms.`
      : this.waitingFor === 'next chunk' ? `${engine} sent nothing for ${this.idleTimeoutMs} ms in the middle of a stream.`
      : `${engine} kept the stream open after [DONE].`;
    this.reply.cancel(new EngineTimeoutError(message));
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

/** Module-level so arming a timer makes no closure per stream. */
function onStreamWatchTimeout(watch: StreamWatch): void {
  watch.timedOut();
}
