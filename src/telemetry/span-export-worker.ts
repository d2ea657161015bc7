/**
 * The span worker: a thread of its own that turns the records the request
 * thread leaves in the shared ring (`span-record.ts`) into OTLP spans and
 * ships them (`span-export-queue.ts` and the official OTLP/HTTP export
 * delegate). `otlp-telemetry.ts` starts it; this file is its entry.
 *
 * Why a thread: on a saturated gateway, writing a call's two spans into the
 * export batch cost the request thread far more than the same code costs in
 * a loop (its code and the batch buffer push the call's own out of the CPU's
 * caches: docs/telemetry.md has the measurements). Here the spans of
 * hundreds of calls are written in one pass, on another core, and the
 * request thread only leaves a short record.
 *
 * It drains the ring every `DRAIN_INTERVAL_MS` while records keep coming, and
 * sleeps until the next record otherwise. Its counters (exported, dropped,
 * queued) are shared with the request thread, which reads them for
 * `/metrics`. Messages: `flush` (write and export everything, then answer)
 * and `shutdown` (the same, then stop the exporter and end).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { parentPort, workerData } from 'node:worker_threads';
import { OTLPExporterBase } from '@opentelemetry/otlp-exporter-base';
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from '@opentelemetry/otlp-exporter-base/node-http';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { createJsonSpanEncoder } from './json-span-encoder.js';
import { createProtobufSpanEncoder } from './protobuf-span-encoder.js';
import { RecordRingReader } from './record-ring.js';
import type { EncodedSpans, EndedSpan, SpanSource } from './span-batch-encoder.js';
import { createSpanExportQueue } from './span-export-queue.js';
import { createSpanIdSource } from './span-ids.js';
import { createSpanRecord, createStringSlots, readSpanRecord } from './span-record.js';
import { createSpanWriters } from './span-writers.js';
import { Counter, type SpanWorkerData, type ToSpanWorker } from './span-worker-protocol.js';
import type { TelemetrySettings } from './telemetry.js';

/** How long one export may take, retries included, before it counts as failed (its spans dropped). */
const EXPORT_TIMEOUT_MS = 10_000;
/** Spans held at once, waiting or being exported; past it new spans are dropped and counted. */
const MAX_QUEUE_SIZE = 8192;
/** Spans per export request. */
const MAX_BATCH_SIZE = 2048;
/** Longest a span waits for its batch (a full batch goes at once). */
const SCHEDULED_DELAY_MS = 1000;
/** Between two drains of the ring while records keep coming. */
const DRAIN_INTERVAL_MS = 100;
/** The longest sleep with nothing to do (a commit wakes it sooner). */
const IDLE_WAKE_MS = 1000;

const data = workerData as SpanWorkerData;
const port = parentPort;
if (port === null) throw new Error('span-export-worker.ts runs as a worker thread (otlp-telemetry.ts starts it)');

const json = data.settings.protocol === 'http/json';
const source: SpanSource = {
  resource: defaultResource().merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: data.settings.serviceName })).attributes,
  scope: { name: 'taskgate' },
};
const queue = createSpanExportQueue(
  json ? createJsonSpanEncoder(source) : createProtobufSpanEncoder(source),
  createExporter(data.settings, json),
  {
    maxQueueSize: MAX_QUEUE_SIZE,
    maxBatchSize: MAX_BATCH_SIZE,
    scheduledDelayMs: SCHEDULED_DELAY_MS,
  },
);
const counters = new Int32Array(data.counters);
const reader = new RecordRingReader(data.ring);
const slots = createStringSlots();
const record = createSpanRecord();
const writers = createSpanWriters(createSpanIdSource(), new Map(data.engineTypes));
/** The record just read, as the export queue takes a span. */
const ended: EndedSpan = {
  get spanCount() {
    return writers.spanCount(record);
  },
  writeTo: (encoder) => writers.write(encoder, record),
};
let stopping = false;
let spansRead = 0;

function drain(): number {
  const count = reader.drain((ring) => {
    readSpanRecord(ring, slots, record);
    spansRead += ended.spanCount;
    queue.add(ended);
  });
  publish();
  return count;
}

function publish(): void {
  const { exported, dropped, queued } = queue.stats();
  Atomics.store(counters, Counter.Read, spansRead);
  Atomics.store(counters, Counter.Exported, exported);
  Atomics.store(counters, Counter.Dropped, dropped);
  Atomics.store(counters, Counter.Queued, queued);
}

async function run(): Promise<void> {
  while (!stopping) {
    if (drain() > 0) await sleep(DRAIN_INTERVAL_MS);
    else await reader.sleep(IDLE_WAKE_MS);
  }
}

port.on('message', (message: ToSpanWorker) => {
  void (async () => {
    if (message.type === 'shutdown') stopping = true;
    drain();
    await (message.type === 'shutdown' ? queue.shutdown() : queue.flush());
    publish();
    port.postMessage({ type: message.type === 'shutdown' ? 'stopped' : 'flushed', id: message.id });
    if (message.type === 'shutdown') port.close();
  })();
});

void run();

/**
 * The official OTLP/HTTP export delegate (what `@opentelemetry/exporter-trace-otlp-*`
 * are made of), shipping the bodies our encoders made; responses (partial
 * success) are read by the official deserializers.
 */
function createExporter(settings: TelemetrySettings, useJson: boolean): OTLPExporterBase<EncodedSpans> {
  const configuration = convertLegacyHttpOptions(
    { url: settings.tracesUrl, headers: settings.headers, timeoutMillis: EXPORT_TIMEOUT_MS },
    'TRACES',
    'v1/traces',
    {
      'Content-Type': useJson ? 'application/json' : 'application/x-protobuf',
    },
  );
  const responses = useJson ? JsonTraceSerializer : ProtobufTraceSerializer;
  const serializer = {
    serializeRequest: (batch: EncodedSpans) => batch.body,
    deserializeResponse: (body: Uint8Array) => responses.deserializeResponse(body),
  };
  const counter = { name: 'span' as const, countItems: (batch: EncodedSpans) => batch.spanCount };
  return new OTLPExporterBase(createOtlpHttpExportDelegate(configuration, serializer, 'otlp_http_span_exporter', counter, undefined));
}
