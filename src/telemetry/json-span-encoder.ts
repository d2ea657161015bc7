/**
 * `http/json`: spans in the OTLP JSON mapping (ids as hex, times as decimal
 * strings of nanoseconds, enums as numbers), written as they end
 * (`span-batch-encoder.ts`): a span's text is built whole and then written,
 * as UTF-8, into the batch buffer, which starts with the request's resource
 * and scope and which `take` closes.
 */
import type { AttributeValue } from '@opentelemetry/api';
import { ProtobufWriter } from './protobuf-writer.js';
import { AttributeKey } from './span-attributes.js';
import { spanIdHex, traceIdHex } from './span-ids.js';
import {
  createBatchBuffers,
  otlpSpanKind,
  secondsAndNanos,
  spanFlags,
  type SpanBatchEncoder,
  type SpanLink,
  type SpanSource,
} from './span-batch-encoder.js';

export function createJsonSpanEncoder(source: SpanSource): SpanBatchEncoder {
  const buffers = createBatchBuffers();
  const writer = new ProtobufWriter(buffers.next());
  let spanCount = 0;
  /** The span being written, and whether it has an attribute yet. */
  let span = '';
  let attributeWritten = false;

  const resourceAttributes = Object.entries(source.resource)
    .flatMap(([name, value]) => (value === undefined ? [] : [`${new AttributeKey(name).jsonPrefix}${anyValue(value)}}`]))
    .join(',');
  const frame = JSON.stringify({
    resourceSpans: [{ resource: { attributes: [], droppedAttributesCount: 0 }, scopeSpans: [{ scope: source.scope, spans: [] }] }],
  });
  // The request around the spans: `{"resourceSpans":[…"spans":[` and `]}]}]}`.
  const [head, tail] = frame.replace('"attributes":[]', `"attributes":[${resourceAttributes}]`).split('"spans":[]') as [string, string];
  const opening = `${head}"spans":[`;
  const closing = `]${tail}`;
  const attribute = (key: AttributeKey, value: AttributeValue) => {
    span += `${attributeWritten ? ',' : ''}${key.jsonPrefix}${anyValue(value)}}`;
    attributeWritten = true;
  };

  return {
    get spanCount() {
      return spanCount;
    },
    beginSpan(head) {
      span =
        `${spanCount === 0 ? opening : ','}{"traceId":"${traceIdHex(head.traceId)}","spanId":"${spanIdHex(head.spanId)}"` +
        (head.parentSpanId === null ? '' : `,"parentSpanId":"${spanIdHex(head.parentSpanId)}"`) +
        (head.traceState === null ? '' : `,"traceState":${JSON.stringify(head.traceState)}`) +
        `,"name":${JSON.stringify(head.name)},"kind":${otlpSpanKind(head.kind)}` +
        `,"startTimeUnixNano":"${nanoseconds(head.startTime)}","endTimeUnixNano":"${nanoseconds(head.endTime)}","attributes":[`;
      attributeWritten = false;
    },
    attribute,
    attributes({ keys, values }) {
      for (let index = 0; index < keys.length; index++) {
        const value = values[index];
        if (value !== undefined) attribute(keys[index] as AttributeKey, value);
      }
    },
    endSpan(tail) {
      span +=
        '],"droppedAttributesCount":0,"events":[],"droppedEventsCount":0' +
        `,"status":{"code":${tail.status}${tail.statusMessage === undefined ? '' : `,"message":${JSON.stringify(tail.statusMessage)}`}}` +
        `,"links":[${tail.links.map(link).join(',')}],"droppedLinksCount":0,"flags":${spanFlags(tail.traceFlags, tail.parentIsRemote)}}`;
      writer.text(span);
      span = '';
      spanCount += 1;
    },
    abandonSpan() {
      span = '';
    },
    take() {
      if (spanCount === 0) writer.text(opening);
      writer.text(closing);
      const encoded = buffers.encoded(writer.handOver(0, buffers.next()), spanCount);
      spanCount = 0;
      return encoded;
    },
  };
}

function link(linked: SpanLink): string {
  return `{"attributes":[],"spanId":"${linked.spanId}","traceId":"${linked.traceId}","droppedAttributesCount":0,"flags":${spanFlags(linked.traceFlags, linked.isRemote)}}`;
}

function anyValue(value: AttributeValue | null | undefined): string {
  switch (typeof value) {
    case 'string':
      return `{"stringValue":${JSON.stringify(value)}}`;
    case 'boolean':
      return `{"boolValue":${value}}`;
    case 'number':
      return Number.isInteger(value) ? `{"intValue":${value}}` : `{"doubleValue":${JSON.stringify(value)}}`;
    default:
      return Array.isArray(value) ? `{"arrayValue":{"values":[${value.map(anyValue).join(',')}]}}` : '{}';
  }
}

/** Epoch milliseconds as the decimal string of nanoseconds, exactly. */
function nanoseconds(epochMilliseconds: number): string {
  const [seconds, nanos] = secondsAndNanos(epochMilliseconds);
  return seconds === 0 ? String(nanos) : `${seconds}${String(nanos).padStart(9, '0')}`;
}
