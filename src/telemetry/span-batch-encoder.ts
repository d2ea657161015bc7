/**
 * The contract between taskgate's spans and the wire: a span is written the
 * moment it ends, straight into a batch of bytes (`beginSpan`, its
 * attributes, `endSpan`), and the batch becomes one OTLP/HTTP export request
 * body (`ExportTraceServiceRequest`: one resource, one instrumentation scope)
 * when it is taken.
 *
 * Why not the SDK's span objects and the exporter's own serializer: an SDK
 * span is a large object whose every attribute is validated as it is set,
 * and it is kept until its batch ships (up to a second, long enough to be
 * promoted out of V8's young generation at thousands of calls a second),
 * when the stock serializer walks it twice (sizing, then writing) through
 * attribute objects of many shapes. Measured in `npm run bench`, that cost
 * 44 µs a call where the whole call costs about 170 (`docs/telemetry.md`
 * has the figures). Here a span writes its fields and its attributes (keys
 * encoded once, a group of attributes that repeat from span to span copied
 * as bytes, `span-attributes.ts`) into a reused buffer, with no object in
 * between. It runs in the span worker (`span-export-worker.ts`), off the
 * request thread. The bytes decode to the request the official serializers make
 * from the same span, field for field (`span-batch-encoder.test.ts`).
 *
 * Two encodings: `http/protobuf` (`protobuf-span-encoder.ts`) and the OTLP
 * JSON mapping for `http/json` (`json-span-encoder.ts`).
 */
import type { AttributeValue, Attributes, SpanKind, SpanStatusCode } from '@opentelemetry/api';
import type { AttributeGroup, AttributeKey } from './span-attributes.js';
import type { SpanId, TraceId } from './span-ids.js';

/** What a span starts with. Times are epoch milliseconds (fractional: microseconds and below). */
export interface SpanHead {
  traceId: TraceId;
  spanId: SpanId;
  /** The parent's span id; null for a root span. */
  parentSpanId: SpanId | null;
  /** The caller's W3C `tracestate`, carried by its trace's spans; null when none. */
  traceState: string | null;
  name: string;
  kind: SpanKind;
  startTime: number;
  endTime: number;
}

/** What a span ends with. */
export interface SpanTail {
  status: SpanStatusCode;
  /** The error's message, with status ERROR. */
  statusMessage: string | undefined;
  links: readonly SpanLink[];
  /** W3C trace flags (bit 0: sampled). */
  traceFlags: number;
  /** Whether the parent is the caller's (continued from its `traceparent`), not a span of ours. */
  parentIsRemote: boolean;
}

/** A link to a span of another trace (a replay's to the call it replays), ids in hex as the router's origins carry them. */
export interface SpanLink {
  traceId: string;
  spanId: string;
  traceFlags: number;
  isRemote: boolean;
}

/** Who made the spans: the resource (`service.name`, `telemetry.sdk.*`) and the instrumentation scope. */
export interface SpanSource {
  resource: Attributes;
  scope: { name: string; version?: string };
}

export interface SpanBatchEncoder {
  /** Spans written since the last `take`. */
  readonly spanCount: number;
  /** Starts writing a span; its attributes follow, then `endSpan`. */
  beginSpan(head: SpanHead): void;
  /** One attribute of the span begun (each key at most once). */
  attribute(key: AttributeKey, value: AttributeValue): void;
  /**
   * The group's attributes whose values are set (`undefined`: left out),
   * each key at most once per span. Their values mostly repeat from one call
   * to the next, so an encoder may write a repeat as one copy of the bytes
   * it wrote last time.
   */
  attributes(group: AttributeGroup): void;
  endSpan(tail: SpanTail): void;
  /** Forgets the span begun, as if it had not been (its writer failed). */
  abandonSpan(): void;
  /** The whole export request for the batch's spans, and a new empty batch. */
  take(): EncodedSpans;
}

/**
 * What the export queue asks of a span that ended: to write itself
 * (`beginSpan`, attributes, `endSpan`), with the children that ended before
 * it (a call's engine spans, written in the same pass).
 */
export interface EndedSpan {
  /** How many spans `writeTo` writes. */
  readonly spanCount: number;
  writeTo(encoder: SpanBatchEncoder): void;
}

/** An encoded batch on its way to the collector. */
export interface EncodedSpans {
  body: Uint8Array;
  spanCount: number;
  /** Gives the body's buffer back for a later batch: called once its export has settled. */
  release(): void;
}

/** Bytes a new batch buffer starts with (it grows to fit its batch, and is reused at that size). */
const BATCH_BUFFER_BYTES = 64 * 1024;

/**
 * The buffers batches are written in: one is being written while others are
 * being exported, and each comes back when its export settles, so a steady
 * stream of batches allocates nothing (no per-batch copy or fresh pages).
 */
export function createBatchBuffers(): { next(): Buffer; encoded(body: Buffer, spanCount: number): EncodedSpans } {
  const free: Buffer[] = [];
  return {
    next: () => free.pop() ?? Buffer.allocUnsafe(BATCH_BUFFER_BYTES),
    // A buffer this large has an ArrayBuffer of its own (Node pools only small ones): the view of all of it is the buffer itself.
    encoded: (body, spanCount) => ({ body, spanCount, release: () => free.push(Buffer.from(body.buffer)) }),
  };
}

/** OTLP's `Span.flags` (and `Link.flags`): the W3C trace flags, and whether the parent is remote (bit 8 says bit 9 is known). */
export function spanFlags(traceFlags: number, isRemote: boolean): number {
  return (traceFlags & 0xff) | 0x100 | (isRemote ? 0x200 : 0);
}

/** OTLP's `SpanKind`: the API's kind plus one (0 is UNSPECIFIED). */
export function otlpSpanKind(kind: SpanKind): number {
  return kind + 1;
}

/** Epoch milliseconds as whole seconds and nanoseconds (below 10^9), exactly to the nanosecond the float holds. */
export function secondsAndNanos(epochMilliseconds: number): [seconds: number, nanoseconds: number] {
  const milliseconds = Math.floor(epochMilliseconds);
  const seconds = Math.floor(milliseconds / 1000);
  const nanoseconds = (milliseconds - seconds * 1000) * 1_000_000 + Math.round((epochMilliseconds - milliseconds) * 1_000_000);
  // The fraction can round up to a whole second.
  return nanoseconds < 1_000_000_000 ? [seconds, nanoseconds] : [seconds + 1, nanoseconds - 1_000_000_000];
}
