/**
 * The batched trace writer between the hot path and the TraceStore. A call
 * hands over its trace with `enqueue` (synchronous, never throws, never waits);
 * the writer stores traces in batches, one write at a time, off the hot path.
 *
 * Nothing is lost silently: a trace the writer cannot keep (queue full, writer
 * closed, or a trace the store refuses while it takes others) is counted in
 * `stats().dropped` and logged. A failed write is retried with backoff, for
 * as long as the store refuses writes (a full disk, a database that is down):
 * the traces wait in memory, up to `maxQueue`, and nothing is lost once it
 * takes writes again. A batch that keeps failing is halved until the trace
 * the store refuses is alone; it is given up only once the traces behind it
 * are stored, which proves the store works and the trace is at fault.
 */
import { errorFields, type Logger } from '../log/logger.js';
import type { Trace, TraceStore } from './store.js';

export interface TraceWriter {
  /** Queues a trace for the next batch. Synchronous; drops (counted, logged) when the queue is full. */
  enqueue(trace: Trace): void;
  /** Resolves when every trace enqueued before the call is stored or has definitively failed. */
  flush(): Promise<void>;
  /** Stops the timers and flushes; later traces are dropped (counted). */
  close(): Promise<void>;
  stats(): TraceWriterStats;
}

export interface TraceWriterStats {
  /** Traces accepted into the queue. */
  enqueued: number;
  /** Traces in batches the store accepted (duplicates it skipped included: dedupe is the store's job). */
  written: number;
  /** Traces lost: queue full, writer closed, or given up after `maxAttempts` failed writes. */
  dropped: number;
  /** insertBatch calls that failed. */
  failedWrites: number;
  /** Traces waiting, the batch being written included. */
  queued: number;
  /** When the writes began failing (epoch ms), null while the last write succeeded: the store is degraded. */
  failingSince: number | null;
}

export interface TraceWriterOptions {
  traces: TraceStore;
  logger: Logger;
  /** Traces per write; reaching it starts a write at once. Default 256. */
  batchSize?: number;
  /** How long a trace may wait for its batch to fill. Default 50 ms. */
  flushIntervalMs?: number;
  /** Traces held at most; more are dropped. Default 50,000. */
  maxQueue?: number;
  /**
   * Failed writes in a row before the writer asks whether the trace or the
   * store is at fault (by writing the traces behind it), and, once closing,
   * gives up. Default 20, about 16 s of retrying with the backoff below.
   */
  maxAttempts?: number;
  /** Longest pause between two attempts. Default 1 s. */
  maxRetryMs?: number;
}

type DropReason = 'queue_full' | 'writer_closed' | 'write_failed';

const firstRetryMs = 50;
const dropLogIntervalMs = 1_000;
/** While writes keep failing, one log line per this long says so. */
const failureLogIntervalMs = 30_000;

export function createTraceWriter(options: TraceWriterOptions): TraceWriter {
  const { traces, logger } = options;
  const batchSize = Math.max(1, options.batchSize ?? 256);
  const flushIntervalMs = options.flushIntervalMs ?? 50;
  const maxQueue = Math.max(1, options.maxQueue ?? 50_000);
  const maxAttempts = Math.max(1, options.maxAttempts ?? 20);
  const maxRetryMs = Math.max(1, options.maxRetryMs ?? 1_000);

  // The head of `queue` is the batch being written: it leaves the queue only
  // once stored (or given up), so a failed write is retried with the same traces.
  const queue: Trace[] = [];
  let enqueued = 0;
  let written = 0;
  let dropped = 0;
  let failedWrites = 0;
  /** Traces that left the queue (written or given up), in queue order; compared with flush targets. */
  let settled = 0;
  /** Write everything up to this enqueue count, even as a partial batch. */
  let flushTarget = 0;
  let writing = false;
  let closed = false;
  let flushTimer: NodeJS.Timeout | null = null;
  let retryTimer: NodeJS.Timeout | null = null;
  /** Halved after each failure so one bad trace ends up alone and the others around it are stored. */
  let attemptSize = batchSize;
  let failuresInRow = 0;
  let failingSince: number | null = null;
  let lastFailureLogAt = Number.NEGATIVE_INFINITY;
  let waiters: Array<{ target: number; resolve: () => void }> = [];

  let unlogged: Record<DropReason, number> = { queue_full: 0, writer_closed: 0, write_failed: 0 };
  let lastDropLogAt = Number.NEGATIVE_INFINITY;
  let dropLogTimer: NodeJS.Timeout | null = null;

  function drop(count: number, reason: DropReason): void {
    dropped += count;
    unlogged[reason] += count;
    if (dropLogTimer !== null) return;
    const wait = lastDropLogAt + dropLogIntervalMs - Date.now();
    if (wait <= 0) logDrops();
    else {
      // Drops inside the quiet second are reported when it ends, never swallowed.
      dropLogTimer = setTimeout(logDrops, wait);
      dropLogTimer.unref();
    }
  }

  function logDrops(): void {
    if (dropLogTimer !== null) clearTimeout(dropLogTimer);
    dropLogTimer = null;
    const count = unlogged.queue_full + unlogged.writer_closed + unlogged.write_failed;
    if (count === 0) return;
    lastDropLogAt = Date.now();
    logger.warn('traces dropped', { dropped: count, ...unlogged, dropped_total: dropped, max_queue: maxQueue });
    unlogged = { queue_full: 0, writer_closed: 0, write_failed: 0 };
  }

  function startWriting(): void {
    if (flushTimer !== null) {
      clearTimeout(flushTimer);
      flushTimer = null;
    }
    if (writing) return;
    writing = true;
    // Not in the caller's stack: the enqueue that fills a batch belongs to a
    // request, and a synchronous store (SQLite) would do the write inside it.
    setImmediate(() => {
      writeLoop().catch((error: unknown) => {
        // writeBatch catches store errors; reaching here is a bug in this module.
        logger.error('trace writer loop failed', errorFields(error));
      });
    });
  }

  // A failed batch stays in the queue, so whatever started the loop still holds
  // and the loop goes on to retry it.
  function shouldWrite(): boolean {
    return queue.length > 0 && (queue.length >= batchSize || settled < flushTarget || closed);
  }

  async function writeLoop(): Promise<void> {
    try {
      while (shouldWrite()) await writeBatch();
    } finally {
      writing = false;
      if (queue.length > 0 && !closed && flushTimer === null) {
        flushTimer = setTimeout(onFlushTimer, flushIntervalMs);
        flushTimer.unref();
      }
    }
  }

  function onFlushTimer(): void {
    flushTimer = null;
    flushTarget = Math.max(flushTarget, enqueued);
    startWriting();
  }

  async function writeBatch(): Promise<void> {
    const size = Math.min(attemptSize, queue.length);
    const batch = queue.slice(0, size);
    try {
      await traces.insertBatch(batch);
    } catch (error) {
      failedWrites += 1;
      failuresInRow += 1;
      failingSince ??= Date.now();
      if (closed && failuresInRow >= maxAttempts) {
        // At shutdown the store has just failed for the whole retry budget; waiting
        // that long again for each remaining batch would hold the process hostage.
        logger.error('traces given up at shutdown: the store refuses writes', {
          attempts: failuresInRow,
          traces: queue.length,
          ...errorFields(error),
        });
        settle(queue.length, true);
        failuresInRow = 0;
        return;
      }
      if (size === 1 && failuresInRow >= maxAttempts && queue.length > 1 && (await othersStored(error))) return;
      const retryInMs = Math.min(maxRetryMs, firstRetryMs * 2 ** Math.min(failuresInRow - 1, 20));
      logFailure(error, retryInMs);
      attemptSize = Math.max(1, Math.ceil(size / 2));
      await new Promise<void>((resolve) => {
        retryTimer = setTimeout(resolve, retryInMs);
        // A failing store alone must not keep the process alive; an awaited flush does (see flush).
        if (waiters.length === 0) retryTimer.unref();
      });
      retryTimer = null;
      return;
    }
    succeeded(size);
  }

  /**
   * The head trace has failed alone `maxAttempts` times: write the traces
   * behind it. If the store takes them, the head trace is at fault and is
   * given up; if not, the store is, and everything stays queued.
   */
  async function othersStored(error: unknown): Promise<boolean> {
    const others = queue.slice(1, 1 + batchSize);
    try {
      await traces.insertBatch(others);
    } catch {
      return false;
    }
    // One more try, in case the store came back just now.
    const head = queue.slice(0, 1);
    const headStored = await traces.insertBatch(head).then(
      () => true,
      () => false,
    );
    if (headStored) succeeded(1);
    else {
      logger.error('trace given up: the store refuses it while it takes others', {
        request_id: head[0]?.requestId,
        attempts: failuresInRow,
        ...errorFields(error),
      });
      settle(1, true);
    }
    succeeded(others.length);
    return true;
  }

  function logFailure(error: unknown, retryInMs: number): void {
    const now = Date.now();
    if (failuresInRow > 1 && now - lastFailureLogAt < failureLogIntervalMs) return;
    lastFailureLogAt = now;
    logger.error(failuresInRow === 1 ? 'trace batch write failed; retrying' : 'trace writes still failing; retrying', {
      attempt: failuresInRow,
      failing_for_ms: now - (failingSince ?? now),
      retry_in_ms: retryInMs,
      waiting_in_memory: queue.length,
      dropped_total: dropped,
      ...errorFields(error),
    });
  }

  /** The `size` traces at the head of the queue are stored. */
  function succeeded(size: number): void {
    written += size;
    if (failingSince !== null) {
      logger.info('trace writes recovered', {
        failing_for_ms: Date.now() - failingSince,
        waiting_in_memory: queue.length - size,
        dropped_total: dropped,
      });
      failingSince = null;
    }
    settle(size, false);
    failuresInRow = 0;
    attemptSize = Math.min(batchSize, attemptSize * 2);
  }

  /** Takes `count` traces off the head of the queue and releases the flushes they complete. */
  function settle(count: number, givenUp: boolean): void {
    queue.splice(0, count);
    settled += count;
    if (givenUp) drop(count, 'write_failed');
    if (waiters.length === 0) return;
    const remaining: typeof waiters = [];
    for (const waiter of waiters) {
      if (waiter.target <= settled) waiter.resolve();
      else remaining.push(waiter);
    }
    waiters = remaining;
  }

  function flush(): Promise<void> {
    // Everything enqueued so far is either settled or still in the queue.
    const target = enqueued;
    if (settled >= target) return Promise.resolve();
    flushTarget = Math.max(flushTarget, target);
    const done = new Promise<void>((resolve) => waiters.push({ target, resolve }));
    // Someone waits for this: a retry pause must now keep the process alive.
    retryTimer?.ref();
    startWriting();
    return done;
  }

  return {
    enqueue(trace) {
      if (closed || queue.length >= maxQueue) {
        drop(1, closed ? 'writer_closed' : 'queue_full');
        return;
      }
      queue.push(trace);
      enqueued += 1;
      if (queue.length >= batchSize) startWriting();
      else if (flushTimer === null && !writing) {
        flushTimer = setTimeout(onFlushTimer, flushIntervalMs);
        flushTimer.unref();
      }
    },

    flush,

    async close() {
      closed = true;
      if (flushTimer !== null) clearTimeout(flushTimer);
      flushTimer = null;
      await flush();
      logDrops();
    },

    stats() {
      return { enqueued, written, dropped, failedWrites, queued: queue.length, failingSince };
    },
  };
}
