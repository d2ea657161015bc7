/**
 * Where ended spans go: each writes itself into the batch the moment it ends
 * (`span-batch-encoder.ts`), and a batch goes to the exporter when it holds
 * `maxBatchSize` spans or its first span has waited `scheduledDelayMs`.
 * Adding a span never waits for the network.
 *
 * Bounded and counted: a span is held from its end until its batch's export
 * settles, and past `maxQueueSize` spans held (waiting or being exported) a
 * new one is dropped at once. Every span added is counted exactly once, as
 * exported, or as dropped (the bound, a span that failed to write itself, or
 * an export that failed after the exporter's retries).
 */
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import type { EncodedSpans, EndedSpan, SpanBatchEncoder } from './span-batch-encoder.js';
import type { TelemetryStats } from './telemetry.js';

/** What ships an encoded batch: the official OTLP/HTTP export delegate (retries, timeout, headers), `otlp-telemetry.ts`. */
export interface EncodedSpanExporter {
  export(batch: EncodedSpans, resultCallback: (result: ExportResult) => void): void;
  shutdown(): Promise<void>;
}

export interface SpanExportQueue {
  add(span: EndedSpan): void;
  stats(): TelemetryStats;
  /** Ships what is batched now and waits for every export under way. */
  flush(): Promise<void>;
  /** Flushes, then shuts the exporter down; spans added later are dropped. */
  shutdown(): Promise<void>;
}

export interface SpanExportQueueOptions {
  maxQueueSize: number;
  maxBatchSize: number;
  scheduledDelayMs: number;
}

export function createSpanExportQueue(
  encoder: SpanBatchEncoder,
  exporter: EncodedSpanExporter,
  options: SpanExportQueueOptions,
): SpanExportQueue {
  let held = 0;
  let exported = 0;
  let dropped = 0;
  let stopped = false;
  let timer: NodeJS.Timeout | null = null;
  const exports = new Set<Promise<void>>();

  const ship = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
    const spanCount = encoder.spanCount;
    if (spanCount === 0) return;
    const batch = encoder.take();
    const settled = new Promise<void>((resolve) => {
      exporter.export(batch, (result) => {
        batch.release();
        held -= spanCount;
        if (result.code === ExportResultCode.SUCCESS) exported += spanCount;
        else dropped += spanCount;
        resolve();
      });
    });
    exports.add(settled);
    void settled.then(() => exports.delete(settled));
  };
  const flush = async () => {
    ship();
    await Promise.all(exports);
  };

  return {
    add(span) {
      if (stopped || held + span.spanCount > options.maxQueueSize) {
        dropped += span.spanCount;
        return;
      }
      const before = encoder.spanCount;
      try {
        span.writeTo(encoder);
      } catch {
        encoder.abandonSpan();
      }
      const written = encoder.spanCount - before;
      dropped += span.spanCount - written;
      held += written;
      if (written === 0) return;
      if (encoder.spanCount >= options.maxBatchSize) ship();
      else if (timer === null) timer = setTimeout(ship, options.scheduledDelayMs).unref();
    },
    stats: () => ({ exported, dropped, queued: held }),
    flush,
    async shutdown() {
      stopped = true;
      await flush();
      await exporter.shutdown();
    },
  };
}
