/**
 * The chunks of a stream the pool has opened, which settle its replica (in
 * flight count, circuit, metered time) exactly once however the stream ends.
 */
import type { CircuitPermit } from './circuit-breaker.js';
import { outcomeOf, type CallOutcome } from './call-outcome.js';
import type { MeterMark } from './engine-meter.js';
import type { EngineChunk } from './engine.js';
import { chargeAttempt, type ReplicaAttempt } from './replica-attempt.js';
import type { ReplicaSlots } from './replica-slots.js';
import { stopWatching, watchAbort } from '../fast-path/abort-watch.js';

/** The chunks of a stream that ended before its first chunk: done at once. */
export function finishedChunks(): AsyncIterableIterator<EngineChunk[]> {
  return {
    next: () => Promise.resolve({ done: true, value: undefined }),
    return: () => Promise.resolve({ done: true, value: undefined }),
    [Symbol.asyncIterator]() {
      return this;
    },
  };
}

/**
 * The chunks of one pooled stream, in the engine's batches: the buffered first batch, then the rest.
 * It settles its replica exactly once, whichever comes first: the end, an
 * error, `return()`, or `signal` aborting (listened to through `handleEvent`,
 * so no closure is made per stream).
 */
export class PooledChunks implements AsyncIterableIterator<EngineChunk[]> {
  private buffered: EngineChunk[] | null;
  /** The engine's iterator has ended or been returned: nothing more to ask of it. */
  private innerDone = false;
  /** The replica has been settled (in-flight count and circuit). */
  private settled = false;

  constructor(
    private readonly replicas: ReplicaSlots,
    private readonly index: number,
    private readonly permit: CircuitPermit,
    private readonly inner: AsyncIterator<EngineChunk[]>,
    first: EngineChunk[],
    private readonly signal: AbortSignal,
    private readonly mark: MeterMark,
    private readonly attempt: ReplicaAttempt | undefined,
  ) {
    this.buffered = first;
    watchAbort(signal, this);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<EngineChunk[]>> {
    const buffered = this.buffered;
    if (buffered !== null) {
      this.buffered = null;
      return { done: false, value: buffered };
    }
    if (this.innerDone) return { done: true, value: undefined };
    let result: IteratorResult<EngineChunk[]>;
    try {
      result = await this.inner.next();
    } catch (error) {
      this.innerDone = true;
      this.settle(outcomeOf(error, this.signal), error);
      throw error;
    }
    if (result.done === true) {
      this.innerDone = true;
      this.settle('success');
    }
    return result;
  }

  /** Stops early: cancels the upstream request (the engine's `return()`) and releases the replica. */
  async return(): Promise<IteratorResult<EngineChunk[]>> {
    this.buffered = null;
    if (!this.innerDone) {
      this.innerDone = true;
      this.settle('release');
      await this.inner.return?.();
    }
    return { done: true, value: undefined };
  }

  /**
   * The signal aborted: the engine cancels upstream itself and its `next()`
   * will throw ClientAbortError; the slot is freed now in case the caller never
   * asks again.
   */
  handleEvent(): void {
    this.settle('release');
  }

  private settle(outcome: CallOutcome, error?: unknown): void {
    if (this.settled) return;
    this.settled = true;
    stopWatching(this.signal, this);
    chargeAttempt(this.replicas.meterOf(this.index), this.mark, this.attempt);
    this.replicas.settle(this.index, this.permit, outcome, error);
  }
}
