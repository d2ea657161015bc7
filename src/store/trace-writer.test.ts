import { afterEach, describe, expect, it, vi } from 'vitest';
import { createSqliteStore } from './sqlite/sqlite-store.js';
import type { Trace, TraceStore } from './store.js';
import { traceFixture } from '../../test/contracts/store/trace-fixture.js';
import { createTraceWriter } from './trace-writer.js';
import { capturingLogger } from '../../test/helpers/capturing-logger.js';

/** A TraceStore in memory that records every call; `failWhen` makes a call throw. */
class RecordingStore implements TraceStore {
  readonly batches: string[][] = [];
  readonly stored = new Map<string, Trace>();
  inFlight = 0;
  maxInFlight = 0;
  failWhen: (batch: readonly Trace[], call: number) => boolean = () => false;
  /** When set, each insertBatch waits for it before answering. */
  gate: Promise<void> | null = null;
  private calls = 0;

  async insertBatch(traces: readonly Trace[]): Promise<number> {
    this.calls += 1;
    this.inFlight += 1;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.gate !== null) await this.gate;
      if (this.failWhen(traces, this.calls)) throw new Error('database is locked');
      this.batches.push(traces.map((trace) => trace.requestId));
      let inserted = 0;
      for (const trace of traces) {
        if (this.stored.has(trace.requestId)) continue;
        this.stored.set(trace.requestId, trace);
        inserted += 1;
      }
      return inserted;
    } finally {
      this.inFlight -= 1;
    }
  }

  async get(): Promise<Trace | null> {
    return null;
  }

  async list(): Promise<{ items: Trace[]; nextCursor: null }> {
    return { items: [], nextCursor: null };
  }

  async count(): Promise<number> {
    return this.stored.size;
  }
}

function trace(requestId: string): Trace {
  return traceFixture({ requestId });
}

const ids = (count: number, prefix = 'req'): string[] => Array.from({ length: count }, (_, index) => `${prefix}-${index}`);

afterEach(() => {
  vi.useRealTimers();
});

describe('trace writer', () => {
  it('writes a full batch at once and leaves the remainder for the timer', async () => {
    const store = new RecordingStore();
    const { logger } = capturingLogger();
    const writer = createTraceWriter({ traces: store, logger, batchSize: 3, flushIntervalMs: 60_000 });
    for (const id of ids(7)) writer.enqueue(trace(id));
    // enqueue never writes in the caller's stack, even when it fills a batch.
    expect(store.batches).toEqual([]);

    await vi.waitFor(() => expect(store.batches).toEqual([ids(7).slice(0, 3), ids(7).slice(3, 6)]));
    expect(writer.stats()).toEqual({ enqueued: 7, written: 6, dropped: 0, failedWrites: 0, queued: 1, failingSince: null });
    await writer.close();
    expect(store.batches.at(-1)).toEqual(['req-6']);
  });

  it('writes a partial batch once the flush interval has passed', async () => {
    const store = new RecordingStore();
    const writer = createTraceWriter({ traces: store, logger: capturingLogger().logger, batchSize: 100, flushIntervalMs: 30 });
    writer.enqueue(trace('a'));
    writer.enqueue(trace('b'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(store.batches).toEqual([]);

    await vi.waitFor(() => expect(store.batches).toEqual([['a', 'b']]));
    writer.enqueue(trace('c'));
    await vi.waitFor(() => expect(store.batches).toEqual([['a', 'b'], ['c']]));
    expect(writer.stats()).toMatchObject({ enqueued: 3, written: 3, queued: 0 });
    await writer.close();
  });

  it('flush() resolves once everything enqueued before it is stored', async () => {
    const store = new RecordingStore();
    let open: () => void = () => undefined;
    store.gate = new Promise((resolve) => (open = resolve));
    const writer = createTraceWriter({ traces: store, logger: capturingLogger().logger, batchSize: 2, flushIntervalMs: 60_000 });
    for (const id of ids(5)) writer.enqueue(trace(id));

    let flushed = false;
    const flushing = writer.flush().then(() => (flushed = true));
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(flushed).toBe(false);
    open();
    await flushing;
    expect([...store.stored.keys()]).toEqual(ids(5));
    expect(store.maxInFlight).toBe(1);
    await writer.flush();
    await writer.close();
  });

  it('keeps one write in flight however fast traces arrive', async () => {
    const store = new RecordingStore();
    const writer = createTraceWriter({ traces: store, logger: capturingLogger().logger, batchSize: 10, flushIntervalMs: 1 });
    for (let round = 0; round < 20; round += 1) {
      for (const id of ids(25, `round-${round}`)) writer.enqueue(trace(id));
      await new Promise((resolve) => setImmediate(resolve));
    }
    await writer.close();
    expect(store.stored.size).toBe(500);
    expect(store.maxInFlight).toBe(1);
    expect(writer.stats()).toEqual({ enqueued: 500, written: 500, dropped: 0, failedWrites: 0, queued: 0, failingSince: null });
  });

  it('close() writes what is queued, then drops and counts later traces', async () => {
    const store = new RecordingStore();
    const { logger, lines } = capturingLogger();
    const writer = createTraceWriter({ traces: store, logger, batchSize: 100, flushIntervalMs: 60_000 });
    for (const id of ids(3)) writer.enqueue(trace(id));
    await writer.close();
    expect([...store.stored.keys()]).toEqual(ids(3));

    writer.enqueue(trace('late'));
    expect(writer.stats()).toEqual({ enqueued: 3, written: 3, dropped: 1, failedWrites: 0, queued: 0, failingSince: null });
    expect(lines.filter((line) => line.level === 'warn')).toEqual([
      expect.objectContaining({ msg: 'traces dropped', dropped: 1, writer_closed: 1 }),
    ]);
  });

  it('drops traces when the queue is full, counts them and logs at most once a second', async () => {
    vi.useFakeTimers();
    const store = new RecordingStore();
    store.gate = new Promise(() => undefined);
    const { logger, lines } = capturingLogger();
    const writer = createTraceWriter({ traces: store, logger, batchSize: 100, flushIntervalMs: 10, maxQueue: 5 });
    for (const id of ids(8)) writer.enqueue(trace(id));

    expect(writer.stats()).toEqual({ enqueued: 5, written: 0, dropped: 3, failedWrites: 0, queued: 5, failingSince: null });
    const warnings = () => lines.filter((line) => line.level === 'warn');
    expect(warnings()).toEqual([expect.objectContaining({ msg: 'traces dropped', dropped: 1, queue_full: 1, dropped_total: 1 })]);

    vi.advanceTimersByTime(500);
    writer.enqueue(trace('more'));
    expect(warnings()).toHaveLength(1);
    vi.advanceTimersByTime(500);
    expect(warnings()).toHaveLength(2);
    expect(warnings()[1]).toMatchObject({ dropped: 3, queue_full: 3, dropped_total: 4 });
    expect(writer.stats().dropped).toBe(4);
  });

  it('retries a failed write and loses nothing once the store recovers', async () => {
    const store = new RecordingStore();
    store.failWhen = (_batch, call) => call <= 3;
    const { logger, lines } = capturingLogger();
    const writer = createTraceWriter({ traces: store, logger, batchSize: 8, flushIntervalMs: 60_000 });
    for (const id of ids(8)) writer.enqueue(trace(id));

    await writer.flush();
    expect([...store.stored.keys()]).toEqual(ids(8));
    expect(writer.stats()).toEqual({ enqueued: 8, written: 8, dropped: 0, failedWrites: 3, queued: 0, failingSince: null });
    // One line when the writes start failing, one when they recover.
    const errors = lines.filter((line) => line.level === 'error');
    expect(errors).toEqual([
      expect.objectContaining({
        msg: 'trace batch write failed; retrying',
        attempt: 1,
        retry_in_ms: 50,
        waiting_in_memory: 8,
        error_message: 'database is locked',
      }),
    ]);
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'info', msg: 'trace writes recovered', failing_for_ms: expect.any(Number) }),
    );
    await writer.close();
  });

  it('isolates a trace the store always rejects and stores the others', async () => {
    const store = new RecordingStore();
    store.failWhen = (batch) => batch.some((item) => item.requestId === 'poison');
    const { logger, lines } = capturingLogger();
    const writer = createTraceWriter({ traces: store, logger, batchSize: 6, flushIntervalMs: 60_000, maxAttempts: 3 });
    for (const id of ['a', 'b', 'poison', 'c', 'd', 'e']) writer.enqueue(trace(id));

    await writer.flush();
    expect([...store.stored.keys()]).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect(writer.stats()).toMatchObject({ enqueued: 6, written: 5, dropped: 1, queued: 0 });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 'error', msg: 'trace given up: the store refuses it while it takes others', request_id: 'poison' }),
    );
    expect(lines).toContainEqual(expect.objectContaining({ level: 'warn', msg: 'traces dropped', write_failed: 1 }));
    await writer.close();
  });

  it('keeps every trace in memory while the store refuses all writes, however long, and stores them all once it recovers', async () => {
    const store = new RecordingStore();
    let refusing = true;
    store.failWhen = () => refusing;
    const { logger, lines } = capturingLogger();
    const writer = createTraceWriter({ traces: store, logger, batchSize: 4, flushIntervalMs: 1, maxAttempts: 2, maxRetryMs: 2 });
    for (const id of ids(10)) writer.enqueue(trace(id));
    await vi.waitFor(() => expect(writer.stats().failedWrites).toBeGreaterThan(30), { timeout: 5_000 });
    expect(writer.stats()).toMatchObject({ written: 0, dropped: 0, queued: 10, failingSince: expect.any(Number) });
    // One line when the writes start failing, not one per attempt.
    expect(lines.filter((line) => line.level === 'error')).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'trace batch write failed; retrying', waiting_in_memory: 10, dropped_total: 0 });

    refusing = false;
    await writer.flush();
    expect([...store.stored.keys()].sort()).toEqual(ids(10).sort());
    expect(writer.stats()).toMatchObject({ written: 10, dropped: 0, queued: 0, failingSince: null });
    expect(lines).toContainEqual(expect.objectContaining({ level: 'info', msg: 'trace writes recovered' }));
    await writer.close();
  });

  it('flush() ends when a store that never recovers has used up the attempts', async () => {
    const store = new RecordingStore();
    store.failWhen = () => true;
    const writer = createTraceWriter({
      traces: store,
      logger: capturingLogger().logger,
      batchSize: 4,
      flushIntervalMs: 60_000,
      maxAttempts: 2,
    });
    for (const id of ids(3)) writer.enqueue(trace(id));
    writer.enqueue(trace('d'));
    await writer.close();
    expect(store.stored.size).toBe(0);
    expect(writer.stats()).toEqual({ enqueued: 4, written: 0, dropped: 4, failedWrites: 2, queued: 0, failingSince: expect.any(Number) });
  });

  it('passes duplicates on: the store dedupes by request id', async () => {
    const store = createSqliteStore({ path: ':memory:' });
    await store.migrate();
    const writer = createTraceWriter({ traces: store.traces, logger: capturingLogger().logger, batchSize: 2, flushIntervalMs: 5 });
    writer.enqueue(trace('same'));
    writer.enqueue({ ...trace('same'), promptTokens: 999 });
    writer.enqueue(trace('other'));
    await writer.close();
    expect(writer.stats()).toMatchObject({ enqueued: 3, written: 3, dropped: 0 });
    expect(await store.traces.count('acct-1', {})).toBe(2);
    expect((await store.traces.get('acct-1', 'same'))?.promptTokens).toBe(trace('same').promptTokens);
    await store.close();
  });
});
