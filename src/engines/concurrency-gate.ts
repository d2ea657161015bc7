/**
 * The calls one HTTP engine takes at once, and the bounded queue before them.
 *
 * A call beyond `maxConcurrent` waits, first come first served, while fewer
 * than `maxQueue` wait and for at most `queueTimeoutMs`; past either bound it
 * fails with `EngineOverloadedError` (503 `engine_overloaded`, `retry-after`),
 * which the pool may send to another replica because this engine never saw
 * it. So no call waits forever behind generations that do not end (a stalled
 * client's stream, an engine that stopped answering): the caller hears 503 in
 * bounded time. A waiter whose signal aborts leaves the queue at once.
 *
 * The common case, a free slot, takes no promise and no timer.
 */
import { ClientAbortError, EngineOverloadedError } from '../api/errors.js';
import { stopWatching, watchAbort } from '../fast-path/abort-watch.js';

export interface ConcurrencyGateOptions {
  /** Names the engine in the 503 message. */
  name: string;
  maxConcurrent: number;
  /** Calls that may wait for a slot; 0: none waits. */
  maxQueue: number;
  /** The longest a call waits for a slot. */
  queueTimeoutMs: number;
}

const retryAfterSeconds = 1;

export class ConcurrencyGate {
  private active = 0;
  private readonly waiters: Waiter[] = [];

  constructor(private readonly options: ConcurrencyGateOptions) {}

  get inFlight(): number {
    return this.active;
  }

  get queued(): number {
    return this.waiters.length;
  }

  /**
   * Takes a slot: `true` at once when one is free, else a promise that
   * resolves once one is handed over, or rejects (queue full, waited too
   * long, `signal` aborted). Every slot taken is given back with `leave`.
   */
  enter(signal: AbortSignal): true | Promise<void> {
    if (this.active < this.options.maxConcurrent && this.waiters.length === 0) {
      this.active += 1;
      return true;
    }
    if (signal.aborted) return Promise.reject(new ClientAbortError());
    if (this.waiters.length >= this.options.maxQueue) {
      return Promise.reject(
        this.overloaded(`all ${this.options.maxConcurrent} slots are busy and ${this.waiters.length} calls are queued`),
      );
    }
    return new Promise((resolve, reject) => {
      const waiter = new Waiter(this, signal, resolve, reject);
      waiter.timer = setTimeout(() => this.expire(waiter), this.options.queueTimeoutMs);
      watchAbort(signal, waiter);
      this.waiters.push(waiter);
    });
  }

  /** Gives a slot back: straight to the oldest waiter, if any. */
  leave(): void {
    const waiter = this.waiters.shift();
    if (waiter === undefined) {
      this.active -= 1;
      return;
    }
    waiter.settle();
    waiter.resolve();
  }

  /** A waiter gave up (its signal aborted): it leaves the queue. */
  abandon(waiter: Waiter): void {
    this.remove(waiter);
    waiter.reject(new ClientAbortError());
  }

  private expire(waiter: Waiter): void {
    this.remove(waiter);
    waiter.reject(this.overloaded(`no slot of ${this.options.maxConcurrent} freed within ${this.options.queueTimeoutMs} ms`));
  }

  private remove(waiter: Waiter): void {
    waiter.settle();
    const at = this.waiters.indexOf(waiter);
    if (at !== -1) this.waiters.splice(at, 1);
  }

  private overloaded(why: string): EngineOverloadedError {
    return new EngineOverloadedError(
      `Engine ${this.options.name} is overloaded: ${why}. Retry after ${retryAfterSeconds} s, or raise max_concurrency / max_queue / queue_timeout_ms in the config.`,
      retryAfterSeconds,
    );
  }
}

class Waiter {
  timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly gate: ConcurrencyGate,
    private readonly signal: AbortSignal,
    readonly resolve: () => void,
    readonly reject: (error: Error) => void,
  ) {}

  /** The signal aborted (`watchAbort`). */
  handleEvent(): void {
    this.gate.abandon(this);
  }

  settle(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    stopWatching(this.signal, this);
  }
}
