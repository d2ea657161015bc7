/**
 * The one module that writes server-sent events to a client. Engines yield
 * typed chunks; this turns each into a `chat.completion.chunk` event, with the
 * gateway's id, `created` and canonical model spliced in as a precomputed
 * prefix rather than re-serialising a whole object per event.
 *
 * Events that arrive together (one network read from the engine usually holds
 * several, and the engine hands them over as one batch) leave as one write
 * of one HTTP chunk: a system call, a chunk header and a string conversion
 * for the batch, not for each event, and no event held back.
 *
 * It also keeps the stream alive (a `: ping` comment after a quiet
 * interval, on the handler's one timer: `sse-pings.ts`), honours
 * backpressure (a client that reads nothing for `stallTimeoutMs` while a
 * write waits is disconnected: `stalled`), and ends a failed stream with an `error` event and no
 * `[DONE]`, so no client mistakes a failure for a complete reply.
 */
import { once } from 'node:events';
import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RequestNotes } from '../api/chat-types.js';
import { ReplyChunkShaper } from '../api/chat-reply.js';
import { toErrorBody, type GatewayError } from '../api/errors.js';
import type { EngineChunk } from '../engines/engine.js';
import { choicesJson } from './choices-json.js';
import type { PingedStream, SsePings } from './sse-pings.js';

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
  /** The handler's pings, which this stream joins until it closes. */
  pings: SsePings;
  /** How long a write may wait for the client to read before the client is disconnected. */
  stallTimeoutMs: number;
}

export class SseWriter implements PingedStream {
  /** The client read nothing for `stallTimeoutMs` and was disconnected: the call ends as `client_stalled`. */
  stalled = false;
  private readonly prefix: string;
  private firstChunk = true;
  private readonly shaper: ReplyChunkShaper | undefined;
  private lastWriteAt = 0;
  private corked = false;
  /** Whether a write has gone out yet: the first one (with the head) is not held for the tick (see `write`). */
  private wrote = false;

  /**
   * Made while the engine works on the request (nothing is sent): the head
   * goes out with the first batch, after `open`.
   */
  constructor(
    private readonly response: ServerResponse,
    private readonly options: SseWriterOptions,
  ) {
    this.shaper = ReplyChunkShaper.forStream(options.notes);
    this.prefix = `data: {"id":${JSON.stringify(options.id)},"object":"chat.completion.chunk","created":${options.created},"model":${JSON.stringify(options.model)}`;
  }

  /** The engine's first chunk is here: the stream's head, sent with the first batch in the same write. */
  open(headers: OutgoingHttpHeaders): void {
    headers['content-type'] = 'text/event-stream; charset=utf-8';
    headers['cache-control'] = 'no-cache';
    headers['x-accel-buffering'] = 'no';
    this.response.writeHead(200, headers);
    this.lastWriteAt = Date.now();
    this.options.pings.add(this);
  }

  pingIfQuiet(now: number, intervalMs: number): void {
    if (now - this.lastWriteAt >= intervalMs) this.write(': ping\n\n');
  }

  /** Writes a batch of chunks as one write; returns a promise only when the socket is full, resolved once it can take more. */
  writeChunks(chunks: readonly EngineChunk[], signal: AbortSignal): Promise<void> | undefined {
    let events = '';
    for (const chunk of chunks) events += this.event(chunk);
    if (events === '' || this.write(events, endsReply(chunks)) || signal.aborted) return undefined;
    // The client's buffers are full: it has that long to read, or it is cut
    // (the connection's signal then aborts, which cancels the engine request).
    const stall = setTimeout(disconnectStalled, this.options.stallTimeoutMs, this);
    const done = (): void => clearTimeout(stall);
    return once(this.response, 'drain', { signal }).then(done, done);
  }

  /** The stall timer fired (`disconnectStalled`). */
  disconnect(): void {
    this.stalled = true;
    this.options.pings.delete(this);
    this.response.destroy();
  }

  /** One chunk's event, or '' for a usage chunk the client did not ask for. */
  private event(chunk: EngineChunk): string {
    const usageOnly = chunk.choices.length === 0;
    if (usageOnly && (!this.options.includeUsage || chunk.usage == null)) return '';
    if (this.firstChunk && !usageOnly) {
      const first = chunk.choices[0];
      if (first !== undefined && first.delta.role === undefined) {
        first.delta = { role: 'assistant', ...first.delta };
      }
    }
    const choices = this.shaper !== undefined ? JSON.stringify(this.shaper.shape(chunk.choices)) : choicesJson(chunk.choices);
    // The fields after `choices`, empty for nearly every event: the event is then one template.
    let after = '';
    if (usageOnly) after += `,"usage":${JSON.stringify(chunk.usage)}`;
    if (chunk.system_fingerprint != null) after += `,"system_fingerprint":${JSON.stringify(chunk.system_fingerprint)}`;
    if (this.firstChunk && this.options.metadata !== undefined) after += `,"metadata":${JSON.stringify(this.options.metadata)}`;
    this.firstChunk = false;
    return `${this.prefix},"choices":${choices}${after}}\n\n`;
  }

  /** Ends a failed stream: an `error` event with the OpenAI error body, then close. */
  fail(error: GatewayError): void {
    this.close(`event: error\ndata: ${JSON.stringify(toErrorBody(error))}\n\n`);
  }

  done(): void {
    this.close('data: [DONE]\n\n');
  }

  /** Ends the stream, with a last event when given (one write with the end). */
  close(last?: string): void {
    this.options.pings.delete(this);
    if (this.response.writableEnded) return;
    if (last === undefined || this.response.destroyed) this.response.end();
    else this.response.end(last);
  }

  /** `endsReply`: the text holds the reply's last events (a finish reason, or the usage chunk). */
  private write(text: string, endsReply = false): boolean {
    if (this.response.writableEnded || this.response.destroyed) return true;
    this.lastWriteAt = Date.now();
    if (this.corked) return this.response.write(text);
    this.response.cork();
    const accepted = this.response.write(text);
    const first = !this.wrote;
    this.wrote = true;
    if (first && !endsReply) {
      // The head and the first events leave now, not at the end of the tick:
      // otherwise (Node holds a write for the tick too) the promise jobs that
      // ask the engine for its next read go first (measured: docs/benchmarks.md).
      this.response.uncork();
      return accepted;
    }
    // Held until this tick's promise jobs have run: when the engine's last batch
    // and the end of its body came in one read, `[DONE]` and the end of the
    // reply join this write instead of making one more.
    this.corked = true;
    process.nextTick(uncork, this);
    return accepted;
  }

  /** The end of the tick after a write (see `write`). */
  uncorkNow(): void {
    this.corked = false;
    if (!this.response.writableEnded) this.response.uncork();
  }
}

/** Whether a batch holds the reply's end: its last chunk carries a finish reason, or is the usage chunk. */
function endsReply(chunks: readonly EngineChunk[]): boolean {
  const last = chunks[chunks.length - 1];
  return last !== undefined && (last.choices.length === 0 || last.choices.some(isFinished));
}

/** A choice that ends its reply (module-level, like `uncork`, so a batch makes no closure). */
function isFinished(choice: EngineChunk['choices'][number]): boolean {
  return choice.finish_reason != null;
}

function disconnectStalled(writer: SseWriter): void {
  writer.disconnect();
}

/** Module-level so a write makes no closure. */
function uncork(writer: SseWriter): void {
  writer.uncorkNow();
}
