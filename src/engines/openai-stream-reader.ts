/**
 * The events of an `openai` engine's stream, read by read: the body's bytes
 * go through the one SSE decoder (`sse-parser.ts`) and each event through
 * `parseStreamEvent`, and come out as one batch of chunks per read. It tells
 * the stream's timer (`StreamWatch`) when the first chunk and `[DONE]` come,
 * and judges at the end whether the stream was whole.
 *
 * The engine's async generator drives it from its own read loop: no
 * generator of its own, so no async-generator hop per event on the hot path.
 */
import { EngineError } from '../api/errors.js';
import type { EngineChunk } from './engine.js';
import { parseStreamEvent, streamDone } from './openai-wire.js';
import { ServerSentEventDecoder } from './sse-parser.js';
import type { StreamWatch } from './stream-watch.js';

export class OpenAIStreamReader {
  /** `[DONE]` has come: the reply is complete, whatever happens to the rest of the body. */
  sawDone = false;
  /** An event of the last batch failed to parse: thrown once the batch before it has gone out, as if read alone. */
  failure: { error: unknown } | null = null;
  private readonly decoder = new ServerSentEventDecoder();
  private sawEvent = false;
  private firstChunk = true;
  /** Choices seen, and how many of them got a finish_reason (see the end-of-body check). */
  private choicesSeen = 0;
  private choicesFinished = 0;

  constructor(
    private readonly engineId: string,
    private readonly watch: StreamWatch,
  ) {}

  /** One read of the body, or null once it has ended. */
  push(buffers: Buffer[] | null): void {
    if (buffers === null) {
      this.decoder.end();
    } else {
      // One push for the whole read: the decoder's text is joined and scanned once, not once per buffer.
      this.decoder.push(buffers.length === 1 ? (buffers[0] as Buffer) : Buffer.concat(buffers));
    }
  }

  /**
   * Every event of the reads pushed so far, in one batch. One that fails to
   * parse ends the batch and is kept in `failure`.
   */
  batch(): EngineChunk[] {
    const batch: EngineChunk[] = [];
    const decoder = this.decoder;
    for (let data = decoder.nextEvent(); data !== null; data = decoder.nextEvent()) {
      // Events after `[DONE]` are ignored; the body is only read to its end
      // so the connection can be reused.
      this.sawEvent = true;
      if (this.sawDone) continue;
      if (data === streamDone) {
        this.sawDone = true;
        this.watch.drain();
        continue;
      }
      let chunk: EngineChunk | null;
      try {
        chunk = parseStreamEvent(data, this.engineId);
      } catch (error) {
        this.failure = { error };
        break;
      }
      if (chunk === null) continue;
      for (const choice of chunk.choices) {
        if (choice.index >= this.choicesSeen) this.choicesSeen = choice.index + 1;
        if (choice.finish_reason !== null) this.choicesFinished += 1;
      }
      if (this.firstChunk) this.watch.firstChunkArrived();
      this.firstChunk = false;
      batch.push(chunk);
    }
    return batch;
  }

  /** The body has ended without an error: throws unless the stream was whole. */
  checkEnd(): void {
    if (!this.sawEvent)
      throw new EngineError(`Engine ${this.engineId} sent a stream without a single event.`, undefined, 'engine_bad_reply');
    // A server that ends the body without `[DONE]` after every choice has
    // finished is done (llama.cpp before September 2024, ik_llama.cpp,
    // llama-box). Anything else ending early is a truncated reply.
    if (!this.sawDone && (this.choicesSeen === 0 || this.choicesFinished < this.choicesSeen)) {
      throw new EngineError(`Engine ${this.engineId} ended the stream before it finished.`, undefined, 'engine_stream_truncated');
    }
  }
}
