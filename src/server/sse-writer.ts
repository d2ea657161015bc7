/**
 * The one module that writes server-sent events to a client. Engines yield
 * typed chunks; this turns each into a `chat.completion.chunk` event, with the
 * gateway's id, `created` and canonical model spliced in as a precomputed
 * prefix rather than re-serialising a whole object per event.
 *
 * Events that arrive together (one network read from the engine usually holds
 * several) leave in one socket write: the response is corked at the first
 * write of an event-loop turn and uncorked when the turn's I/O is done, which
 * saves a system call per event without holding any event back.
 *
 * It also keeps the stream alive (a `: ping` comment after a quiet interval),
 * honours backpressure, and ends a failed stream with an `error` event and no
 * `[DONE]`, so no client mistakes a failure for a complete reply.
 */
import { once } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RequestNotes } from '../api/chat-types.js';
import { ReplyChunkShaper } from '../api/chat-reply.js';
import { toErrorBody, type GatewayError } from '../api/errors.js';
import type { EngineChunk } from '../engines/engine.js';

export interface SseWriterOptions {
  id: string;
  created: number;
  model: string;
  /** Echoed on the first chunk. */
  metadata?: Record<string, string>;
  /** How the request was written: custom and legacy calls go out in the caller's form (`chat-reply.ts`). */
  notes?: RequestNotes;
  /** Whether the client asked for the final usage chunk. */
  includeUsage: boolean;
  pingIntervalMs: number;
}

export class SseWriter {
  private readonly prefix: string;
  private firstChunk = true;
  private readonly shaper: ReplyChunkShaper | undefined;
  private lastWriteAt = Date.now();
  private readonly ping: NodeJS.Timeout;
  private corked = false;
  private readonly uncork = () => {
    this.corked = false;
    this.response.uncork();
  };

  constructor(
    private readonly response: ServerResponse,
    private readonly options: SseWriterOptions,
    headers: OutgoingHttpHeaders,
  ) {
    this.shaper = ReplyChunkShaper.forStream(options.notes);
    this.prefix = `data: {"id":${JSON.stringify(options.id)},"object":"chat.completion.chunk","created":${options.created},"model":${JSON.stringify(options.model)}`;
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache';
    headers['x-accel-buffering'] = 'no';
    response.writeHead(200, headers);
    response.flushHeaders();
    this.ping = setInterval(() => {
      if (Date.now() - this.lastWriteAt >= options.pingIntervalMs) this.write(': ping\n\n');
    }, Math.max(50, Math.floor(options.pingIntervalMs / 3)));
    this.ping.unref();
  }

  /** Writes one chunk; returns a promise only when the socket is full, resolved once it can take more. */
  writeChunk(chunk: EngineChunk, signal: AbortSignal): Promise<void> | undefined {
    const usageOnly = chunk.choices.length === 0;
    if (usageOnly && (!this.options.includeUsage || chunk.usage == null)) return undefined;
    if (this.firstChunk && !usageOnly) {
      const first = chunk.choices[0];
      if (first !== undefined && first.delta.role === undefined) first.delta = { role: 'assistant', ...first.delta };
    }
    const choices = this.shaper === undefined ? chunk.choices : this.shaper.shape(chunk.choices);
    let event = `${this.prefix},"choices":${JSON.stringify(choices)}`;
    if (usageOnly) event += `,"usage":${JSON.stringify(chunk.usage)}`;
    if (chunk.system_fingerprint != null) event += `,"system_fingerprint":${JSON.stringify(chunk.system_fingerprint)}`;
    if (this.firstChunk && this.options.metadata !== undefined) event += `,"metadata":${JSON.stringify(this.options.metadata)}`;
    this.firstChunk = false;
    if (this.write(`${event}}\n\n`) || signal.aborted) return undefined;
    return once(this.response, 'drain', { signal }).then(
      () => undefined,
      () => undefined,
    );
  }

  /** Ends a failed stream: an `error` event with the OpenAI error body, then close. */
  fail(error: GatewayError): void {
    this.write(`event: error\ndata: ${JSON.stringify(toErrorBody(error))}\n\n`);
    this.close();
  }

  done(): void {
    this.write('data: [DONE]\n\n');
    this.close();
  }

  close(): void {
    clearInterval(this.ping);
    if (!this.response.writableEnded) this.response.end();
  }

  private write(text: string): boolean {
    if (this.response.writableEnded || this.response.destroyed) return true;
    this.lastWriteAt = Date.now();
    if (!this.corked) {
      this.corked = true;
      this.response.cork();
      setImmediate(this.uncork);
    }
    return this.response.write(text);
  }
}
