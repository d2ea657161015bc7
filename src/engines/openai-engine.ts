/**
 * The `openai` engine: any OpenAI-compatible server (vLLM, SGLang, llama.cpp
 * server, Ollama, TGI) is this one implementation configured by URL. The wire
 * format and each server's quirks live in `openai-wire.ts`; this file is the
 * transport: keep-alive HTTP/1.1 connections per engine
 * (`http1-connections.ts`), timeouts, cancellation and the mapping of every
 * failure to the error catalog.
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
 * A call queued because all `maxConcurrency` connections are busy is not
 * timed until it is sent.
 */
import { validateHeaderName, validateHeaderValue, type IncomingHttpHeaders } from 'node:http';
import {
  ClientAbortError,
  EngineError,
  EngineTimeoutError,
  EngineUnavailableError,
  GatewayError,
  InvalidRequestError,
} from '../api/errors.js';
import type { Logger } from '../log/logger.js';
import type { Engine, EngineChunk, EngineCompletion, EngineRequest } from './engine.js';
import { completionAsChunks, describeUpstreamError, parseChatCompletion, parseStreamEvent, serializeChatRequest, streamDone } from './openai-wire.js';
import { ServerSentEventDecoder } from './sse-parser.js';
import { Http1Connections, type StreamedReply } from './http1-connections.js';

export interface OpenAIEngineOptions {
  /** The `engines[].id` from the config. */
  id: string;
  /** Ends in `/v1`; `/chat/completions` and `/models` are appended. */
  baseUrl: string;
  /** Sent as `Authorization: Bearer …`. */
  apiKey?: string;
  /** Connections kept to the engine; calls beyond this wait in a queue. */
  maxConcurrency: number;
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
  /** Keep-alive connections to the engine (`http1-connections.ts`). */
  private readonly connections: Http1Connections;
  /** The request line and headers of a chat call, JSON or streamed, up to its `content-length`. */
  private readonly jsonRequestHead: string;
  private readonly streamRequestHead: string;
  /** The whole readiness request (`GET …/models`). */
  private readonly readyRequest: string;
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
    this.connections = new Http1Connections({ origin: url, maxConnections: options.maxConcurrency, connectTimeoutMs: options.connectTimeoutMs });
    const common: Record<string, string> = { ...options.headers, 'content-type': 'application/json' };
    if (options.apiKey !== undefined) common.authorization = `Bearer ${options.apiKey}`;
    this.jsonRequestHead = requestHead('POST', completionsPath, url.host, { ...common, accept: 'application/json' });
    this.streamRequestHead = requestHead('POST', completionsPath, url.host, { ...common, accept: 'text/event-stream' });
    this.readyRequest = `${requestHead('GET', this.modelsPath, url.host, { ...common, accept: 'application/json' })}\r\n`;
    this.readyTimeoutMs = Math.min(readyTimeoutMs, options.firstByteTimeoutMs);
  }

  async complete(request: EngineRequest, signal: AbortSignal): Promise<EngineCompletion> {
    if (signal.aborted) throw new ClientAbortError();
    let reply: StreamedReply;
    try {
      reply = await this.connections.request(withBody(this.jsonRequestHead, serializeChatRequest(request, false)), signal, this.options.firstByteTimeoutMs, this.options.idleTimeoutMs);
    } catch (error) {
      throw this.beforeHeadersError(error, signal, this.options.firstByteTimeoutMs);
    }
    let text: string;
    try {
      text = await reply.text();
    } catch (error) {
      throw this.duringBodyError(error, signal);
    }
    if (reply.statusCode < 200 || reply.statusCode > 299) throw this.statusError(reply.statusCode, reply.headers, text);
    return parseChatCompletion(text, this.id);
  }

  stream(request: EngineRequest, signal: AbortSignal): AsyncIterable<EngineChunk[]> {
    return this.streamChunks(request, signal);
  }

  private async *streamChunks(request: EngineRequest, signal: AbortSignal): AsyncGenerator<EngineChunk[], void, undefined> {
    if (signal.aborted) throw new ClientAbortError();
    const startedAt = performance.now();
    let reply: StreamedReply;
    try {
      // No body timeout here: the StreamWatch below times the body.
      reply = await this.connections.request(withBody(this.streamRequestHead, serializeChatRequest(request, true)), signal, this.options.firstByteTimeoutMs);
    } catch (error) {
      throw this.beforeHeadersError(error, signal, this.options.firstByteTimeoutMs);
    }
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
  }

  async checkReady(signal: AbortSignal): Promise<void> {
    let statusCode: number;
    try {
      const reply = await this.connections.request(this.readyRequest, signal, this.readyTimeoutMs, this.readyTimeoutMs);
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
    await this.connections.close();
  }

  /** The engine replied with an error status. */
  private statusError(status: number, headers: IncomingHttpHeaders, text: string): GatewayError {
    const { message, param } = describeUpstreamError(text, status);
    // Upstream messages are never logged: a validation error can quote the prompt.
    if (status === 429) {
      return new EngineUnavailableError(`Engine ${this.id} is overloaded: ${message}`, undefined, 'engine_overloaded', retryAfterOf(headers));
    }
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
    switch (errorCodeOf(error)) {
      case 'CONNECT_TIMEOUT':
        return new EngineTimeoutError(`Engine ${this.id} did not accept a connection within ${this.options.connectTimeoutMs} ms.`, error);
      case 'HEADERS_TIMEOUT':
        return new EngineTimeoutError(`Engine ${this.id} did not start replying within ${headersTimeoutMs} ms.`, error);
      case 'BODY_TIMEOUT':
        return new EngineTimeoutError(`Engine ${this.id} stopped sending its reply for ${this.options.idleTimeoutMs} ms.`, error);
      default:
        // Refused, unknown host, reset, or the socket closed before the headers.
        return new EngineUnavailableError(`Engine ${this.id} cannot be reached (${errorCodeOf(error) ?? 'connection failed'}).`, error);
    }
  }

  /** Reading a whole reply's body failed. */
  private duringBodyError(error: unknown, signal: AbortSignal): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error; // the StreamWatch's timeout
    if (errorCodeOf(error) === 'BODY_TIMEOUT') {
      return new EngineTimeoutError(`Engine ${this.id} stopped sending its reply for ${this.options.idleTimeoutMs} ms.`, error);
    }
    return new EngineError(`Engine ${this.id} closed the connection before its reply ended.`, error, 'engine_reply_truncated');
  }

  /** Reading a stream failed after the headers (our own timeouts and parse errors are already GatewayErrors). */
  private duringStreamError(error: unknown, signal: AbortSignal): GatewayError {
    if (signal.aborted) return new ClientAbortError();
    if (error instanceof GatewayError) return error;
    return new EngineError(`Engine ${this.id} closed the stream before it finished.`, error, 'engine_stream_truncated');
  }
}

/** A request's line and headers, checked once (a configured header cannot smuggle a line break). */
function requestHead(method: 'GET' | 'POST', path: string, host: string, headers: Record<string, string>): string {
  let head = `${method} ${path} HTTP/1.1\r\nhost: ${host}\r\n`;
  for (const [name, value] of Object.entries(headers)) {
    validateHeaderName(name);
    validateHeaderValue(name, value);
    head += `${name}: ${value}\r\n`;
  }
  return head;
}

/** The whole request: its head, the body's length, the body. */
function withBody(head: string, body: string): string {
  return `${head}content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function isJson(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.includes('json');
}

function errorCodeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
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
