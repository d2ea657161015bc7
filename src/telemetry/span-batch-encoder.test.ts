/**
 * The span encoders against the official serializers of
 * `@opentelemetry/otlp-transformer`: the same spans, written through our
 * encoder and given to the official one as SDK spans, decode to the same
 * request, for both protocols (protobuf decoded with the full OTLP trace
 * schema, written here; JSON parsed).
 */
import { SpanKind, SpanStatusCode, type AttributeValue, type Attributes } from '@opentelemetry/api';
import { TraceState } from '@opentelemetry/core';
import { JsonTraceSerializer, ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import protobuf from 'protobufjs';
import { describe, expect, it } from 'vitest';
import { createJsonSpanEncoder } from './json-span-encoder.js';
import { createProtobufSpanEncoder } from './protobuf-span-encoder.js';
import { AttributeKey } from './span-attributes.js';
import { secondsAndNanos, type SpanBatchEncoder, type SpanHead, type SpanLink, type SpanSource, type SpanTail } from './span-batch-encoder.js';

const otlpSchema = protobuf.parse(`
syntax = "proto3";
message AnyValue { oneof value { string string_value = 1; bool bool_value = 2; int64 int_value = 3; double double_value = 4; ArrayValue array_value = 5; bytes bytes_value = 7; } }
message ArrayValue { repeated AnyValue values = 1; }
message KeyValue { string key = 1; AnyValue value = 2; }
message Resource { repeated KeyValue attributes = 1; uint32 dropped_attributes_count = 2; }
message InstrumentationScope { string name = 1; string version = 2; repeated KeyValue attributes = 3; uint32 dropped_attributes_count = 4; }
message Status { string message = 2; int32 code = 3; }
message Link { bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; repeated KeyValue attributes = 4; uint32 dropped_attributes_count = 5; fixed32 flags = 6; }
message Span {
  bytes trace_id = 1; bytes span_id = 2; string trace_state = 3; bytes parent_span_id = 4; string name = 5; int32 kind = 6;
  fixed64 start_time_unix_nano = 7; fixed64 end_time_unix_nano = 8; repeated KeyValue attributes = 9; uint32 dropped_attributes_count = 10;
  uint32 dropped_events_count = 12; repeated Link links = 13; uint32 dropped_links_count = 14; Status status = 15; fixed32 flags = 16;
}
message ScopeSpans { InstrumentationScope scope = 1; repeated Span spans = 2; string schema_url = 3; }
message ResourceSpans { Resource resource = 1; repeated ScopeSpans scope_spans = 2; string schema_url = 3; }
message ExportTraceServiceRequest { repeated ResourceSpans resource_spans = 1; }
`).root.lookupType('ExportTraceServiceRequest');

type OfficialSpan = Parameters<typeof ProtobufTraceSerializer.serializeRequest>[0][number];

/** A span as both sides take it. */
interface TestSpan {
  head: SpanHead;
  attributes: Attributes;
  tail: SpanTail;
}

const source: SpanSource = {
  resource: { 'service.name': 'taskgate', 'telemetry.sdk.language': 'nodejs', 'telemetry.sdk.version': '2.12.1' },
  scope: { name: 'taskgate' },
};

const traceId = '0af7651916cd43dd8448eb211c80319c';
const link: SpanLink = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7', traceFlags: 1, isRemote: true };

const spans: TestSpan[] = [
  {
    // A call continuing a caller's trace, with every kind of attribute value.
    head: { traceId, spanId: 'b7ad6b7169203331', parentSpanId: '53995c3f42cd8ad8', traceState: 'vendor=opaque,other=1', name: 'chat big', kind: SpanKind.SERVER, startTime: 1_764_000_000_123.456_7, endTime: 1_764_000_000_130.001 },
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'big',
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.usage.input_tokens': 12,
      'taskgate.cost_usd': 0.000_123,
      'taskgate.stream': false,
      'taskgate.note': 'héllo wörld ✓',
      'taskgate.long': 'x'.repeat(300),
      'taskgate.large': 2 ** 40 + 3,
      'taskgate.negative': -5,
      'taskgate.empty': [],
    },
    tail: { status: SpanStatusCode.UNSET, statusMessage: undefined, links: [], traceFlags: 1, parentIsRemote: true },
  },
  {
    // Its engine call, failed.
    head: { traceId, spanId: '1122334455667788', parentSpanId: 'b7ad6b7169203331', traceState: 'vendor=opaque,other=1', name: 'chat big', kind: SpanKind.CLIENT, startTime: 1_764_000_000_124, endTime: 1_764_000_000_129.5 },
    attributes: { 'error.type': 'engine_unavailable', 'taskgate.replica': 'local' },
    tail: { status: SpanStatusCode.ERROR, statusMessage: 'No engine answered in time.', links: [], traceFlags: 1, parentIsRemote: false },
  },
  {
    // A replay: a root span of its own trace, linked to the call.
    head: { traceId: 'ffeeddccbbaa99887766554433221100', spanId: '0102030405060708', parentSpanId: null, traceState: null, name: 'chat tiny', kind: SpanKind.CLIENT, startTime: 1_764_000_001_000, endTime: 1_764_000_001_250.25 },
    attributes: { 'taskgate.replay': true },
    tail: { status: SpanStatusCode.UNSET, statusMessage: undefined, links: [link], traceFlags: 1, parentIsRemote: false },
  },
];

function write(encoder: SpanBatchEncoder, span: TestSpan): void {
  encoder.beginSpan(span.head);
  for (const [name, value] of Object.entries(span.attributes)) encoder.attribute(new AttributeKey(name), value as AttributeValue);
  encoder.endSpan(span.tail);
}

/** One resource object for every span: the official serializer groups spans by the resource's identity. */
const officialResource = { attributes: source.resource } as unknown as OfficialSpan['resource'];

function official(span: TestSpan): OfficialSpan {
  const time = (epochMilliseconds: number) => secondsAndNanos(epochMilliseconds);
  const { head, tail } = span;
  return {
    name: head.name,
    kind: head.kind,
    spanContext: () => ({ traceId: head.traceId, spanId: head.spanId, traceFlags: tail.traceFlags, ...(head.traceState === null ? {} : { traceState: new TraceState(head.traceState) }) }),
    ...(head.parentSpanId === null ? {} : { parentSpanContext: { traceId: head.traceId, spanId: head.parentSpanId, traceFlags: tail.traceFlags, isRemote: tail.parentIsRemote } }),
    startTime: time(head.startTime),
    endTime: time(head.endTime),
    duration: [0, 0],
    ended: true,
    status: { code: tail.status, ...(tail.statusMessage === undefined ? {} : { message: tail.statusMessage }) },
    attributes: span.attributes,
    links: tail.links.map(({ traceId: linkedTrace, spanId, traceFlags, isRemote }) => ({ context: { traceId: linkedTrace, spanId, traceFlags, isRemote } })),
    events: [],
    resource: officialResource,
    instrumentationScope: source.scope,
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  } as OfficialSpan;
}

const decodeProtobuf = (body: Uint8Array) => otlpSchema.toObject(otlpSchema.decode(body), { longs: String, bytes: String, defaults: true });
const decodeJson = (body: Uint8Array) => JSON.parse(Buffer.from(body).toString('utf8')) as unknown;

/** The spans of a decoded request (one resource, one scope). */
function spansIn(request: unknown): unknown[] {
  const { resourceSpans } = request as { resourceSpans: Array<{ scopeSpans: Array<{ spans?: unknown[] }> }> };
  return resourceSpans.flatMap((resource) => resource.scopeSpans.flatMap((scope) => scope.spans ?? []));
}

const protocols = [
  { name: 'http/protobuf', create: createProtobufSpanEncoder, reference: ProtobufTraceSerializer, decode: decodeProtobuf },
  { name: 'http/json', create: createJsonSpanEncoder, reference: JsonTraceSerializer, decode: decodeJson },
];

describe.each(protocols)('the $name span encoder', ({ create, reference, decode }) => {
  it('writes the request the official serializer makes from the same spans', () => {
    const encoder = create(source);
    for (const span of spans) write(encoder, span);
    expect(encoder.spanCount).toBe(3);
    const batch = encoder.take();
    expect(batch.spanCount).toBe(3);
    expect(decode(batch.body)).toEqual(decode(reference.serializeRequest(spans.map(official)) as Uint8Array));
    expect(encoder.spanCount).toBe(0);
  });

  it('starts a new batch after each take, and leaves a batch not yet released intact', () => {
    const encoder = create(source);
    write(encoder, spans[0] as TestSpan);
    const first = encoder.take();
    const firstBytes = Buffer.from(first.body);
    write(encoder, spans[1] as TestSpan);
    write(encoder, spans[2] as TestSpan);
    const second = encoder.take();
    expect(Buffer.from(first.body).equals(firstBytes)).toBe(true);
    expect(decode(second.body)).toEqual(decode(reference.serializeRequest(spans.slice(1).map(official)) as Uint8Array));
    // A released buffer is written again: the next batch is whole.
    first.release();
    second.release();
    write(encoder, spans[2] as TestSpan);
    expect(decode(encoder.take().body)).toEqual(decode(reference.serializeRequest([official(spans[2] as TestSpan)]) as Uint8Array));
  });

  it('forgets a span abandoned half-written', () => {
    const encoder = create(source);
    write(encoder, spans[0] as TestSpan);
    encoder.beginSpan((spans[1] as TestSpan).head);
    encoder.attribute(new AttributeKey('half'), 'written');
    encoder.abandonSpan();
    write(encoder, spans[2] as TestSpan);
    expect(encoder.spanCount).toBe(2);
    expect(decode(encoder.take().body)).toEqual(decode(reference.serializeRequest([spans[0], spans[2]].map((span) => official(span as TestSpan))) as Uint8Array));
  });

  it('writes a whole request with no span when nothing was written', () => {
    const encoder = create(source);
    expect(spansIn(decode(encoder.take().body))).toEqual([]);
    write(encoder, spans[0] as TestSpan);
    expect(spansIn(decode(encoder.take().body))).toHaveLength(1);
  });

  it('fills batches larger than a buffer, with spans over 16 KiB', () => {
    const encoder = create(source);
    const big: TestSpan = { ...(spans[1] as TestSpan), attributes: { 'taskgate.body': 'y'.repeat(20_000) } };
    const batch = [...Array.from({ length: 200 }, () => spans[0] as TestSpan), big];
    for (const span of batch) write(encoder, span);
    expect(decode(encoder.take().body)).toEqual(decode(reference.serializeRequest(batch.map(official)) as Uint8Array));
  });
});

describe('secondsAndNanos', () => {
  it('splits epoch milliseconds into seconds and nanoseconds exactly', () => {
    for (const milliseconds of [0, 1, 999.999_999, 1_764_000_000_123.456, 1_764_000_000_999.999_9, 4_102_444_800_000.25]) {
      const [seconds, nanoseconds] = secondsAndNanos(milliseconds);
      expect(Number.isInteger(seconds) && Number.isInteger(nanoseconds)).toBe(true);
      expect(nanoseconds).toBeGreaterThanOrEqual(0);
      expect(nanoseconds).toBeLessThan(1e9);
      expect(Math.abs(seconds * 1000 + nanoseconds / 1e6 - milliseconds)).toBeLessThan(1e-3);
    }
  });
});
