/**
 * The `openai` engine: any OpenAI-compatible server (vLLM, SGLang, llama.cpp
 * server, Ollama, TGI) is this one implementation configured by URL. What is
 * sent lives in `openai-request.ts`; the wire format of what comes back and
 * each server's quirks in `openai-wire.ts`, a stream's events read by
 * `openai-stream-reader.ts`; the HTTP client behind one contract in
 * `transport/` (taskgate's own HTTP/1.1 connections by default, undici as the
 * reference); every failure mapped to the error catalog by
 * `openai-failures.ts`. This file holds the calls' slots and their bounded
 * queue (`concurrency-gate.ts`), timeouts and cancellation.
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
 * Streams run their own timer for the body (`stream-watch.ts`): the wait for
 * the first chunk and the gaps after it need different limits, and the timer
 * only counts time spent waiting for the engine, not time the consumer (a
 * slow client) holds a chunk.
 *
 * A call queued because all `maxConcurrency` slots are busy waits at most
 * `queueTimeoutMs`, and only `maxQueue` wait; its timeouts start when it is sent.
 */
import { ClientAbortError, EngineError, EngineUnavailableError } from '../api/errors.js';
import type { Logger } from '../log/logger.js';
import type { Engine, EngineChunk, EngineCompletion, EngineRequest } from './engine.js';
import { OpenAIFailures } from './openai-failures.js';
import { prepareOpenAIRequests, serializeChatRequest } from './openai-request.js';
import { OpenAIStreamReader } from './openai-stream-reader.js';
import { completionAsChunks, parseChatCompletion } from './openai-wire.js';
import { ConcurrencyGate } from './concurrency-gate.js';
import { StreamWatch } from './stream-watch.js';
import { createTransport } from './transport/create-transport.js';
import type { EngineTransport, PreparedRequest, StreamedReply, TransportKind } from './transport/engine-transport.js';

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
  private readonly failures: OpenAIFailures;

  constructor(
    private readonly options: OpenAIEngineOptions,
    logger: Logger,
  ) {
    this.id = options.id;
    this.failures = new OpenAIFailures(options.id, options, logger.child({ engine: options.id }));
    const url = new URL(options.baseUrl);
    // One connection more than the calls: the readiness check never waits behind generations.
    this.transport = createTransport(options.transport ?? 'http1', {
      origin: new URL(url.origin),
      maxConnections: options.maxConcurrency + 1,
      connectTimeoutMs: options.connectTimeoutMs,
    });
    this.gate = new ConcurrencyGate({
      name: options.id,
      maxConcurrent: options.maxConcurrency,
      maxQueue: options.maxQueue ?? 256,
      queueTimeoutMs: options.queueTimeoutMs ?? 30_000,
    });
    const requests = prepareOpenAIRequests(url, options.headers, options.apiKey);
    this.jsonRequest = requests.json;
    this.streamRequest = requests.stream;
    this.readyRequest = requests.ready;
    this.modelsPath = requests.modelsPath;
    this.readyTimeoutMs = Math.min(readyTimeoutMs, options.firstByteTimeoutMs);
  }

  async complete(request: EngineRequest, signal: AbortSignal): Promise<EngineCompletion> {
    if (signal.aborted) throw new ClientAbortError();
    const entered = this.gate.enter(signal);
    if (entered !== true) await entered;
    try {
      let reply: StreamedReply;
      try {
        reply = await this.transport.send(this.jsonRequest, serializeChatRequest(request, false), signal, {
          headersMs: this.options.firstByteTimeoutMs,
          bodyIdleMs: this.options.idleTimeoutMs,
        });
      } catch (error) {
        throw this.failures.beforeHeadersError(error, signal, this.options.firstByteTimeoutMs);
      }
      this.failures.refuseEncoded(reply);
      let text: string;
      try {
        text = await reply.text();
      } catch (error) {
        throw this.failures.duringBodyError(error, signal);
      }
      if (reply.statusCode < 200 || reply.statusCode > 299) throw this.failures.statusError(reply.statusCode, reply.headers, text);
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
        reply = await this.transport.send(this.streamRequest, serializeChatRequest(request, true), signal, {
          headersMs: this.options.firstByteTimeoutMs,
          bodyIdleMs: 0,
        });
      } catch (error) {
        throw this.failures.beforeHeadersError(error, signal, this.options.firstByteTimeoutMs);
      }
      this.failures.refuseEncoded(reply);
      const firstChunkWithinMs = Math.max(1, this.options.firstByteTimeoutMs - (performance.now() - startedAt));
      const watch = new StreamWatch(
        reply,
        this.id,
        this.options.firstByteTimeoutMs,
        firstChunkWithinMs,
        this.options.idleTimeoutMs,
        drainAfterDoneMs,
      );
      // An error status, or JSON where SSE was asked for (a server or proxy
      // without streaming, or an error body sent with 200): read it whole,
      // within the first-byte deadline.
      if (reply.statusCode < 200 || reply.statusCode > 299 || isJson(reply.headers['content-type'])) {
        let text: string;
        try {
          text = await reply.text();
        } catch (error) {
          throw this.failures.duringBodyError(error, signal);
        } finally {
          watch.stop();
        }
        if (reply.statusCode < 200 || reply.statusCode > 299) throw this.failures.statusError(reply.statusCode, reply.headers, text);
        const chunks = completionAsChunks(parseChatCompletion(text, this.id));
        if (chunks.length > 0) yield chunks;
        return;
      }

      const events = new OpenAIStreamReader(this.id, watch);
      let bodyEnded = false;
      try {
        while (!bodyEnded) {
          const buffers = await reply.read();
          if (buffers === null) bodyEnded = true;
          events.push(buffers);
          // Every event of this read, in one batch. One that fails to parse is
          // thrown after the batch before it has gone out, as if read alone.
          const batch = events.batch();
          if (batch.length > 0) {
            watch.consumerHasChunk = true;
            yield batch;
            watch.consumerHasChunk = false;
            // A batch must not outlive an abort that came while the consumer held the one before.
            if (signal.aborted) throw new ClientAbortError();
            if (!events.sawDone) watch.waitingAgain();
          }
          if (events.failure !== null) throw events.failure.error;
        }
      } catch (error) {
        if (events.sawDone && !signal.aborted) return; // the reply was complete; only the drain failed
        throw this.failures.duringStreamError(error, signal);
      } finally {
        watch.stop();
        // Cancelling before the end aborts the upstream request (the server sees the socket close).
        if (!bodyEnded)
          reply.cancel(new EngineError(`Stream from engine ${this.id} stopped by taskgate.`, undefined, 'engine_stream_stopped'));
      }
      events.checkEnd();
    } finally {
      this.gate.leave();
    }
  }

  async checkReady(signal: AbortSignal): Promise<void> {
    let statusCode: number;
    try {
      const reply = await this.transport.send(this.readyRequest, null, signal, {
        headersMs: this.readyTimeoutMs,
        bodyIdleMs: this.readyTimeoutMs,
      });
      statusCode = reply.statusCode;
      // Read to its end, so the connection is kept for the next call.
      await reply.text();
    } catch (error) {
      throw this.failures.beforeHeadersError(error, signal, this.readyTimeoutMs);
    }
    if (statusCode !== 200) {
      throw new EngineUnavailableError(`Engine ${this.id} is not ready: GET ${this.modelsPath} replied ${statusCode}.`);
    }
  }

  async close(): Promise<void> {
    await this.transport.close();
  }
}

function isJson(contentType: string | string[] | undefined): boolean {
  return typeof contentType === 'string' && contentType.includes('json');
}
