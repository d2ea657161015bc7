/**
 * The export queue: batches by size and by time, bounded, and every span it
 * is given counted once, as exported or dropped (the bound, a span that fails
 * to write itself, an export that fails), with an exporter this test drives.
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { describe, expect, it } from 'vitest';
import { eventually } from '../../test/helpers/eventually.js';
import type { EncodedSpans, EndedSpan, SpanBatchEncoder } from './span-batch-encoder.js';
import { createSpanExportQueue, type EncodedSpanExporter } from './span-export-queue.js';

/** An encoder that records span names: a batch's body is their names, comma-separated. */
function namesEncoder(): SpanBatchEncoder {
  let names: string[] = [];
  let current: string | null = null;
  return {
    get spanCount() {
      return names.length;
    },
    beginSpan: (head) => void (current = head.name),
    attribute() {},
    attributes() {},
    endSpan() {
      if (current !== null) names.push(current);
      current = null;
    },
    abandonSpan: () => void (current = null),
    take() {
      const batch = { body: Buffer.from(names.join(',')), spanCount: names.length, release: () => released.push(batch) };
      names = [];
      return batch;
    },
  };
}
const released: EncodedSpans[] = [];

/** A span named `name`, after its children (named `name/1`, …); `fails` makes it throw half-way through writing itself. */
function span(name: string, fails = false, children = 0): EndedSpan {
  const writeOne = (encoder: SpanBatchEncoder, spanName: string, failing: boolean) => {
    encoder.beginSpan({
      traceId: { w0: 1, w1: 1, w2: 1, w3: 1 },
      spanId: { high: 2, low: 2 },
      parentSpanId: null,
      traceState: null,
      name: spanName,
      kind: 1,
      startTime: 0,
      endTime: 1,
    });
    if (failing) throw new Error('cannot write');
    encoder.endSpan({ status: 0, statusMessage: undefined, links: [], traceFlags: 1, parentIsRemote: false });
  };
  return {
    spanCount: 1 + children,
    writeTo(encoder) {
      for (let child = 1; child <= children; child++) writeOne(encoder, `${name}/${child}`, false);
      writeOne(encoder, name, fails);
    },
  };
}

/** An exporter whose exports settle when the test says. */
function heldExporter() {
  const pending: Array<{ names: string; settle: (result: ExportResult) => void }> = [];
  const exporter: EncodedSpanExporter = {
    export: (batch, resultCallback) => void pending.push({ names: Buffer.from(batch.body).toString(), settle: resultCallback }),
    shutdown: () => Promise.resolve(),
  };
  return { exporter, pending };
}

const success: ExportResult = { code: ExportResultCode.SUCCESS };
const failure: ExportResult = { code: ExportResultCode.FAILED, error: new Error('collector down') };

describe('the span export queue', () => {
  it('ships a full batch at once, and counts it exported when its export succeeds', () => {
    const { exporter, pending } = heldExporter();
    const queue = createSpanExportQueue(namesEncoder(), exporter, { maxQueueSize: 10, maxBatchSize: 3, scheduledDelayMs: 60_000 });
    for (const name of ['a', 'b', 'c', 'd']) queue.add(span(name));
    expect(pending.map((batch) => batch.names)).toEqual(['a,b,c']);
    expect(queue.stats()).toEqual({ exported: 0, dropped: 0, queued: 4 });
    pending[0]?.settle(success);
    expect(queue.stats()).toEqual({ exported: 3, dropped: 0, queued: 1 });
  });

  it('ships a partial batch once its first span has waited the delay', async () => {
    const { exporter, pending } = heldExporter();
    const queue = createSpanExportQueue(namesEncoder(), exporter, { maxQueueSize: 10, maxBatchSize: 100, scheduledDelayMs: 20 });
    queue.add(span('late'));
    expect(pending).toHaveLength(0);
    await eventually(() => (pending.length > 0 ? pending : undefined), 'the delayed batch');
    expect(pending.map((batch) => batch.names)).toEqual(['late']);
  });

  it("drops and counts spans past the bound while exports are under way, and a failed export's spans", () => {
    const { exporter, pending } = heldExporter();
    const queue = createSpanExportQueue(namesEncoder(), exporter, { maxQueueSize: 4, maxBatchSize: 2, scheduledDelayMs: 60_000 });
    for (const name of ['a', 'b', 'c', 'd', 'e', 'f']) queue.add(span(name));
    expect(pending.map((batch) => batch.names)).toEqual(['a,b', 'c,d']);
    expect(queue.stats()).toEqual({ exported: 0, dropped: 2, queued: 4 });
    pending[0]?.settle(failure);
    pending[1]?.settle(success);
    expect(queue.stats()).toEqual({ exported: 2, dropped: 4, queued: 0 });
    queue.add(span('g'));
    expect(queue.stats().queued).toBe(1);
  });

  it('drops a span that fails to write itself, and keeps the batch whole', () => {
    const { exporter, pending } = heldExporter();
    const queue = createSpanExportQueue(namesEncoder(), exporter, { maxQueueSize: 10, maxBatchSize: 2, scheduledDelayMs: 60_000 });
    queue.add(span('a'));
    queue.add(span('broken', true));
    queue.add(span('b'));
    expect(pending.map((batch) => batch.names)).toEqual(['a,b']);
    expect(queue.stats()).toEqual({ exported: 0, dropped: 1, queued: 2 });
  });

  it('counts a span written with its children as that many spans, and drops them together past the bound', () => {
    const { exporter, pending } = heldExporter();
    const queue = createSpanExportQueue(namesEncoder(), exporter, { maxQueueSize: 4, maxBatchSize: 100, scheduledDelayMs: 60_000 });
    queue.add(span('call', false, 1));
    expect(queue.stats()).toEqual({ exported: 0, dropped: 0, queued: 2 });
    queue.add(span('other', false, 2));
    expect(queue.stats()).toEqual({ exported: 0, dropped: 3, queued: 2 });
    // A call that fails after its child was written: the child stays, the call is dropped.
    queue.add(span('broken', true, 1));
    expect(queue.stats()).toEqual({ exported: 0, dropped: 4, queued: 3 });
    void queue.flush();
    expect(pending.map((batch) => batch.names)).toEqual(['call/1,call,broken/1']);
  });

  it("gives each batch's buffer back once its export settles, and flush waits for every export", async () => {
    released.length = 0;
    const { exporter, pending } = heldExporter();
    const queue = createSpanExportQueue(namesEncoder(), exporter, { maxQueueSize: 10, maxBatchSize: 100, scheduledDelayMs: 60_000 });
    queue.add(span('a'));
    let flushed = false;
    const flushing = queue.flush().then(() => (flushed = true));
    expect(pending).toHaveLength(1);
    await Promise.resolve();
    expect(flushed).toBe(false);
    expect(released).toHaveLength(0);
    pending[0]?.settle(success);
    await flushing;
    expect(released).toHaveLength(1);
    expect(queue.stats()).toEqual({ exported: 1, dropped: 0, queued: 0 });
  });

  it('drops what is added after shutdown', async () => {
    const { exporter } = heldExporter();
    const queue = createSpanExportQueue(namesEncoder(), exporter, { maxQueueSize: 10, maxBatchSize: 100, scheduledDelayMs: 60_000 });
    await queue.shutdown();
    queue.add(span('too late'));
    expect(queue.stats()).toEqual({ exported: 0, dropped: 1, queued: 0 });
  });
});
