/**
 * `http/protobuf`: spans as OTLP protobuf (opentelemetry-proto
 * `collector/trace/v1`), written as they end (`span-batch-encoder.ts`).
 *
 * A batch buffer holds the spans as `ScopeSpans.spans` entries after room
 * left for the frame; `take` writes the frame (the resource and the scope,
 * encoded once, and the lengths) into that room, right before the spans, so
 * the request body is one view of the buffer. Attribute keys come encoded
 * (`span-attributes.ts`) and are copied.
 */
import type { AttributeValue } from '@opentelemetry/api';
import { ProtobufWriter, varintSize } from './protobuf-writer.js';
import { AttributeKey, type AttributeGroup } from './span-attributes.js';
import { parseSpanId, parseTraceId, type SpanId, type TraceId } from './span-ids.js';
import {
  createBatchBuffers,
  otlpSpanKind,
  secondsAndNanos,
  spanFlags,
  type SpanBatchEncoder,
  type SpanSource,
} from './span-batch-encoder.js';

export function createProtobufSpanEncoder(source: SpanSource): SpanBatchEncoder {
  const buffers = createBatchBuffers();
  const writer = new ProtobufWriter(buffers.next());
  let spanCount = 0;
  /** Where the span being written starts (its tag), and its content (for its length). */
  let spanMark = 0;
  let spanStart = 0;

  // KeyValue { key = 1, value = 2: AnyValue } as the repeated field `field`.
  const keyValue = (field: number, key: AttributeKey, value: AttributeValue) => {
    writer.tag(field, 2);
    const pair = writer.begin();
    writer.raw(key.protobuf);
    writer.tag(2, 2);
    const any = writer.begin();
    anyValue(value);
    writer.end(any);
    writer.end(pair);
  };
  const anyValue = (value: AttributeValue | null | undefined): void => {
    if (typeof value === 'string') {
      writer.tag(1, 2);
      writer.string(value);
    } else if (typeof value === 'boolean') {
      writer.tag(2, 0);
      writer.varint(value ? 1 : 0);
    } else if (typeof value === 'number') {
      if (Number.isInteger(value) && value >= -(2 ** 63) && value < 2 ** 63) {
        writer.tag(3, 0);
        writer.varint(value);
      } else {
        writer.tag(4, 1);
        writer.double(value);
      }
    } else if (Array.isArray(value)) {
      writer.tag(5, 2);
      const array = writer.begin();
      for (const item of value) {
        writer.tag(1, 2);
        const element = writer.begin();
        anyValue(item);
        writer.end(element);
      }
      writer.end(array);
    }
  };
  const time = (field: number, epochMilliseconds: number) => {
    writer.tag(field, 1);
    const [seconds, nanoseconds] = secondsAndNanos(epochMilliseconds);
    writer.fixed64Nanoseconds(seconds, nanoseconds);
  };
  // Span.trace_id = 1 and span_id = 2 (as Link's): 16 and 8 bytes, most significant first.
  const ids = (traceId: TraceId, spanId: SpanId) => {
    writer.tag(1, 2);
    writer.varint(16);
    writer.word(traceId.w0);
    writer.word(traceId.w1);
    writer.word(traceId.w2);
    writer.word(traceId.w3);
    spanIdField(2, spanId);
  };
  const spanIdField = (field: number, spanId: SpanId) => {
    writer.tag(field, 2);
    writer.varint(8);
    writer.word(spanId.high);
    writer.word(spanId.low);
  };
  // proto3 may leave zero scalars out; the official serializer writes the dropped counts always, and so do we.
  const scalar = (field: number, value: number) => {
    writer.tag(field, 0);
    writer.varint(value);
  };
  /** A length-delimited field whose content `write` writes (the frame's parts, once). */
  const message = (field: number, write: () => void) => {
    writer.tag(field, 2);
    const start = writer.begin();
    write();
    writer.end(start);
  };

  /** The last span name written, and its field's bytes (a run of calls on one model shares its name). */
  let lastName = '';
  let lastNameField: Buffer = Buffer.alloc(0);
  /** The tails of spans without a status message or links, by status and flags. */
  const plainTails = new Map<number, Buffer>();
  /** Each group's last values and the bytes they were written as, copied whole when the values repeat. */
  const lastWritten = new Map<AttributeGroup, { values: (AttributeValue | undefined)[]; bytes: Buffer }>();

  // ResourceSpans.resource and ScopeSpans.scope, with their tags and lengths: the same in every request.
  message(1, () => {
    for (const [name, value] of Object.entries(source.resource)) if (value !== undefined) keyValue(1, new AttributeKey(name), value);
    scalar(2, 0);
  });
  const resourceField = writer.takeFrom(0);
  message(1, () => {
    writer.tag(1, 2);
    writer.string(source.scope.name);
    if (source.scope.version) {
      writer.tag(2, 2);
      writer.string(source.scope.version);
    }
  });
  const scopeField = writer.takeFrom(0);
  // The frame's room: the parts above, two tags and two lengths (five bytes each at most), and the first tag's.
  const frameRoom = resourceField.length + scopeField.length + 3 + 2 * 5;

  return {
    get spanCount() {
      return spanCount;
    },
    beginSpan(head) {
      if (spanCount === 0) writer.position = frameRoom;
      spanMark = writer.position;
      // Span { trace_id = 1, span_id = 2, trace_state = 3, parent_span_id = 4, name = 5, kind = 6, start = 7, end = 8, attributes = 9… }
      writer.tag(2, 2);
      spanStart = writer.begin();
      ids(head.traceId, head.spanId);
      if (head.traceState) {
        writer.tag(3, 2);
        writer.string(head.traceState);
      }
      if (head.parentSpanId !== null) spanIdField(4, head.parentSpanId);
      if (head.name !== lastName) {
        lastName = head.name;
        const start = writer.position;
        writer.tag(5, 2);
        writer.string(head.name);
        lastNameField = writer.copyFrom(start);
      } else writer.raw(lastNameField);
      scalar(6, otlpSpanKind(head.kind));
      time(7, head.startTime);
      time(8, head.endTime);
    },
    attribute(key, value) {
      keyValue(9, key, value);
    },
    attributes(group) {
      const { keys, values } = group;
      const last = lastWritten.get(group);
      if (last !== undefined && sameValues(last.values, values)) {
        writer.raw(last.bytes);
        return;
      }
      const start = writer.position;
      for (let index = 0; index < keys.length; index++) {
        const value = values[index];
        if (value !== undefined) keyValue(9, keys[index] as AttributeKey, value);
      }
      lastWritten.set(group, {
        values: values.map((value) => (Array.isArray(value) ? value.slice() : value)),
        bytes: writer.copyFrom(start),
      });
    },
    endSpan(tail) {
      // …dropped_attributes_count = 10, dropped_events_count = 12, links = 13, dropped_links_count = 14, status = 15, flags = 16 }
      // Without a message or links (most spans) the tail is one of a few byte strings, written once each.
      const plain = tail.statusMessage === undefined && tail.links.length === 0;
      const tailKey = plain ? tail.status * 0x10000 + spanFlags(tail.traceFlags, tail.parentIsRemote) : -1;
      const known = plainTails.get(tailKey);
      if (known !== undefined) {
        writer.raw(known);
        writer.end(spanStart);
        spanCount += 1;
        return;
      }
      const tailStart = writer.position;
      scalar(10, 0);
      scalar(12, 0);
      for (const link of tail.links) {
        writer.tag(13, 2);
        const start = writer.begin();
        ids(parseTraceId(link.traceId), parseSpanId(link.spanId));
        scalar(5, 0);
        writer.tag(6, 5);
        writer.fixed32(spanFlags(link.traceFlags, link.isRemote));
        writer.end(start);
      }
      scalar(14, 0);
      writer.tag(15, 2);
      const status = writer.begin();
      if (tail.statusMessage) {
        writer.tag(2, 2);
        writer.string(tail.statusMessage);
      }
      scalar(3, tail.status);
      writer.end(status);
      writer.tag(16, 5);
      writer.fixed32(spanFlags(tail.traceFlags, tail.parentIsRemote));
      if (plain) plainTails.set(tailKey, writer.copyFrom(tailStart));
      writer.end(spanStart);
      spanCount += 1;
    },
    abandonSpan() {
      writer.position = spanMark;
    },
    take() {
      if (spanCount === 0) writer.position = frameRoom;
      // ExportTraceServiceRequest { resource_spans = 1: ResourceSpans { resource = 1, scope_spans = 2: ScopeSpans { scope = 1, spans = 2… } } }
      const end = writer.position;
      const scopeSpansLength = scopeField.length + (end - frameRoom);
      const resourceSpansLength = resourceField.length + 1 + varintSize(scopeSpansLength) + scopeSpansLength;
      const start =
        frameRoom - (1 + varintSize(resourceSpansLength) + resourceField.length + 1 + varintSize(scopeSpansLength) + scopeField.length);
      writer.position = start;
      writer.tag(1, 2);
      writer.varint(resourceSpansLength);
      writer.raw(resourceField);
      writer.tag(2, 2);
      writer.varint(scopeSpansLength);
      writer.raw(scopeField);
      writer.position = end;
      const encoded = buffers.encoded(writer.handOver(start, buffers.next()), spanCount);
      spanCount = 0;
      return encoded;
    },
  };
}

/** Whether two groups' values are the same: equal primitives, or arrays of equal primitives. */
function sameValues(last: readonly (AttributeValue | undefined)[], values: readonly (AttributeValue | undefined)[]): boolean {
  for (let index = 0; index < values.length; index++) {
    const before = last[index];
    const now = values[index];
    if (before === now) continue;
    if (!Array.isArray(before) || !Array.isArray(now) || before.length !== now.length) return false;
    for (let item = 0; item < now.length; item++) if (before[item] !== now[item]) return false;
  }
  return true;
}
