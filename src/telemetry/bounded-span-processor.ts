/**
 * The SDK's BatchSpanProcessor behind a bound of our own that counts: a span
 * is held from its end until its batch's export settles, and past
 * `maxQueueSize` spans held (waiting or being exported) a new one is dropped
 * at once. Since the batch processor's own queue never holds more than we
 * do, it never drops silently; every ended span is counted exactly once, as
 * exported, or as dropped (queue full, or its export failed after the
 * exporter's retries).
 */
import { type Context, TraceFlags } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { BatchSpanProcessor, type ReadableSpan, type Span, type SpanExporter, type SpanProcessor } from '@opentelemetry/sdk-trace-base';
import type { TelemetryStats } from './telemetry.js';

export interface BoundedSpanProcessor extends SpanProcessor {
  stats(): TelemetryStats;
}

export function createBoundedSpanProcessor(exporter: SpanExporter, options: { maxQueueSize: number; scheduledDelayMs: number; exportTimeoutMs: number }): BoundedSpanProcessor {
  let held = 0;
  let exported = 0;
  let dropped = 0;
  const counting: SpanExporter = {
    export(spans, resultCallback) {
      exporter.export(spans, (result: ExportResult) => {
        held -= spans.length;
        if (result.code === ExportResultCode.SUCCESS) exported += spans.length;
        else dropped += spans.length;
        resultCallback(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: () => exporter.forceFlush?.() ?? Promise.resolve(),
  };
  const batch = new BatchSpanProcessor(counting, {
    maxQueueSize: options.maxQueueSize,
    maxExportBatchSize: Math.min(512, options.maxQueueSize),
    scheduledDelayMillis: options.scheduledDelayMs,
    exportTimeoutMillis: options.exportTimeoutMs,
  });
  return {
    onStart(span: Span, context: Context) {
      batch.onStart(span, context);
    },
    onEnd(span: ReadableSpan) {
      if ((span.spanContext().traceFlags & TraceFlags.SAMPLED) === 0) return;
      if (held >= options.maxQueueSize) {
        dropped += 1;
        return;
      }
      held += 1;
      batch.onEnd(span);
    },
    forceFlush: () => batch.forceFlush(),
    shutdown: () => batch.shutdown(),
    stats: () => ({ exported, dropped, queued: held }),
  };
}
