import { EngineTimeoutError } from '../api/errors.js';
import type { StreamedReply } from './transport/engine-transport.js';

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
export class StreamWatch {
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
      this.timer = setTimeout(
        onStreamWatchTimeout,
        this.consumerHasChunk ? this.checkEveryMs : Math.min(Math.ceil(left), this.checkEveryMs),
        this,
      );
      return;
    }
    const engine = `Engine ${this.engineId}`;
    const message =
      this.waitingFor === 'first chunk'
        ? `${engine} sent no first chunk within ${this.firstByteTimeoutMs} ms.`
        : this.waitingFor === 'next chunk'
          ? `${engine} sent nothing for ${this.idleTimeoutMs} ms in the middle of a stream.`
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
